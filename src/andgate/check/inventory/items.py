"""The trust inventory: every collected item with its class, why, and outcome.

Each process reports the items it collected; the oracle items come from the
oracle process (trusted tree), property items from the property process, and
everything else from the untrusted process, which collects all of head.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable

from andgate.plugin.classify import freeze_keys, path_stem
from andgate.process.results import RunResult
from andgate.records import InventoryRecord, TrustClass

COUNT_KEYS = tuple(c.value for c in TrustClass)


def build_inventory(
    untrusted: RunResult | None,
    oracle: RunResult | None,
    prop: RunResult | None,
    flake: RunResult | None,
) -> list[InventoryRecord]:
    records: dict[str, InventoryRecord] = {}
    if untrusted:
        for item in untrusted.items:
            outcome = (
                untrusted.outcome(item.facts.nodeid).value if item.cls == "untrusted" else None
            )
            records[item.facts.nodeid] = InventoryRecord(item.facts, item.cls, item.why, outcome)
    for run, cls in ((oracle, "oracle"), (prop, "property"), (flake, "frozen_flake")):
        if not run:
            continue
        for item in run.selected(cls):
            outcome = run.outcome(item.facts.nodeid).value
            records[item.facts.nodeid] = InventoryRecord(item.facts, item.cls, item.why, outcome)
    return sorted(records.values(), key=lambda r: r.facts.nodeid)


def oracle_holders(records: Iterable[InventoryRecord], base_oracle: RunResult | None) -> set[str]:
    """Files that held an oracle item on head or on base (for oracle markers)."""
    holders = {r.facts.path for r in records if r.cls == TrustClass.ORACLE}
    if base_oracle is not None:
        holders |= {i.facts.path for i in base_oracle.selected(TrustClass.ORACLE)}
    return holders


def counts(records: Iterable[InventoryRecord]) -> dict[str, int]:
    tally = Counter(r.cls for r in records)
    return {key: tally.get(key, 0) for key in COUNT_KEYS}


def ineffective_freezes(freeze_ids: Iterable[str], records: list[InventoryRecord]) -> list[str]:
    """Live freezes that freeze nothing, with why (FREEZE_INEFFECTIVE warnings)."""
    freeze_ids = list(freeze_ids)
    if not freeze_ids:
        return []
    classes_of = _classes_by_freeze_key(records)
    out = []
    for freeze_id in freeze_ids:
        classes = classes_of.get(freeze_id)
        if not classes:
            out.append(f"freeze {freeze_id!r} matches no collected test")
        elif "frozen_flake" not in classes:
            out.append(
                f"freeze {freeze_id!r} matches only {', '.join(sorted(classes))} items; "
                "it freezes nothing"
            )
    return out


def _classes_by_freeze_key(records: Iterable[InventoryRecord]) -> dict[str, set[str]]:
    """Every id a freeze can name an item by -> the classes of the items it names.

    One pass over the records instead of one per freeze (freezes x items calls of
    `freeze_matches`, each building a path), by the same `classify.freeze_keys`."""
    stem_of = functools.lru_cache(maxsize=None)(path_stem)
    out: dict[str, set[str]] = {}
    for r in records:
        for key in freeze_keys(r.facts, stem_of):
            out.setdefault(key, set()).add(r.cls)
    return out
