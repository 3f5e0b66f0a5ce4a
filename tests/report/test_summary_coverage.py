"""summary.md never lets a class's check stand for items that did not run (issue 43,
item 4): items head collected that ran in no class process are named, and so are test
files the change added under an oracle glob (run as its own tests)."""

from __future__ import annotations

import datetime as dt

from andgate.records import (
    ChangeFacts,
    ClassFacts,
    Facts,
    FreezeFacts,
    InventoryRecord,
    ItemFacts,
    ItemResult,
    KnownBadFacts,
    LockFacts,
    OracleFacts,
    Outcome,
    PropertyFacts,
    ReplayFacts,
)
from andgate.report.context import ReportContext
from andgate.report.summary import SummaryMarkdown
from andgate.verdict import decide

ORACLE = "pkg/tests/test_a.py::test_a"


def summary(inventory: list[InventoryRecord], changes: ChangeFacts) -> str:
    facts = Facts(
        changes=changes,
        lock=LockFacts(),
        oracle=OracleFacts(results=(ItemResult(ORACLE, Outcome.PASSED),)),
        known_bad=KnownBadFacts((ReplayFacts("kb", True, (ORACLE,)),)),
        property=PropertyFacts(required=False),
        freezes=FreezeFacts(),
        untrusted=ClassFacts(),
    )
    ctx = ReportContext(
        verdict=decide(facts),
        base="b" * 40,
        head="h" * 40,
        today=dt.date(2026, 11, 25),
        inventory=inventory,
        changes=changes,
    )
    return SummaryMarkdown().render(ctx).decode()


def record(nodeid: str, cls: str, outcome: str | None) -> InventoryRecord:
    path = nodeid.partition("::")[0]
    return InventoryRecord(ItemFacts(nodeid, path, nodeid.rpartition("::")[2]), cls, "", outcome)


def test_items_that_ran_nowhere_are_named_beside_the_counts():
    edited = "pkg/tests/test_a.py::test_new"  # added to an oracle file the change edits
    text = summary(
        [record(ORACLE, "oracle", "passed"), record(edited, "oracle", None)], ChangeFacts()
    )
    assert f"Collected on head but run in no class process (1 oracle): `{edited}`" in text
    assert "run in no class process" not in summary(
        [record(ORACLE, "oracle", "passed")], ChangeFacts()
    )


def test_test_files_added_under_an_oracle_glob_are_named():
    changes = ChangeFacts(
        test_paths=("pkg/tests/test_b.py",), added_under_oracle_globs=("pkg/tests/test_b.py",)
    )
    text = summary([record(ORACLE, "oracle", "passed")], changes)
    assert "so run as the change's own (untrusted) tests: `pkg/tests/test_b.py`" in text
