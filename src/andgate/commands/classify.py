"""`andgate classify`: the trust inventory of HEAD, alone.

Collects (never runs) every test of the committed HEAD in a temporary
worktree and classifies it with HEAD's own trust config, the way `check`
would with HEAD as its base. For items that are not trusted it says why, so
a maintainer adopting andgate can see which rule an item misses.

Exit codes (contract section 3), most severe first when several apply:
4 invalid manifest or freeze file, 3 no oracle item, 2 expired freeze, 0 ok.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from andgate.check.inventory.items import COUNT_KEYS, counts, ineffective_freezes
from andgate.commands import options
from andgate.commands.common import (
    Collected,
    Target,
    collect_inventory,
    open_target,
    plural,
    table,
)
from andgate.commands.layout import (
    NOT_COLLECTED_FIX,
    property_empty_because,
    uncollected_trusted,
)
from andgate.errors import FreezeFileError, ManifestError
from andgate.exitcodes import ClassifyExit
from andgate.plugin.classify import freeze_matches
from andgate.process.requests import DEFAULT_TIMEOUT
from andgate.process.results import collection_error_line
from andgate.records import InventoryRecord, TrustClass
from andgate.trust.config import BaseConfig

INVENTORY_SCHEMA = "andgate.inventory/1"


@dataclass(frozen=True)
class Findings:
    """What is wrong with the trust data, besides the inventory itself."""

    expired: tuple[str, ...]
    invalid: tuple[str, ...]
    ineffective: tuple[str, ...]
    collection_errors: tuple[str, ...]
    no_oracle: bool

    @property
    def exit_code(self) -> ClassifyExit:
        if self.invalid:
            return ClassifyExit.INVALID
        if self.no_oracle:
            return ClassifyExit.NO_ORACLE
        return ClassifyExit.EXPIRED_FREEZE if self.expired else ClassifyExit.OK


def run_classify(
    repo: Path,
    *,
    manifest: str,
    today: dt.date,
    as_json: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    rev: str | None = None,
) -> int:
    try:
        target = open_target(repo, manifest, rev)
    except (ManifestError, FreezeFileError) as exc:
        return _invalid(str(exc), as_json)
    config = target.config
    collected = collect_inventory(target, today, timeout)
    findings = _findings(config, collected, today)
    if as_json:
        print(json.dumps(_payload(config, collected, findings, today), indent=2))
    else:
        print(_render(target, collected, findings, today), end="")
    return findings.exit_code


def _invalid(message: str, as_json: bool) -> int:
    print(f"andgate: {message}", file=sys.stderr)
    if as_json:
        payload = {"schema": INVENTORY_SCHEMA, "error": message, "exit_code": ClassifyExit.INVALID}
        print(json.dumps(payload, indent=2))
    return ClassifyExit.INVALID


def _findings(config: BaseConfig, collected: Collected, today: dt.date) -> Findings:
    records = list(collected.records)
    return Findings(
        expired=tuple(f.expired_message() for f in config.freezes.expired(today)),
        invalid=tuple(p.message for p in config.freezes.invalid),
        ineffective=tuple(ineffective_freezes(config.live_freeze_ids(today), records)),
        collection_errors=tuple(
            collection_error_line(n, m) for n, m in collected.collection_errors
        ),
        no_oracle=not any(r.cls == TrustClass.ORACLE for r in records),
    )


def _payload(
    config: BaseConfig, collected: Collected, findings: Findings, today: dt.date
) -> dict[str, Any]:
    """The same shape as `check`'s trust_inventory.json, plus the findings."""
    return {
        "schema": INVENTORY_SCHEMA,
        "base": collected.head,
        "head": collected.head,
        "today": today.isoformat(),
        "manifest": config.manifest.path,
        "counts": counts(collected.records),
        "items": [
            {"nodeid": r.facts.nodeid, "file": r.facts.path, "class": r.cls, "why": r.why}
            for r in collected.records
        ],
        "freezes": {
            "expired": list(findings.expired),
            "invalid": list(findings.invalid),
            "ineffective": list(findings.ineffective),
        },
        "collection_errors": list(findings.collection_errors),
        "exit_code": findings.exit_code,
    }


# -- the human-readable report ---------------------------------------------------------


def _render(target: Target, collected: Collected, findings: Findings, today: dt.date) -> str:
    config, records = target.config, collected.records
    missing = uncollected_trusted(
        target.git, target.commit, config.manifest, (r.facts.path for r in records)
    )
    blocks = _would_block(config, records, missing)
    lines = [
        target.first_line("classify"),
        f"config {config.manifest.path} from that tree, today {today.isoformat()}",
        "",
        *_counttable(records),
        "",
        *_by_file(records, TrustClass.ORACLE),
        *_by_file(records, TrustClass.PROPERTY),
        *_frozen(records, config, today),
        *_untrusted(records),
        *_problems(findings),
        *_not_collected(missing),
        *[f"{note}\n" for note in collected.notes],
        *blocks,
        _verdict_line(findings, would_block=bool(blocks)),
    ]
    return "\n".join(lines) + "\n"


def _counttable(records: tuple[InventoryRecord, ...]) -> list[str]:
    items = Counter(r.cls for r in records)
    files: dict[str, set[str]] = defaultdict(set)
    for r in records:
        files[r.cls].add(r.facts.path)
    rows = [("class", "items", "files")]
    rows += [(key, str(items.get(key, 0)), str(len(files[key]))) for key in COUNT_KEYS]
    return [f"  {a:<14}{b:>6}{c:>7}" for a, b, c in rows]


def _by_file(records: tuple[InventoryRecord, ...], cls: TrustClass) -> list[str]:
    per_file = Counter(r.facts.path for r in records if r.cls == cls)
    if not per_file:
        return [f"{cls.value}: none", ""]
    heading = (
        f"{cls.value}: {plural(sum(per_file.values()), 'item')} in {plural(len(per_file), 'file')}"
    )
    return [heading, *table([(p, str(n)) for p, n in sorted(per_file.items())]), ""]


def _frozen(records: tuple[InventoryRecord, ...], config: BaseConfig, today: dt.date) -> list[str]:
    frozen = [r for r in records if r.cls == TrustClass.FROZEN_FLAKE]
    if not frozen:
        return []
    live = config.freezes.live(today)
    rows = []
    for r in frozen:
        # The classifier picks the first live freeze that matches; so do we.
        freeze = next((f for f in live if freeze_matches(f.id, r.facts)), None)
        left = plural(freeze.days_left(today), "day") + " left" if freeze else ""
        rows.append((r.facts.nodeid, r.why, left))
    return [f"frozen_flake: {plural(len(frozen), 'item')} (outcome ignored)", *table(rows), ""]


def _untrusted(records: tuple[InventoryRecord, ...]) -> list[str]:
    """Grouped by file and reason: a large suite's untrusted class stays readable."""
    groups = Counter((r.facts.path, r.why) for r in records if r.cls == TrustClass.UNTRUSTED)
    if not groups:
        return []
    total = sum(groups.values())
    rows = [(path, str(n), f"not trusted: {why}") for (path, why), n in sorted(groups.items())]
    return [
        f"untrusted: {plural(total, 'item')} (a failure blocks, a pass never helps)",
        *table(rows),
        "",
    ]


def _problems(findings: Findings) -> list[str]:
    sections = (
        ("invalid freeze entries (FREEZE_INVALID)", findings.invalid),
        ("expired freezes (FREEZE_EXPIRED)", findings.expired),
        ("ineffective freezes (FREEZE_INEFFECTIVE)", findings.ineffective),
        ("collection errors (COLLECTION_ERROR in check)", findings.collection_errors),
    )
    lines = []
    for title, entries in sections:
        if entries:
            lines += [f"{title}:", *(f"  {e}" for e in entries), ""]
    return lines


def _not_collected(missing: dict[str, str]) -> list[str]:
    if not missing:
        return []
    rows = [(path, why) for path, why in missing.items()]
    return [
        f"trusted test files pytest never collects ({NOT_COLLECTED_FIX}):",
        *table(rows),
        "",
    ]


def _would_block(
    config: BaseConfig, records: tuple[InventoryRecord, ...], missing: dict[str, str]
) -> list[str]:
    """What `check` would block on with this inventory, beyond the exit code's cases."""
    manifest, found = config.manifest, []
    has_property = any(r.cls == TrustClass.PROPERTY for r in records)
    if manifest.require_property_class and not has_property:
        why = property_empty_because(config, missing)
        found.append(
            f"  NO_PROPERTY: the property class is empty ({why}); add a seeded property "
            f"test, or set require_property_class: false in {manifest.path}"
        )
    if manifest.oracle_must_fail_known_bad and not config.known_bad:
        found.append(
            f"  NO_KNOWN_BAD: no *.patch fixture under {manifest.known_bad_dir}; write one "
            f"(see {manifest.known_bad_dir}/README.md) or try `andgate known-bad mutants --write 3`"
        )
    return ["check would block on:", *found, ""] if found else []


def _verdict_line(findings: Findings, *, would_block: bool = False) -> str:
    if findings.invalid:
        return f"result: the freeze file is invalid (exit {ClassifyExit.INVALID:d})"
    if findings.no_oracle:
        return (
            f"result: no oracle item collected (exit {ClassifyExit.NO_ORACLE:d}); point "
            "classes.oracle.globs at human-owned tests"
        )
    if findings.expired:
        expired = plural(len(findings.expired), "expired freeze")
        return f"result: {expired} (exit {ClassifyExit.EXPIRED_FREEZE:d})"
    if findings.collection_errors:
        count = plural(len(findings.collection_errors), "collection error")
        return f"result: ok, but {count}: check blocks on them (COLLECTION_ERROR)"
    if would_block:
        return "result: the inventory is valid, but check would block (see above)"
    return "result: ok"


# -- the command line ---------------------------------------------------------------------


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Collect the tests of the working tree as it is (uncommitted edits included; --rev "
        "for a commit) in a temporary worktree and classify them with its trust config; for "
        "untrusted items, say why, and say what check would block on. Exit 0 ok, 2 expired "
        "freeze, 3 no oracle item, 4 invalid manifest or freeze file, 5 could not run."
    )
    options.add_repo(parser)
    options.add_rev(parser)
    options.add_manifest(parser)
    options.add_today(parser)
    options.add_timeout(parser)
    options.add_json(parser, "print the inventory as JSON")
    options.handled_by(parser, _classify, could_not_run=ClassifyExit.COULD_NOT_RUN)


def _classify(args: argparse.Namespace) -> int:
    return run_classify(
        args.repo,
        manifest=args.manifest,
        today=options.today(args),
        as_json=args.json,
        timeout=args.timeout,
        rev=args.rev,
    )
