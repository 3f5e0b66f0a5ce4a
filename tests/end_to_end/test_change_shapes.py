"""Every change shape through every phase that reads the diff (issue 23, part 1).

Added, deleted, renamed (with and without edits), copied, mode-only, symlink,
binary, empty, file-to-folder and submodule changes, at production, test and
trust-root paths (`shapes.py`), each gated whole: authorship, locks, the
production scan, the oracle phase with its known-bad replay (staleness), seeds,
the untrusted phase with the discrimination report, and every artifact. Each
ends in a verdict with its reasons, never a traceback or a GATE_ERROR. Then
Hypothesis combines the primitive steps into random change sets, and
`known-bad harvest` reverts every production shape from history.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from andgate.commands.known_bad import run_harvest
from andgate.commands.sample import AGENT
from andgate.git import parse_raw_diff
from conftest import GateRun, Sample
from harness import ONE_KNOWN_BAD, build_test_sample
from shapes import (
    CONTENTS,
    NEW_PATHS,
    NEW_PRODUCTION,
    OPERATIONS,
    PRODUCTION,
    SHAPES,
    SHAPES_BASE_FILES,
    Operation,
    Shape,
)

pytestmark = pytest.mark.slow

REPORTS = (
    "verdict.json",
    "summary.md",
    "report.html",
    "trust_inventory.json",
    "property_seeds.json",
    "known_bad.json",
)


@pytest.fixture
def shapes_sample(tmp_path: Path) -> Sample:
    repo, base = build_test_sample(tmp_path / "sample", SHAPES_BASE_FILES, ONE_KNOWN_BAD)
    return Sample(repo, base, tmp_path)


def gate_change(sample: Sample, head: str, approved: bool) -> GateRun:
    """The whole check, the discrimination report included (it reads the diff)."""
    return sample.gate(
        head, discrimination=True, approved_by=("alice",) if approved else (), timeout=120
    )


def assert_a_verdict_with_reasons(run: GateRun) -> None:
    """A decision andgate reached, not one its own failure forced."""
    assert "GATE_ERROR" not in run.codes, run.details("GATE_ERROR")
    assert not (run.artifacts / "logs" / "gate_error.log").exists()
    assert run.decision in ("allow", "block")
    assert (run.decision == "block") == bool(run.codes), run.payload["reasons"]
    for name in REPORTS:
        assert (run.artifacts / name).is_file(), name


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_each_change_shape_ends_in_its_verdict(shapes_sample: Sample, shape: Shape) -> None:
    run = gate_change(shapes_sample, shapes_sample.change(shape.apply), shape.approved)
    assert_a_verdict_with_reasons(run)
    assert set(run.codes) == shape.codes, run.payload["reasons"]


def test_an_added_module_with_its_test_is_reported_on(shapes_sample: Sample) -> None:
    """The issue's case: the discrimination report read the added file's old path.
    Its mutants of the new module now run, and the new test kills one."""
    run = gate_change(shapes_sample, shapes_sample.change(PRODUCTION[0].apply), False)
    assert run.decision == "allow", run.payload["reasons"]
    report = run.payload["discrimination"]
    assert any(a.startswith("mutant minilib/newmod.py") for a in report["broken_versions"])
    [item] = report["items"]
    assert item["nodeid"] == "tests/test_newmod.py::test_twice" and item["discriminates"]


def test_every_side_of_a_change_is_read_by_its_blob(shapes_sample: Sample) -> None:
    """`read_sides` reads by sha, so a path cannot stop it (a newline in a name)."""
    repo = shapes_sample.repo
    head = shapes_sample.change(lambda r: r.write({"minilib/new\nline.py": "x = 1\n"}))
    raw = repo.git.run("diff", "--raw", "-z", "--no-abbrev", shapes_sample.base, head).stdout
    [change] = parse_raw_diff(raw)
    assert change.new_sha and change.old_path is None
    assert repo.git.read_sides(shapes_sample.base, head, change) == (None, b"x = 1\n")


# -- random change sets --------------------------------------------------------------------

existing = st.sampled_from(sorted(p for p in SHAPES_BASE_FILES if p != ".gitignore"))
any_path = st.one_of(existing, st.sampled_from(NEW_PATHS))
operations = st.one_of(
    st.builds(Operation, st.just("write"), any_path, st.sampled_from(sorted(CONTENTS))),
    st.builds(Operation, st.just("add module"), st.sampled_from(NEW_PRODUCTION[:3]), st.just("")),
    st.builds(Operation, st.sampled_from(OPERATIONS), existing, any_path),
)


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(operations, min_size=1, max_size=5), approved=st.booleans())
def test_any_change_set_ends_in_a_verdict_with_reasons(
    shapes_sample: Sample, steps: list[Operation], approved: bool
) -> None:
    """Whatever the change, the check decides; it never breaks on it."""

    def apply(repo) -> None:  # type: ignore[no-untyped-def]
        repo.run("clean", "-ffdxq")
        for step in steps:
            step.apply(repo)

    run = gate_change(shapes_sample, shapes_sample.change(apply), approved)
    assert_a_verdict_with_reasons(run)


# -- harvest: every production shape, reverted from history ---------------------------------


def test_harvest_reverts_every_production_shape(shapes_sample: Sample, capsys) -> None:  # type: ignore[no-untyped-def]
    """Each production shape committed, then undone: the harvest reverts both
    commits of each onto HEAD (the shape backwards and forwards) without failing."""
    repo = shapes_sample.repo
    repo.run("checkout", "-q", "--detach", shapes_sample.base)
    for shape in PRODUCTION:
        shape.apply(repo)
        done = repo.commit(shape.name, who=AGENT)
        repo.run("checkout", "-q", "--detach", shapes_sample.base)
        repo.run("clean", "-ffdxq")
        repo.run("reset", "-q", "--soft", done)
        repo.commit(f"undo {shape.name}", who=AGENT)
    out = shapes_sample.tmp / "proposals"
    code = run_harvest(
        repo.path,
        manifest="tests/trust_manifest.yaml",
        limit=2 * len(PRODUCTION),
        out=out,
        jobs=2,
        cache_dir=shapes_sample.tmp / "cache",
    )
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    fates = [r["fate"] for r in report["results"]]
    assert fates and "error" not in fates, report["results"]
