"""Build files compared by what they declare, end to end (issue 37 item 2; contract
section 2, "Trust-root files"): a packaging-only `pyproject.toml` added or deleted, and
a version bump in a `setup.cfg` that starts with a byte-order mark, are everyday
changes the gate allows; beside each, its control, where the same change adds or
removes a real `pytest11` declaration, is `TRUST_ROOT_CHANGED` naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from andgate.commands.sample import SampleRepo
from conftest import Sample
from harness import BASE_FILES
from harness import build_test_sample as build_sample

pytestmark = pytest.mark.slow

PACKAGING = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "minilib"
version = "1.0"
dependencies = []
"""
DECLARATION = '\n[project.entry-points.pytest11]\nminilib = "minilib.mathx"\n'
BOM = "\ufeff"
# pytest's configuration in setup.cfg too (no pytest.ini): pytest reads it through the BOM
SETUP_CFG = (
    BOM + "[metadata]\nname = minilib\nversion = 1.0\n\n"
    "[options]\npackages = minilib\n\n[tool:pytest]\ntestpaths = tests\n"
)
CFG_DECLARATION = "\n[options.entry_points]\npytest11 =\n    minilib = minilib.mathx\n"


def sample_with(tmp_path: Path, files: dict[str, str], drop: tuple[str, ...] = ()) -> Sample:
    kept = {k: v for k, v in BASE_FILES.items() if k not in drop}
    repo, base = build_sample(tmp_path / "sample", {**kept, **files})
    return Sample(repo, base, tmp_path)


def trust_root_files(run) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(d.split(" ", 1)[0] for d in run.details("TRUST_ROOT_CHANGED"))


def assert_allowed(run) -> None:  # type: ignore[no-untyped-def]
    assert run.decision == "allow", run.payload["reasons"]
    assert "TRUST_ROOT_CHANGED" not in run.codes


def assert_blocked_naming(run, path: str) -> None:  # type: ignore[no-untyped-def]
    assert run.decision == "block"
    assert trust_root_files(run) == [path], run.payload["reasons"]
    assert "pytest11" in run.details("TRUST_ROOT_CHANGED")[0]


@pytest.mark.parametrize("declares", [False, True], ids=["packaging-only", "control-pytest11"])
def test_adding_a_pyproject_toml_counts_only_when_it_declares_a_pytest_plugin(sample, declares):
    def add(repo: SampleRepo) -> None:
        repo.write({"pyproject.toml": PACKAGING + (DECLARATION if declares else "")})

    run = sample.gate(sample.change(add))
    if declares:
        assert_blocked_naming(run, "pyproject.toml")
    else:
        assert_allowed(run)


@pytest.mark.parametrize("declared", [False, True], ids=["packaging-only", "control-pytest11"])
def test_deleting_a_pyproject_toml_counts_only_when_it_declared_a_pytest_plugin(tmp_path, declared):
    sample = sample_with(
        tmp_path, {"pyproject.toml": PACKAGING + (DECLARATION if declared else "")}
    )
    run = sample.gate(sample.change(lambda repo: repo.delete("pyproject.toml")))
    if declared:
        assert_blocked_naming(run, "pyproject.toml")
    else:
        assert_allowed(run)


@pytest.mark.parametrize(
    ("declared", "adds"),
    [(False, False), (True, False), (False, True)],
    ids=["version-bump", "version-bump-beside-a-declaration", "control-pytest11"],
)
def test_a_setup_cfg_with_a_byte_order_mark_is_read_as_declared(tmp_path, declared, adds):
    """The BOM is no parse error: a version bump beside base's own declaration is
    read as one (an unreadable file that names pytest11 would count)."""
    cfg = SETUP_CFG + (CFG_DECLARATION if declared else "")
    sample = sample_with(tmp_path, {"setup.cfg": cfg}, drop=("pytest.ini",))
    assert (sample.path / "setup.cfg").read_bytes().startswith(b"\xef\xbb\xbf")

    def bump(repo: SampleRepo) -> None:
        bumped = cfg.replace("version = 1.0", "version = 1.1")
        repo.write({"setup.cfg": bumped + (CFG_DECLARATION if adds else "")})

    run = sample.gate(sample.change(bump))
    if adds:
        assert_blocked_naming(run, "setup.cfg")
    else:
        assert_allowed(run)
