"""Trust classification of one test item: oracle, property, frozen_flake, untrusted.

PYTEST_DONT_REWRITE. The plugin runs this same function inside the user's
pytest process to decide what each process runs, so it imports only the
standard library. Glob matching happens in the gate (pathspec): the rules here
hold the resulting file sets, which keeps the classifier a pure set lookup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from andgate.records import ItemFacts, TrustClass

INVARIANT_LINE = re.compile(r"^\s*#\s*INVARIANT:\s*(?P<text>.*?)\s*$")
BULLET_LINE = re.compile(r"^\s*-\s+(?P<text>.*?)\s*$")


@dataclass(frozen=True)
class Rules:
    """Classification inputs, already resolved to file sets by the gate."""

    oracle_files: frozenset[str] = frozenset()
    oracle_markers: frozenset[str] = frozenset()
    property_glob_files: frozenset[str] = frozenset()
    property_files: frozenset[str] = frozenset()
    property_markers: frozenset[str] = frozenset()
    flake_files: frozenset[str] = frozenset()
    flake_markers: frozenset[str] = frozenset()
    live_freezes: tuple[str, ...] = field(default=())
    # Files the change adds under an oracle glob, unapproved: the change's own tests,
    # untrusted (said as the reason they are not oracle items).
    added_oracle_files: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {
            k: sorted(v) if isinstance(v, frozenset) else list(v) for k, v in self.__dict__.items()
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rules:
        kwargs: dict[str, Any] = {k: frozenset(v) for k, v in data.items() if k != "live_freezes"}
        return cls(live_freezes=tuple(data.get("live_freezes", ())), **kwargs)


def path_stem(path: str) -> str:
    return PurePosixPath(path).stem


def freeze_keys(
    item: ItemFacts, stem_of: Callable[[str], str] = path_stem
) -> tuple[str, str, str, str]:
    """The ids a freeze can name an item by: node id, file path, file stem, function
    name (`stem_of` lets a caller that looks at many items of one file cache it)."""
    return item.nodeid, item.path, stem_of(item.path), item.name


def freeze_matches(freeze_id: str, item: ItemFacts) -> bool:
    return freeze_id in freeze_keys(item)


def _marker_ok(item: ItemFacts, markers: frozenset[str]) -> bool:
    return not markers or bool(item.markers & markers)


def classify_item(item: ItemFacts, rules: Rules) -> tuple[TrustClass, str]:
    """The item's class and a short reason, in the contract's order:
    oracle, property, frozen_flake, untrusted."""
    why = "no trust rule matches"
    if item.path in rules.added_oracle_files:
        why = "added by the change under an oracle glob: untrusted until an owner approves it"
    if item.path in rules.oracle_files:
        if _marker_ok(item, rules.oracle_markers):
            return TrustClass.ORACLE, "file matches an oracle glob"
        why = "oracle file, but the item has no oracle marker"
    if item.path in rules.property_glob_files:
        if not _marker_ok(item, rules.property_markers):
            why = "property file, but the item has no property marker"
        elif item.path in rules.property_files:
            return TrustClass.PROPERTY, "property file with an accepted invariant"
        else:
            why = "property file has no accepted invariant"
    if item.path in rules.flake_files:
        for freeze_id in rules.live_freezes:
            if freeze_matches(freeze_id, item):
                return TrustClass.FROZEN_FLAKE, f"live freeze {freeze_id!r}"
        if item.markers & rules.flake_markers:
            why = "has a flake marker but no live freeze entry"
    return TrustClass.UNTRUSTED, why


# -- invariants ------------------------------------------------------------------------


def normalize_invariant(text: str) -> str:
    """Collapse whitespace runs and drop one trailing period; case matters."""
    text = " ".join(text.split())
    return text[:-1].rstrip() if text.endswith(".") else text


def accepted_invariants(invariants_md: str) -> frozenset[str]:
    """The `- <text>` bullet lines of the invariants file."""
    found = set()
    for line in invariants_md.splitlines():
        match = BULLET_LINE.match(line)
        if match and match.group("text"):
            found.add(normalize_invariant(match.group("text")))
    return frozenset(found)


def declared_invariants(source: str) -> tuple[str, ...]:
    """Every `# INVARIANT: <text>` line of a test file, normalized."""
    found = []
    for line in source.splitlines():
        match = INVARIANT_LINE.match(line)
        if match and match.group("text"):
            found.append(normalize_invariant(match.group("text")))
    return tuple(found)


def has_accepted_invariant(source: str, accepted: Iterable[str]) -> bool:
    accepted = frozenset(accepted)
    return any(text in accepted for text in declared_invariants(source))
