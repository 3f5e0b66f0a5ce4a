"""`andgate replay-known-bad`: the known-bad proof on the working tree (or --rev), alone.

Runs on the sample project, whose two fixtures are real `git diff`s of
production bugs. Exit codes: 0 every fixture bit, 1 one stayed green or did
not apply (or the oracle cannot prove anything), 3 no fixtures.
"""

from __future__ import annotations

import pytest

from andgate.commands.cli import main
from andgate.commands.replay_known_bad import run_replay_known_bad

MANIFEST = "tests/trust_manifest.yaml"
KNOWN_BAD = "tests/oracles/known_bad"

pytestmark = pytest.mark.both_known_bad  # replays every fixture of the sample


def replay(sample, rev: str | None = None) -> int:
    return run_replay_known_bad(sample.path, manifest=MANIFEST, jobs=2, rev=rev)


def fixture_line(out: str, name: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith(f"  {name} ")]
    return line


def test_every_fixture_bites_on_rev_and_a_dirty_tree_stays_untouched(sample, capsys, fingerprint):
    # In the working tree, kb_clamp_ignores_lo would no longer apply: with --rev,
    # replay uses the commit, and leaves every uncommitted byte where it was.
    sample.repo.edit("minilib/mathx.py", "max(lo, min(x, hi))", "min(max(x, lo), hi)")
    sample.repo.write({"notes.txt": "uncommitted\n"})
    before = fingerprint(sample.path)
    status = sample.repo.run("status", "--porcelain")
    assert replay(sample, rev="HEAD") == 0
    out = capsys.readouterr().out
    assert out.startswith(f"andgate replay-known-bad: --rev HEAD ({sample.base[:12]})")
    assert "2 fixtures from tests/oracles/known_bad" in out
    assert "oracle class 8 items in 2 files" in out
    chunk = fixture_line(out, "kb_chunk_drops_tail")
    assert "bites" in chunk
    assert "applied; oracle failed: tests/oracles/test_text_oracle.py::" in chunk
    assert "s  applied" in chunk  # the time column
    assert "bites" in fixture_line(out, "kb_clamp_ignores_lo")
    assert out.endswith("result: 2 of 2 fixtures bit\n")
    assert fingerprint(sample.path) == before
    assert sample.repo.run("status", "--porcelain") == status
    assert sample.repo.run("worktree", "list").count("\n") == 0
    assert sample.repo.run("stash", "list") == ""


def test_the_working_tree_is_judged_with_its_uncommitted_edits(sample, capsys, fingerprint):
    """Without --rev, the uncommitted rewrite of clamp is what the fixtures meet."""
    sample.repo.edit("minilib/mathx.py", "max(lo, min(x, hi))", "min(max(x, lo), hi)")
    before = fingerprint(sample.path)
    assert replay(sample) == 1
    out = capsys.readouterr().out
    assert "uncommitted edits included" in out.splitlines()[0]
    assert "STALE" in fixture_line(out, "kb_clamp_ignores_lo")
    assert fingerprint(sample.path) == before


def test_a_stale_and_a_green_fixture_exit_1(sample, capsys):
    harmless = sample.repo.diff_of(
        [("minilib/mathx.py", '"""Number helpers."""', '"""Helpers for numbers."""')]
    )
    sample.repo.write({f"{KNOWN_BAD}/kb_docstring_only.patch": harmless})
    sample.repo.edit("minilib/mathx.py", "max(lo, min(x, hi))", "min(max(x, lo), hi)")
    sample.repo.commit("clamp rewritten; a fixture that changes nothing observable")
    assert replay(sample) == 1
    out = capsys.readouterr().out
    assert "bites" in fixture_line(out, "kb_chunk_drops_tail")
    stale = fixture_line(out, "kb_clamp_ignores_lo")
    assert "STALE" in stale and "does not apply to HEAD (KNOWN_BAD_STALE)" in stale
    green = fixture_line(out, "kb_docstring_only")
    assert "GREEN" in green and "every oracle item passed (ORACLE_NEUTRALIZED)" in green
    assert out.endswith("result: 1 of 3 fixtures bit\n")


def test_a_failing_oracle_on_head_proves_nothing(sample, capsys):
    sample.repo.edit(
        "minilib/mathx.py", "return sum(xs) / len(xs)", "return sum(xs) / (len(xs) + 1)"
    )
    sample.repo.delete(f"{KNOWN_BAD}/kb_chunk_drops_tail.patch")
    sample.repo.commit("mean truncates")
    assert replay(sample) == 1
    out = capsys.readouterr().out
    assert "bites" in fixture_line(out, "kb_clamp_ignores_lo")
    assert "the oracle class does not pass on HEAD without any fixture" in out
    assert "tests/oracles/test_math_oracle.py::test_mean failed" in out


def test_exit_3_without_fixtures(sample, capsys):
    for name in ("kb_chunk_drops_tail", "kb_clamp_ignores_lo"):
        sample.repo.delete(f"{KNOWN_BAD}/{name}.patch")
    sample.repo.commit("no fixtures")
    assert main(["replay-known-bad", "--repo", str(sample.path)]) == 3
    assert f"no *.patch fixture under {KNOWN_BAD};" in capsys.readouterr().out


def test_exit_1_when_no_oracle_file_exists(sample, capsys):
    sample.repo.edit(MANIFEST, '"tests/oracles/**/*.py"', '"tests/golden/**/*.py"')
    sample.repo.commit("oracle globs match nothing")
    assert replay(sample) == 1
    assert "has no file matching classes.oracle.globs" in capsys.readouterr().out


def test_an_invalid_manifest_is_one_line_naming_the_key(sample, capsys):
    sample.repo.edit(MANIFEST, "known_bad_dir:", "known_bad_folder:")
    sample.repo.commit("typo")
    assert main(["replay-known-bad", "--repo", str(sample.path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "unknown key 'known_bad_folder'; did you mean 'known_bad_dir'?" in err


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["replay-known-bad", "--help"])
    assert exc.value.code == 0
    assert "--jobs N" in capsys.readouterr().out


def test_the_baseline_judges_skips_as_check_does_with_base_being_head():
    """A skip that holds on base = HEAD (a mark, a skip from code, a standard-library
    module this Python lacks) is no failure of the baseline; a skip for a module
    the change controls, an xfail and an xpass are (no process: the judgement)."""
    from andgate.commands.replay_known_bad import _baseline
    from andgate.process.results import CollectedItem, RunResult
    from andgate.records import ItemFacts

    F = "tests/oracles/test_a.py"

    def skipped(reason, when="call", **extra):
        entry = {"setup": "passed", "call": "passed", "teardown": "passed", "skip_when": when}
        return {**entry, when: "skipped", "message": reason, **extra}

    passed = {"setup": "passed", "call": "passed", "teardown": "passed"}
    reports = {
        f"{F}::by_mark": skipped("Windows only", when="setup"),
        f"{F}::by_code": skipped("requires Python 4"),
        f"{F}::gdbm": skipped(
            "requires gdbm", skip_missing_module=True, skip_missing_names=["_gdbm"]
        ),
        f"{F}::numpy": skipped("no numpy", skip_missing_module=True, skip_missing_names=["numpy"]),
        f"{F}::xfail": {**passed, "call": "skipped", "wasxfail": True, "message": "bug"},
        f"{F}::fine": passed,
    }
    marks = {f"{F}::by_mark": "Windows only"}
    items = tuple(
        CollectedItem(ItemFacts(n, F, n.rpartition("::")[2]), "oracle", "glob", marks.get(n))
        for n in reports
    )
    baseline = _baseline(RunResult("oracle", 0, 1.0, items=items, reports=reports))
    assert baseline.not_passing == ((f"{F}::numpy", "skipped"), (f"{F}::xfail", "xfailed"))
    assert (baseline.items, baseline.files, baseline.error) == (6, 1, None)
