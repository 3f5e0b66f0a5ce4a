"""Failures an oracle edit hides: base's edited oracle files fail on head's production
code where head's edited oracle shows no failure (it passes the item, or deleted it).
Pure: read off the runs without mutants, testable without pytest."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from andgate.check.evidence.edited import EditedFile
from andgate.process.results import RunResult
from andgate.records import HiddenFailure, Outcome, Role

FAILING = {Outcome.FAILED, Outcome.ERROR}


@dataclass
class BaseOnHead:
    """Base's edited oracle files on head's production code, without mutants."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)  # file -> its collection error

    def failure(self, nodeid: str, outcome: Outcome) -> str:
        if nodeid in self.broken:
            return f"collection error: {self.broken[nodeid]}"
        message = last_line(self.messages.get(nodeid, ""))
        return f"{outcome.value}: {message}" if message else outcome.value


def hidden_failures(
    base: BaseOnHead,
    head: Mapping[str, Outcome],
    head_failed: bool,
    deleted: Collection[str],
) -> tuple[HiddenFailure, ...]:
    """Base's items (or files) that fail on head's code where head's oracle shows no
    failure: head passes the item, or has no such item (`deleted`: base's files
    head deleted) and passes everything it edited (`head_failed`: it did not)."""
    failing = [(n, o) for n, o in base.outcomes.items() if o in FAILING]
    failing += [(path, Outcome.ERROR) for path in base.broken]
    found = []
    for nodeid, outcome in sorted(failing):
        on_head = head.get(nodeid)
        if on_head is Outcome.PASSED:
            shown = "passes"
        elif on_head is None and (nodeid.split("::", 1)[0] in deleted or not head_failed):
            shown = "deleted"
        else:
            continue  # head's oracle shows a failure there too: nothing hidden
        found.append(HiddenFailure(nodeid, base.failure(nodeid, outcome), shown))
    return tuple(found)


def edited_items(edited: Sequence[EditedFile], base: RunResult | None) -> tuple[str, ...]:
    """Base's oracle items the change edits or deletes, from base's collection (the
    edited function names when it did not complete)."""
    if base is None or base.error:
        return tuple(
            f"{e.path}::{name.replace('.', '::')}"
            for e in edited
            for name in sorted(e.functions or ())
        )
    return tuple(
        i.facts.nodeid
        for i in base.selected(Role.ORACLE)
        if any(e.holds(i.facts.nodeid) for e in edited)
    )


def last_line(message: str) -> str:
    """A failure's last line (pytest's `E` line), cut to 200 characters."""
    lines = message.strip().splitlines()
    return lines[-1][:200] if lines else ""
