"""The discrimination report: do the tests a change adds fail against broken code?

Each case runs the whole gate on the tests' sample project; the broken versions of
head are its known-bad fixtures and mutants of the production lines the change touched.
"""

from __future__ import annotations

import time

import pytest

from andgate.commands.sample import SampleRepo
from harness import BASE_FILES, ONE_KNOWN_BAD
from stories import AGENT_SLUG_TEST, honest_fix

pytestmark = pytest.mark.slow

TAUTOLOGY = (
    "from minilib import slugify\n\n\ndef test_slugify_exists():\n    assert callable(slugify)\n"
)


def _honest_with_tautology(repo: SampleRepo) -> None:
    honest_fix(repo)
    repo.write({"tests/test_agent_types.py": TAUTOLOGY})


def _report(run) -> dict:  # type: ignore[no-untyped-def]
    return {i["nodeid"]: i["discriminates"] for i in run.payload["discrimination"]["items"]}


# A budget no test machine runs out of: the tests about what the report finds must not
# depend on how loaded the machine is (the default is a share of the classes' time).
AMPLE = {"discrimination": True, "discrimination_budget": 300.0}

# The agent's test of the honest fix, written so that it never ends against broken
# code: the `return None` mutant of the line the fix touched hangs it.
HANGS_WHEN_BROKEN = """\
from minilib import slugify


def test_slugify_collapses_separators():
    while slugify("Hello,  World!") != "hello-world":
        pass
"""


def test_a_tautological_agent_test_discriminates_nothing_and_a_real_one_does(sample):
    run = sample.gate(sample.change(_honest_with_tautology), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]  # a warning, by default
    assert _report(run) == {
        "tests/test_agent_types.py::test_slugify_exists": False,
        "tests/test_slugify_agent.py::test_slugify_collapses_separators": True,
    }
    warnings = [w["detail"] for w in run.payload["warnings"]]
    assert any(
        w.startswith("1 of 2 tests the change adds discriminate nothing")
        and "test_agent_types.py::test_slugify_exists" in w
        for w in warnings
    ), warnings
    summary = run.artifact("summary.md")
    assert "AGENT_TESTS_DISCRIMINATE_NOTHING" in summary


def test_a_test_that_only_a_mutant_kills_discriminates(honest_run):
    """No known-bad fixture touches slugify: only a mutant of the line the change
    edited shows that the agent's test of it can fail."""
    run = honest_run
    items = run.payload["discrimination"]["items"]
    assert items == [
        {
            "nodeid": "tests/test_slugify_agent.py::test_slugify_collapses_separators",
            "discriminates": True,
            "against": [a for a in items[0]["against"] if a.startswith("mutant minilib/text.py")],
        }
    ]
    assert items[0]["against"], items


def test_the_report_covers_only_items_that_passed_on_head(sample):
    """The broken versions run beside the untrusted class, so they run every item of
    the touched files; an item that already failed on head is not in the report."""

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        failing = "\n\ndef test_slugify_fails_on_head():\n    assert slugify('a') == 'b'\n"
        repo.write({"tests/test_slugify_agent.py": AGENT_SLUG_TEST + failing})

    run = sample.gate(sample.change(change), **AMPLE)
    assert "UNTRUSTED_FAILED" in run.codes
    assert _report(run) == {"tests/test_slugify_agent.py::test_slugify_collapses_separators": True}


def test_breakages_stop_once_every_item_has_failed_against_one(sample):
    """Mutants of the touched lines run first; once the agent's test failed against
    one, the known-bad fixtures (which do not touch slugify) need not run."""
    run = sample.gate(sample.change(honest_fix), jobs=1, **AMPLE)
    report = run.payload["discrimination"]
    assert report["items"][0]["discriminates"] is True
    assert report["broken_versions"], report
    assert not [b for b in report["broken_versions"] if b.startswith("known-bad")], report
    assert report["incomplete"] is False and report["not_tried"] == []


def test_require_discriminating_tests_makes_it_block(tmp_path):
    from conftest import Sample
    from harness import build_test_sample

    manifest = BASE_FILES["tests/trust_manifest.yaml"] + "require_discriminating_tests: true\n"
    repo, base = build_test_sample(
        tmp_path / "s", {**BASE_FILES, "tests/trust_manifest.yaml": manifest}
    )
    sample = Sample(repo, base, tmp_path)
    run = sample.gate(sample.change(_honest_with_tautology), **AMPLE)
    assert run.decision == "block"
    assert "AGENT_TESTS_DISCRIMINATE_NOTHING" in run.codes
    assert not run.payload["bits"]["untrusted_ok"]


def test_a_doctest_the_change_adds_is_in_the_report_too(tmp_path):
    """pytest collects `test*.txt` doctests: one that passes against every broken
    version still blocks under require_discriminating_tests."""
    from conftest import Sample
    from harness import build_test_sample

    manifest = BASE_FILES["tests/trust_manifest.yaml"] + "require_discriminating_tests: true\n"
    repo, base = build_test_sample(
        tmp_path / "s", {**BASE_FILES, "tests/trust_manifest.yaml": manifest}
    )
    sample = Sample(repo, base, tmp_path)

    def change(r: SampleRepo) -> None:
        honest_fix(r)
        doctest = ">>> from minilib import slugify\n>>> callable(slugify)\nTrue\n"
        r.write({"tests/test_readme.txt": doctest})

    run = sample.gate(sample.change(change), **AMPLE)
    assert run.decision == "block"
    assert "AGENT_TESTS_DISCRIMINATE_NOTHING" in run.codes
    assert _report(run)["tests/test_readme.txt::test_readme.txt"] is False


def test_no_discrimination_skips_it(sample):
    run = sample.gate(sample.change(_honest_with_tautology), discrimination=False)
    assert run.payload["discrimination"] is None
    assert AGENT_SLUG_TEST  # the story's test is what the change adds


def test_only_runs_that_expect_failures_skip_the_long_traceback(sample, monkeypatch):
    """Replays and discrimination runs only read which items failed; the classes' runs
    keep the user's traceback style, since a reviewer reads their failures."""
    import andgate.check.context
    import andgate.check.discrimination.phase
    import andgate.check.oracle.replay

    requests = []
    for module in (
        andgate.check.context,
        andgate.check.discrimination.phase,
        andgate.check.oracle.replay,
    ):

        def recording(request, *args, _real=module.run_pytest, **kwargs):
            requests.append((request.label, request.failures_expected))
            return _real(request, *args, **kwargs)

        monkeypatch.setattr(module, "run_pytest", recording)
    run = sample.gate(sample.change(_honest_with_tautology), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]
    breaking = {label: flag for label, flag in requests if label.startswith(("known-bad", "disc"))}
    ordinary = {label: flag for label, flag in requests if label not in breaking}
    assert breaking and set(breaking.values()) == {True}, requests
    assert {"oracle", "base oracle", "property", "untrusted", "flake"} <= set(ordinary)
    assert set(ordinary.values()) == {False}, requests


def _hanging_change(repo: SampleRepo) -> None:
    honest_fix(repo)
    repo.write({"tests/test_slugify_agent.py": HANGS_WHEN_BROKEN})


def _required_sample(tmp_path, known_bad=ONE_KNOWN_BAD):  # type: ignore[no-untyped-def]
    from conftest import Sample
    from harness import build_test_sample

    manifest = BASE_FILES["tests/trust_manifest.yaml"] + "require_discriminating_tests: true\n"
    if not known_bad:
        manifest = manifest.replace(
            "oracle_must_fail_known_bad: true", "oracle_must_fail_known_bad: false"
        )
    files = {**BASE_FILES, "tests/trust_manifest.yaml": manifest}
    repo, base = build_test_sample(tmp_path / "s", files, known_bad=known_bad)
    return Sample(repo, base, tmp_path)


def _timed(monkeypatch):  # type: ignore[no-untyped-def]
    """When the classes ended (the budget starts), and each breakage's run."""
    import andgate.check.discrimination.phase as module

    known: list[float] = []
    runs: list[tuple[float, float]] = []
    real_know, real_run = module._Found.know, module.run_pytest

    def know(self, agent, waited=0.0):  # type: ignore[no-untyped-def]
        known.append(time.monotonic())
        return real_know(self, agent, waited)

    def run(*args, **kwargs):  # type: ignore[no-untyped-def]
        began = time.monotonic()
        try:
            return real_run(*args, **kwargs)
        finally:
            runs.append((began, time.monotonic()))

    monkeypatch.setattr(module._Found, "know", know)
    monkeypatch.setattr(module, "run_pytest", run)
    return known, runs


def test_a_breakage_that_hangs_is_ended_at_the_budget_and_the_report_says_so(sample, monkeypatch):
    """The check's --timeout is 300 s; the budget (1 s from the classes' end) kills
    the hanging breakage, and the report names what it did not get to."""
    known, runs = _timed(monkeypatch)
    run = sample.gate(
        sample.change(_hanging_change), discrimination=True, discrimination_budget=1.0
    )
    assert run.decision == "allow", run.payload["reasons"]  # a warning, by default
    (classes_ended,) = known
    # The kill itself takes under a second (test_unit_discrimination); the slack here is
    # for a loaded machine, far below the 300 s the timeout would have taken.
    assert runs and all(end < classes_ended + 1.0 + 5.0 for _, end in runs), (known, runs)
    report = run.payload["discrimination"]
    assert report["incomplete"] is True and report["budget_seconds"] == 1.0
    assert report["not_tried"] and report["not_tried"][0].startswith("mutant minilib/text.py")
    assert _report(run) == {"tests/test_slugify_agent.py::test_slugify_collapses_separators": False}
    (warning,) = [
        w["detail"]
        for w in run.payload["warnings"]
        if w["code"] == "AGENT_TESTS_DISCRIMINATE_NOTHING"
    ]
    assert "were not shown to discriminate" in warning and "ran out before" in warning
    summary = run.artifact("summary.md")
    assert "Not tried, the time budget ran out" in summary
    assert f"- {report['not_tried'][0]}" in summary


def test_require_discriminating_tests_blocks_when_the_budget_ran_out_first(tmp_path):
    """What was not tried is not a pass: the one breakage that would have shown the
    test discriminates was ended by the budget, so the required report blocks. No
    known-bad fixture here: nothing ran to completion, so only the budget blocks."""
    sample = _required_sample(tmp_path, known_bad=())
    run = sample.gate(
        sample.change(_hanging_change), discrimination=True, discrimination_budget=1.0
    )
    assert run.decision == "block"
    assert run.codes == ["AGENT_TESTS_DISCRIMINATE_NOTHING"], run.payload["reasons"]
    report = run.payload["discrimination"]
    assert report["not_tried"] and report["broken_versions"] == []


def test_a_test_appended_to_an_existing_file_is_the_only_one_reported(sample):
    """The report covers the tests the change adds, not the file's other tests: a
    test appended to a module keeps no broken version running for its neighbours."""

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        appended = (
            "\n\nfrom minilib import slugify\n\n\ndef test_slugify_in_misc():\n"
            "    assert slugify('A  b') == 'a-b'\n"
        )
        old = (repo.path / "tests/test_misc.py").read_text(encoding="utf-8")
        repo.write({"tests/test_misc.py": old + appended})

    run = sample.gate(sample.change(change), **AMPLE)
    assert run.decision == "allow", run.payload["reasons"]
    report = _report(run)
    assert "tests/test_misc.py::test_slugify_in_misc" in report
    assert "tests/test_misc.py::test_clamp_inside_range" not in report
