"""The trust inventory: every collected item with its class, why, and outcome.

Each process reports the items it collected; the oracle items come from the
oracle process (trusted tree), property items from the property process, and
everything else from the untrusted process, which collects all of head.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from andgate.classify import ItemFacts, freeze_matches
from andgate.records import TrustClass
from andgate.run import RunResult

COUNT_KEYS = tuple(c.value for c in TrustClass)


@dataclass(frozen=True)
class Record:
    facts: ItemFacts
    cls: str
    why: str
    outcome: str | None

    def to_json(self) -> dict[str, object]:
        return {
            "nodeid": self.facts.nodeid,
            "file": self.facts.path,
            "class": self.cls,
            "why": self.why,
            "outcome": self.outcome,
        }


def build_inventory(
    untrusted: RunResult | None,
    oracle: RunResult | None,
    prop: RunResult | None,
    flake: RunResult | None,
) -> list[Record]:
    records: dict[str, Record] = {}
    for item in untrusted.items if untrusted else ():
        outcome = untrusted.outcome(item.facts.nodeid).value if item.cls == "untrusted" else None
        records[item.facts.nodeid] = Record(item.facts, item.cls, item.why, outcome)
    for run, cls in ((oracle, "oracle"), (prop, "property"), (flake, "frozen_flake")):
        for item in run.selected(cls) if run else ():
            outcome = run.outcome(item.facts.nodeid).value
            records[item.facts.nodeid] = Record(item.facts, item.cls, item.why, outcome)
    return sorted(records.values(), key=lambda r: r.facts.nodeid)


def counts(records: Iterable[Record]) -> dict[str, int]:
    tally = Counter(r.cls for r in records)
    return {key: tally.get(key, 0) for key in COUNT_KEYS}


def ineffective_freezes(freeze_ids: Iterable[str], records: list[Record]) -> list[str]:
    """Live freezes that freeze nothing, with why (FREEZE_INEFFECTIVE warnings)."""
    out = []
    for freeze_id in freeze_ids:
        matched = [r for r in records if freeze_matches(freeze_id, r.facts)]
        if not matched:
            out.append(f"freeze {freeze_id!r} matches no collected test")
        elif not any(r.cls == "frozen_flake" for r in matched):
            classes = sorted({r.cls for r in matched})
            out.append(
                f"freeze {freeze_id!r} matches only {', '.join(classes)} items; it freezes nothing"
            )
    return out
