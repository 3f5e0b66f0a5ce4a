"""Reporters, seeds and inventory, directly: no git, no pytest process.

`verdict.json` and `summary.md` are pinned by golden files (`tests/golden/`), with
SHAs and dates fixed by the test. To accept an intended change of the output,
run `ANDGATE_UPDATE_GOLDEN=1 pytest tests/report/test_reports.py` and review the diff.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from andgate.check.inventory.items import build_inventory, counts, ineffective_freezes
from andgate.check.property.seeds import default_hypothesis_seed, property_facts
from andgate.process.results import CollectedItem, RunResult
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
    ReplayStatus,
)
from andgate.report.artifacts import KnownBadJson, VerdictJson, seeds_payload
from andgate.report.context import ReportContext
from andgate.report.summary import SummaryMarkdown
from andgate.verdict import decide

GOLDEN = Path(__file__).parents[1] / "golden"
BASE, HEAD = "b" * 40, "h" * 40
TODAY = dt.date(2026, 11, 25)
ORACLE_ITEM = "tests/oracles/test_a.py::test_a"
PLATFORM_SKIP = "tests/oracles/test_b.py::test_py4 skipped: requires Python 4 (skipped on base too)"


def golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ANDGATE_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


def clean_facts(**changes: object) -> Facts:
    fields: dict[str, object] = {
        "changes": ChangeFacts(production_paths=("minilib/text.py",)),
        "lock": LockFacts(),
        "oracle": OracleFacts(
            results=(ItemResult("tests/oracles/test_a.py::test_a", Outcome.PASSED),)
        ),
        "known_bad": KnownBadFacts(
            (ReplayFacts("kb_one", True, ("tests/oracles/test_a.py::test_a",)),)
        ),
        "property": PropertyFacts(
            results=(ItemResult("tests/properties/test_p.py::test_p[1]", Outcome.PASSED),),
            files={"tests/properties/test_p.py": ("tests/properties/test_p.py::test_p[1]",)},
            seeds={"tests/properties/test_p.py::test_p[1]": (1,)},
        ),
        "freezes": FreezeFacts(),
        "untrusted": ClassFacts(results=(ItemResult("tests/test_u.py::test_u", Outcome.PASSED),)),
        "counts": {"oracle": 1, "property": 1, "frozen_flake": 0, "untrusted": 1},
    }
    fields.update(changes)
    return Facts(**fields)  # type: ignore[arg-type]


def context(facts: Facts, **extra: object) -> ReportContext:
    return ReportContext(verdict=decide(facts), base=BASE, head=HEAD, today=TODAY, **extra)  # type: ignore[arg-type]


def blocked_facts() -> Facts:
    failing = tuple(
        ItemResult(f"tests/oracles/test_a.py::test_case_{i}", Outcome.FAILED, "assert 1 == 2")
        for i in range(12)
    )
    return clean_facts(
        changes=ChangeFacts(
            oracle_paths=("tests/oracles/test_a.py",), production_paths=("minilib/text.py",)
        ),
        oracle=OracleFacts(
            results=failing,
            not_applicable=(PLATFORM_SKIP,),
        ),
        known_bad=KnownBadFacts(
            (
                ReplayFacts("kb_one", True, ()),
                ReplayFacts("kb_two", False, problem="patch does not apply"),
            )
        ),
    )


def test_verdict_json_of_an_allow_is_golden():
    golden("verdict_allow.json", VerdictJson().render(context(clean_facts())).decode())


def test_verdict_json_of_a_block_is_golden():
    golden("verdict_block.json", VerdictJson().render(context(blocked_facts())).decode())


def test_summary_of_an_allow_is_golden():
    facts = clean_facts()
    golden(
        "summary_allow.md", SummaryMarkdown().render(context(facts, changes=facts.changes)).decode()
    )


def test_summary_of_a_block_is_golden():
    facts = blocked_facts()
    replays = facts.known_bad.replays  # type: ignore[union-attr]
    ctx = context(facts, changes=facts.changes, replays=replays)
    golden("summary_block.md", SummaryMarkdown().render(ctx).decode())


def test_known_bad_json_names_the_status_of_each_fixture():
    replays = (
        ReplayFacts("bites", True, ("t::a",)),
        ReplayFacts("stale", False, problem="no"),
        ReplayFacts("green", True, ()),
        ReplayFacts("error", True, error="timeout"),
    )
    assert [r.status for r in replays] == list(ReplayStatus)
    payload = json.loads(KnownBadJson().render(context(clean_facts(), replays=replays)))
    assert [f["bites"] for f in payload["fixtures"]] == [True, False, False, False]


# -- seeds ------------------------------------------------------------------------------------


def _result(items: list[tuple[str, str]], reports: dict, seeds: dict) -> RunResult:
    collected = tuple(
        CollectedItem(ItemFacts(nodeid, nodeid.split("::")[0], nodeid.split("::")[1]), cls, "why")
        for nodeid, cls in items
    )
    return RunResult("property", 0, 0.1, items=collected, reports=reports, seeds=seeds)


PASS = {"setup": "passed", "call": "passed", "teardown": "passed"}


def test_property_facts_and_seeds_payload_record_what_ran():
    result = _result(
        [
            ("p/test_a.py::t[1]", "property"),
            ("p/test_b.py::t", "property"),
            ("x.py::u", "untrusted"),
        ],
        {"p/test_a.py::t[1]": PASS, "p/test_b.py::t": PASS},
        {"p/test_a.py::t[1]": (1,), "x.py::u": (9,)},
    )
    facts = property_facts(
        result,
        ["p/test_a.py", "p/test_b.py", "p/test_c.py"],
        required=True,
        every_candidate_counts=True,
    )
    assert facts.files == {
        "p/test_a.py": ("p/test_a.py::t[1]",),
        "p/test_b.py": ("p/test_b.py::t",),
        "p/test_c.py": (),
    }
    assert facts.seeds == {"p/test_a.py::t[1]": (1,)}
    payload = seeds_payload(facts, 1234)
    assert payload["unseeded_files"] == ["p/test_b.py", "p/test_c.py"]
    assert payload["reproduce"] == "--hypothesis-seed=1234"
    assert default_hypothesis_seed("0000abcd" + "0" * 32) == 0xABCD


def test_property_facts_without_a_run_keep_why_the_class_is_empty():
    facts = property_facts(
        None, ["a.py"], required=True, every_candidate_counts=True, empty_because="x"
    )
    assert (facts.results, facts.files, facts.empty_because) == ((), {}, "x")


# -- inventory --------------------------------------------------------------------------------


def test_inventory_takes_each_class_from_its_own_process():
    untrusted = _result(
        [("t/test_o.py::o", "oracle"), ("t/test_u.py::u", "untrusted")],
        {"t/test_u.py::u": {"setup": "failed"}},
        {},
    )
    oracle = _result([("t/test_o.py::o", "oracle")], {"t/test_o.py::o": PASS}, {})
    records = build_inventory(untrusted, oracle, None, None)
    assert [(r.facts.nodeid, r.cls, r.outcome) for r in records] == [
        ("t/test_o.py::o", "oracle", "passed"),
        ("t/test_u.py::u", "untrusted", "error"),
    ]
    assert counts(records) == {"oracle": 1, "property": 0, "frozen_flake": 0, "untrusted": 1}


@pytest.mark.parametrize(
    "freeze_id, expected",
    [
        ("test_u", []),
        ("nothing", ["freeze 'nothing' matches no collected test"]),
        ("o", ["freeze 'o' matches only oracle items; it freezes nothing"]),
    ],
)
def test_ineffective_freezes_say_why(freeze_id, expected):
    records = [
        InventoryRecord(
            ItemFacts("t/test_u.py::test_u", "t/test_u.py", "test_u"), "frozen_flake", "", None
        ),
        InventoryRecord(ItemFacts("t/test_o.py::o", "t/test_o.py", "o"), "oracle", "", None),
    ]
    assert ineffective_freezes([freeze_id], records) == expected


def _records_for_freezes() -> list[InventoryRecord]:
    return [
        InventoryRecord(
            ItemFacts("t/test_u.py::test_u", "t/test_u.py", "test_u"), "frozen_flake", "", None
        ),
        InventoryRecord(
            ItemFacts("t/test_u.py::test_v", "t/test_u.py", "test_v"), "untrusted", "", None
        ),
        InventoryRecord(ItemFacts("t/test_o.py::o[1]", "t/test_o.py", "o[1]"), "oracle", "", None),
        InventoryRecord(
            ItemFacts("t/sub/test_o.py::o", "t/sub/test_o.py", "o"), "property", "", None
        ),
        InventoryRecord(
            ItemFacts("t/test_p.py::C::test_p", "t/test_p.py", "test_p"), "untrusted", "", None
        ),
    ]


def test_ineffective_freezes_match_what_freeze_matches_matches():
    """One pass over the items (an index) gives what a pass per freeze with
    `classify.freeze_matches` gives, for every form a freeze id names an item by."""
    from andgate.plugin.classify import freeze_matches

    records = _records_for_freezes()
    ids = ["t/test_u.py::test_u", "t/test_u.py", "test_u", "test_v", "o", "o[1]", "test_o"]
    ids += ["t/sub/test_o.py", "t/test_p.py::C::test_p", "test_p", "C", "t/test_o.py::o", ""]
    expected = []
    for freeze_id in ids:
        matched = [r for r in records if freeze_matches(freeze_id, r.facts)]
        if not matched:
            expected.append(f"freeze {freeze_id!r} matches no collected test")
        elif not any(r.cls == "frozen_flake" for r in matched):
            classes = ", ".join(sorted({r.cls for r in matched}))
            expected.append(
                f"freeze {freeze_id!r} matches only {classes} items; it freezes nothing"
            )
    assert ineffective_freezes(ids, records) == expected
    assert ineffective_freezes([], records) == []


@pytest.mark.parametrize("items", [0, 1, 3])
def test_inventory_json_is_what_json_dumps_writes(items):
    """trust_inventory.json is rendered item by item; the bytes are json.dumps(indent=2)'s."""
    from andgate.report.artifacts import InventoryJson

    odd = InventoryRecord(ItemFacts('t/x.py::t["é\\n"]', "t/x.py", "t"), "oracle", "w", "passed")
    records = [odd, *_records_for_freezes()][:items]
    verdict = decide(clean_facts())
    ctx = ReportContext(verdict=verdict, base=BASE, head=HEAD, today=TODAY, inventory=records)
    expected = {
        "schema": "andgate.inventory/1",
        "base": BASE,
        "head": HEAD,
        "counts": dict(verdict.counts),
        "items": [r.to_json() for r in records],
    }
    text = json.dumps(expected, indent=2, ensure_ascii=True, default=str) + "\n"
    assert InventoryJson().render(ctx) == text.encode()


def test_the_artifacts_folder_claims_every_reporters_file():
    """The folder refuses to overwrite someone else's file by name: a reporter whose
    file it does not know would write over it unchecked."""
    from andgate.report.artifacts import REPORTERS
    from andgate.report.folder import REPORT_FILES, VERDICT_FILE

    assert sorted(r.filename for r in REPORTERS) == sorted([*REPORT_FILES, VERDICT_FILE])


def test_the_terminal_shows_five_warnings_of_a_code_and_counts_the_rest(capsys, tmp_path):
    """click's adoption: 38 ORACLE_FROM_PRODUCTION and 23 ORACLE_SKIPPED printed whole
    buried the verdict; every reason is still printed, and summary.md lists them all."""
    from andgate.records import Decision, Finding, Warning_
    from andgate.report.console import print_verdict
    from andgate.verdict import Verdict

    skipped = [Finding(Warning_.ORACLE_SKIPPED, f"t.py::test_{i} skipped") for i in range(23)]
    adopting = Finding(Warning_.ADOPTING, "this change adopts andgate")
    verdict = Verdict(
        decision=Decision.ALLOW,
        reasons=(),
        bits={},
        warnings=(adopting, *skipped[:3], Finding(Warning_.GENERATED_FILES, "g"), *skipped[3:]),
        counts={"oracle": 2000},
    )
    print_verdict(verdict, tmp_path)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "andgate: ALLOW"
    assert lines[1:9] == [
        "  warning ADOPTING: this change adopts andgate",
        *(f"  warning ORACLE_SKIPPED: t.py::test_{i} skipped" for i in range(5)),
        f"  warning ORACLE_SKIPPED: and 18 more ({tmp_path}/summary.md lists them)",
        "  warning GENERATED_FILES: g",
    ]
    assert lines[9:] == ["  tests: oracle 2000", f"  artifacts: {tmp_path}/summary.md"]
