"""What an edit of oracle items gives up, where the approver reads it: verdict.json
`weakened`, first in summary.md beside the approval line, report.html, and the GitHub
check (the job summary, and warning annotations on the edited tests)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from pathlib import Path

from andgate.records import ChangeFacts, EvidenceFacts, Facts, HiddenFailure, WeakenedMutant
from andgate.report.actions import annotated, publish, warning_annotations
from andgate.report.artifacts import VerdictJson
from andgate.report.context import ReportContext
from andgate.report.evidence import headline
from andgate.report.html import build_report, render
from andgate.report.summary import SummaryMarkdown
from andgate.verdict import decide
from verdict_facts import CLEAN

ORACLE_FILE = "tests/oracles/test_text_oracle.py"
ITEM = f"{ORACLE_FILE}::test_initials"
MUTANT = WeakenedMutant("minilib/text.py", 21, "initials", "`len(w) > 1` -> `len(w) >= 1`", (ITEM,))
HIDDEN = HiddenFailure(
    f"{ORACLE_FILE}::test_chunk", "failed: AssertionError: assert 4 == 5", "passes"
)
FOUND = EvidenceFacts(
    edited=(ITEM, f"{ORACLE_FILE}::test_chunk"),
    files=(ORACLE_FILE,),
    hidden=(HIDDEN,),
    weakened=(MUTANT,),
    functions=("minilib/text.py::initials",),
    mutants=9,
    tried=9,
    budget=60.0,
    seconds=4.25,
)
NOTHING = dataclasses.replace(FOUND, hidden=(), weakened=(), mutants=37, tried=37)
APPROVED = ChangeFacts(oracle_paths=(ORACLE_FILE,), approved_by=("alice",))
TODAY = dt.date(2026, 11, 25)


def clean_facts(**changes: object) -> Facts:
    return dataclasses.replace(CLEAN, **changes)  # type: ignore[arg-type]


def context(facts: Facts, **extra: object) -> ReportContext:
    verdict = decide(facts)
    return ReportContext(verdict, "b" * 40, "h" * 40, TODAY, **extra)  # type: ignore[arg-type]


def summary(evidence: EvidenceFacts) -> str:
    facts = clean_facts(changes=APPROVED, evidence=evidence)
    ctx = context(facts, changes=APPROVED, evidence=evidence)
    return SummaryMarkdown().render(ctx).decode()


def test_the_summary_shows_it_first_beside_the_approval_line():
    text = summary(FOUND)
    lines = text.splitlines()
    assert "approved by alice" in lines[2]
    assert lines[4] == "## What approving this oracle edit gives up"
    assert lines[6] == (
        "Found: 1 of 9 mutants weakened; 1 of base's failing items hidden (4.2s of a 60s "
        "budget). The change edits or deletes 2 oracle items in 1 file."
    )
    assert text.index("gives up") < text.index("## Warnings") < text.index("## Checks")
    assert f"- `{HIDDEN.nodeid}`: `{HIDDEN.failure}`; head's edited oracle passes it" in lines
    assert (
        f"| `minilib/text.py:21` | `initials` | `len(w) > 1` -> `len(w) >= 1` | `{ITEM}` |"
    ) in lines


def test_nothing_found_is_said_with_the_numbers():
    assert (
        "Nothing found: 0 of 37 mutants weakened; base's failing items: none (4.2s of a 60s "
        "budget). The change edits or deletes 2 oracle items in 1 file."
    ) in summary(NOTHING).splitlines()


def test_what_was_not_tried_or_measured_is_said():
    ran_out = dataclasses.replace(NOTHING, tried=20, out_of_budget=True)
    assert headline(ran_out).startswith(
        "Nothing found: 0 of 20 mutants weakened; base's failing items: none (4.2s of a 60s "
        "budget; 17 more mutants not tried: the budget ran out)."
    )
    off = EvidenceFacts(files=(ORACLE_FILE,), not_measured="--no-evidence")
    assert headline(off) == (
        "Not measured (--no-evidence): the change edits or deletes oracle items in 1 file."
    )
    broken = dataclasses.replace(
        NOTHING, tried=0, hidden_known=False, error="head's edited oracle files could not run"
    )
    assert headline(broken) == (
        "Could not be completed (head's edited oracle files could not run): 0 of 0 mutants "
        "weakened; base's failing items: not known (its run did not end) (4.2s of a 60s "
        "budget; 37 more mutants not tried: their runs did not finish). The change edits or "
        "deletes 2 oracle items in 1 file."
    )


def test_no_mutant_says_why():
    none = dataclasses.replace(NOTHING, mutants=0, tried=0, functions=())
    assert headline(none).startswith(
        "Nothing found: no mutant (no production function the edited tests name); base's "
        "failing items: none"
    )


def test_no_section_when_no_oracle_item_was_edited():
    facts = clean_facts()
    text = SummaryMarkdown().render(context(facts, changes=facts.changes)).decode()
    assert "gives up" not in text


def test_verdict_json_carries_it_as_weakened():
    facts = clean_facts(changes=APPROVED, evidence=FOUND)
    payload = json.loads(VerdictJson().render(context(facts, evidence=FOUND)))
    weakened = payload["weakened"]
    assert weakened["mutants"] == [
        {
            "path": "minilib/text.py",
            "line": 21,
            "function": "initials",
            "mutation": "`len(w) > 1` -> `len(w) >= 1`",
            "caught_by": [ITEM],
        }
    ]
    assert weakened["hidden_failures"] == [
        {"nodeid": HIDDEN.nodeid, "failure": HIDDEN.failure, "on_head": "passes"}
    ]
    assert (weakened["mutants_made"], weakened["mutants_tried"], weakened["mutants_left"]) == (
        9,
        9,
        0,
    )
    assert weakened["complete"] and weakened["measured"] and weakened["error"] is None
    assert [w["code"] for w in payload["warnings"]] == ["ORACLE_WEAKENED"] * 2
    assert json.loads(VerdictJson().render(context(clean_facts())))["weakened"] is None


def test_the_page_shows_it_escaped():
    evil = dataclasses.replace(MUTANT, function="<script>x</script>", caught_by=("t.py::test_<b>",))
    evidence = dataclasses.replace(FOUND, weakened=(evil,))
    facts = clean_facts(changes=APPROVED, evidence=evidence)
    page = render(build_report(context(facts, changes=APPROVED, evidence=evidence))).decode()
    assert "What approving this oracle edit gives up" in page
    assert page.index("gives up") < page.index("<h2>Checks</h2>")
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>" not in page
    assert "t.py::test_&lt;b&gt;" in page
    assert "Failures the edit hides" in page and "Mutants the edit lets through" in page


def test_the_github_check_annotates_each_finding_on_the_edited_test(tmp_path: Path):
    facts = clean_facts(changes=APPROVED, evidence=FOUND)
    payload = json.loads(VerdictJson().render(context(facts, evidence=FOUND)))
    subjects = [re.split(r":? ", w["detail"], maxsplit=1)[0] for w in annotated(payload)]
    assert subjects == [HIDDEN.nodeid, ITEM]
    locations = {ITEM: (ORACLE_FILE, 12), HIDDEN.nodeid: (ORACLE_FILE, 7)}
    lines = warning_annotations(payload["warnings"], locations)
    assert lines[0].startswith(
        f"::warning file={ORACLE_FILE},line=7,title=andgate ORACLE_WEAKENED::{HIDDEN.nodeid}"
    )
    assert lines[1].startswith(f"::warning file={ORACLE_FILE},line=12,")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}
    text = summary(FOUND)
    published = publish(payload, text, tmp_path, 0, env, locations)
    assert published == lines  # an allow: no error, the warnings
    assert "## What approving this oracle edit gives up" in (tmp_path / "summary").read_text()


def test_warning_annotations_are_bounded():
    warnings = [{"code": "ORACLE_WEAKENED", "detail": f"t.py::test_{i}: x"} for i in range(14)]
    warnings.append({"code": "FREEZE_INEFFECTIVE", "detail": "not annotated"})
    lines = warning_annotations(warnings, {})
    assert len(lines) == 10
    assert (
        lines[-1] == "::warning title=andgate::5 more ORACLE_WEAKENED findings in the job summary"
    )
