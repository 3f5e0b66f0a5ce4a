"""Approval evidence end to end: what an edit of oracle items gives up, measured by
running both sides (contract section 6; issues 41 and 43).

The sample project gets two functions with mutation points (`initials`, `celsius`)
and an oracle file of its own for them; each story is an agent's edit of that file,
approved by the owner or not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from andgate.commands.sample import SampleRepo, init_repo, load_tree
from conftest import GateRun, Sample
from harness import BASE_FILES, ONE_KNOWN_BAD, RESOURCES, build_test_sample

pytestmark = pytest.mark.slow

ORACLE = "tests/oracles/test_names_oracle.py"
INITIALS = f"{ORACLE}::test_initials_skip_single_letters"
CELSIUS = f"{ORACLE}::test_celsius_boiling"
INITIALS_CODE = '''

def initials(name):
    """The first letter of each word of two letters or more, upper-cased, with a dot."""
    return "".join(w[0].upper() + "." for w in name.split() if len(w) > 1)
'''
CELSIUS_CODE = '''

def celsius(fahrenheit):
    """Degrees Fahrenheit in Celsius."""
    return (fahrenheit - 32) * 5 / 9
'''
ORACLE_TEXT = '''"""Human-owned oracle (owner: alice)."""

from minilib.mathx import celsius
from minilib.text import initials


def test_initials_skip_single_letters():
    assert initials("Ada B Lovelace") == "A.L."


def test_celsius_boiling():
    assert celsius(212) == 100
'''
REFACTORED = '''"""Human-owned oracle (owner: alice)."""

import pytest

from minilib.mathx import celsius
from minilib.text import initials


def _same(got, expected):
    assert got == expected


@pytest.mark.parametrize(("name", "expected"), [("Ada B Lovelace", "A.L.")])
def test_initials(name, expected):
    _same(initials(name), expected)


def test_celsius_boiling():
    _same(celsius(212), 100)
'''
# Budgets no test machine runs out of: what the tests read must not depend on load.
AMPLE = {"evidence_budget": 300.0}


def names_sample(tmp_path: Path, *, buggy: bool = False, manifest_extra: str = "") -> Sample:
    files = dict(BASE_FILES)
    text = INITIALS_CODE.replace("len(w) > 1", "len(w) >= 1") if buggy else INITIALS_CODE
    files["minilib/text.py"] += text
    files["minilib/mathx.py"] += CELSIUS_CODE
    files[ORACLE] = ORACLE_TEXT
    files["tests/trust_manifest.yaml"] += manifest_extra
    repo, base = build_test_sample(tmp_path / "sample", files, known_bad=ONE_KNOWN_BAD)
    return Sample(repo, base, tmp_path)


def loosened(repo: SampleRepo) -> None:
    """`==` made `in`, and a tolerance widened: reads like a fix of a brittle test."""
    repo.edit(
        ORACLE,
        'assert initials("Ada B Lovelace") == "A.L."',
        'assert "A." in initials("Ada B Lovelace")',
    )
    repo.edit(ORACLE, "assert celsius(212) == 100", "assert abs(celsius(212) - 100) < 15")


def weakened(run: GateRun) -> dict:
    found = run.payload["weakened"]
    assert found is not None, "no oracle item edited?"
    return dict(found)


def mutations(run: GateRun) -> set[tuple[str, str, tuple[str, ...]]]:
    return {(m["function"], m["mutation"], tuple(m["caught_by"])) for m in weakened(run)["mutants"]}


def warnings(run: GateRun) -> list[str]:
    return [w["detail"] for w in run.payload["warnings"] if w["code"] == "ORACLE_WEAKENED"]


def test_an_approved_loosened_assert_lists_the_mutants_it_lets_through(tmp_path):
    sample = names_sample(tmp_path)
    run = sample.gate(sample.change(loosened), approved_by=("alice",), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]  # a warning: the owner approved
    assert mutations(run) == {
        (
            "initials",
            "`…name.split() if len(w) > 1)` -> `…name.split() if len(w) >= 1)`",
            (INITIALS,),
        ),
        (
            "celsius",
            "`return (fahrenheit - 32) * 5 / 9` -> `return (fahrenheit - 33) * 5 / 9`",
            (CELSIUS,),
        ),
        (
            "celsius",
            "`return (fahrenheit - 32) * 5 / 9` -> `return (fahrenheit - 32) * 5 / 10`",
            (CELSIUS,),
        ),
    }
    found = weakened(run)
    assert found["complete"] and found["hidden_failures"] == []
    assert found["mutants_tried"] == found["mutants_made"] >= 3
    assert set(found["edited_items"]) == {INITIALS, CELSIUS}
    assert len(warnings(run)) == 3
    assert any(
        w.startswith(f"{INITIALS}: base's version catches the mutant minilib/text.py:")
        for w in warnings(run)
    )
    summary = run.artifact("summary.md")
    assert summary.index("## What approving this oracle edit gives up") < summary.index("## Checks")
    assert "approved by alice" in summary.splitlines()[2]
    assert f"Found: 3 of {found['mutants_tried']} mutants weakened" in summary
    assert "Mutants the edit lets through" in run.artifact("report.html")


def test_unapproved_the_owner_sees_it_before_approving(tmp_path):
    sample = names_sample(tmp_path)
    run = sample.gate(sample.change(loosened), **AMPLE)
    assert run.codes == ["ORACLE_AUTHORSHIP"]  # the evidence only adds warnings
    assert len(warnings(run)) == 3
    assert "Found: 3 of" in run.artifact("summary.md")


def test_an_approved_honest_refactor_reports_nothing_and_says_so(tmp_path):
    """A helper extracted and a test parametrised, with the same checks: every mutant
    base's oracle catches, head's catches too."""
    sample = names_sample(tmp_path)
    run = sample.gate(
        sample.change(lambda r: r.write({ORACLE: REFACTORED})), approved_by=("alice",), **AMPLE
    )
    assert run.decision == "allow", run.payload["reasons"]
    found = weakened(run)
    assert (found["mutants"], found["hidden_failures"], warnings(run)) == ([], [], [])
    assert found["complete"] and found["mutants_tried"] >= 4
    assert {f.split("::")[1] for f in found["functions"]} >= {"initials", "celsius"}
    assert (
        f"Nothing found: 0 of {found['mutants_tried']} mutants weakened; base's failing items: none"
        in run.artifact("summary.md")
    )


def test_an_approved_rewrite_that_turns_a_red_oracle_green_lists_the_hidden_failure(tmp_path):
    """Production unchanged and buggy, its oracle red; the rewrite expects the bug."""
    sample = names_sample(tmp_path, buggy=True)

    def expect_the_bug(repo: SampleRepo) -> None:
        repo.edit(ORACLE, '== "A.L."', '== "A.B.L."')

    run = sample.gate(sample.change(expect_the_bug), approved_by=("alice",), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]
    assert weakened(run)["hidden_failures"] == [
        {
            "nodeid": INITIALS,
            "failure": "failed: AssertionError: assert 'A.B.L.' == 'A.L.'",
            "on_head": "passes",
        }
    ]
    assert warnings(run) == [
        f"{INITIALS}: base's version fails on head's code (failed: AssertionError: assert "
        "'A.B.L.' == 'A.L.') and head's edited oracle passes: the edit hides this failure"
    ]


def test_a_deleted_oracle_test_hides_its_failure_too(tmp_path):
    sample = names_sample(tmp_path, buggy=True)

    def delete(repo: SampleRepo) -> None:
        test = 'def test_initials_skip_single_letters():\n    assert initials("Ada B Lovelace")'
        repo.edit(ORACLE, f'{test} == "A.L."\n\n\n', "")

    run = sample.gate(sample.change(delete), approved_by=("alice",), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]
    assert [(h["nodeid"], h["on_head"]) for h in weakened(run)["hidden_failures"]] == [
        (INITIALS, "deleted")
    ]


def test_only_adding_an_oracle_test_measures_nothing(tmp_path):
    sample = names_sample(tmp_path)

    def add(repo: SampleRepo) -> None:
        text = (
            repo.path / ORACLE
        ).read_text() + "\n\ndef test_celsius_freezing():\n    assert celsius(32) == 0\n"
        repo.write({ORACLE: text})

    run = sample.gate(sample.change(add), approved_by=("alice",), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]
    assert run.payload["weakened"] is None
    assert "gives up" not in run.artifact("summary.md")


def test_nothing_extra_for_a_change_that_edits_no_oracle(honest_run):
    assert honest_run.payload["weakened"] is None


def test_the_budget_says_what_it_left_and_no_evidence_turns_it_off(tmp_path):
    sample = names_sample(tmp_path)
    head = sample.change(loosened)
    run = sample.gate(head, approved_by=("alice",), evidence_budget=0.01, jobs=1)
    found = weakened(run)
    assert run.decision == "allow", run.payload["reasons"]
    assert found["mutants_left"] > 0 and found["out_of_budget"] and not found["complete"]
    # base's side ran out first (its run without mutants included): nothing is claimed
    assert (found["mutants_tried"], found["hidden_failures_known"]) == (0, False)
    assert f"{found['mutants_left']} more mutants not tried: the budget ran out" in run.artifact(
        "summary.md"
    )
    off = sample.gate(head, approved_by=("alice",), evidence=False)
    assert weakened(off)["not_measured"] == "--no-evidence"
    assert (weakened(off)["mutants_made"], warnings(off)) == (0, [])
    assert "Not measured (--no-evidence)" in off.artifact("summary.md")


def test_block_weakened_oracles_blocks_until_an_owner_approves_head(tmp_path):
    sample = names_sample(tmp_path, manifest_extra="block_weakened_oracles: true\n")
    head = sample.change(loosened)
    blocked = sample.gate(head, **AMPLE)
    assert sorted(set(blocked.codes)) == ["ORACLE_AUTHORSHIP", "ORACLE_WEAKENED"]
    assert len(blocked.details("ORACLE_WEAKENED")) == 3
    assert all(
        d.endswith("an owner approves head itself, having read this")
        for d in blocked.details("ORACLE_WEAKENED")
    )
    approved = sample.gate(head, approved_by=("alice",), **AMPLE)
    assert approved.decision == "allow", approved.payload["reasons"]
    assert len(warnings(approved)) == 3


def test_a_fault_of_the_evidence_is_stated_never_a_gate_error(tmp_path, monkeypatch):
    sample = names_sample(tmp_path)
    head = sample.change(loosened)

    def broken(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("andgate.check.evidence.runs.choose_functions", broken)
    run = sample.gate(head, approved_by=("alice",), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]
    assert (
        "internal error" in weakened(run)["error"]
        and "RuntimeError: boom" in weakened(run)["error"]
    )
    assert "Could not be completed (internal error" in run.artifact("summary.md")


# -- issue 43: a flat layout, tests inside the package (toolz's shape) ----------------------

FLAT_MANIFEST = """\
version: 1
classes:
  oracle:
    globs: ["flatcalc/tests/**/*.py"]
owners: [alice]
require_property_class: false
oracle_must_fail_known_bad: false
"""


def test_a_loosened_oracle_of_a_flat_layout_shows_the_failure_the_production_change_brings(
    tmp_path,
):
    """Issue 43: production changes, the oracle assert that would catch it is loosened,
    an owner approves. Base's oracle fails on head's code: the evidence names it."""
    repo = init_repo(tmp_path / "flat")
    repo.write(
        {
            **load_tree(RESOURCES / "layouts" / "flat_layout"),
            "tests/trust_manifest.yaml": FLAT_MANIFEST,
        }
    )
    base = repo.commit("flatcalc, gated (owner: alice)")
    sample = Sample(repo, base, tmp_path)

    def floor_division(repo: SampleRepo) -> None:
        repo.edit("flatcalc/rpn.py", '"/": operator.truediv', '"/": operator.floordiv')
        repo.edit(
            "flatcalc/tests/test_rpn.py",
            "assert evaluate(expression) == value",
            "assert evaluate(expression) == pytest.approx(value, abs=1)",
        )

    run = sample.gate(sample.change(floor_division), approved_by=("alice",), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]
    assert weakened(run)["hidden_failures"] == [
        {
            "nodeid": "flatcalc/tests/test_rpn.py::test_evaluate[9 2 /-4.5]",
            "failure": "failed: AssertionError: assert 4.0 == 4.5",
            "on_head": "passes",
        }
    ]
    assert "flatcalc/rpn.py::evaluate" in weakened(run)["functions"]
