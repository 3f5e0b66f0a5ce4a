"""What is imported is what was scanned (issue 28): a module a pytest process imports
from its worktree must be a plain Python source file the production scan read."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from andgate.check.production.phase import ScanResult, with_unscanned_imports
from andgate.commands.sample import SampleRepo
from andgate.git import Change
from andgate.plugin import redirect
from andgate.process.results import RunResult
from andgate.records import Construct

CHEAT = "def chunk(seq, n):\n    return [[1, 2], [3, 4], [5]]\n"


@pytest.fixture
def clean_import(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Import modules from a tmp folder; forget them afterwards."""
    before = set(sys.modules)
    yield lambda folder: monkeypatch.syspath_prepend(str(folder))
    for name in set(sys.modules) - before:
        del sys.modules[name]
    importlib.invalidate_caches()


def test_a_module_reached_through_a_symlink_is_reported(tmp_path: Path, clean_import) -> None:  # type: ignore[no-untyped-def]
    worktree = tmp_path / "wt"
    (worktree / "notes").mkdir(parents=True)
    (worktree / "evpkg").mkdir()
    (worktree / "evpkg/__init__.py").write_text("")
    (worktree / "evpkg/plain.py").write_text("X = 1\n")
    (worktree / "notes/cheat.txt").write_text(CHEAT)
    os.symlink("../notes/cheat.txt", worktree / "evpkg/core.py")
    clean_import(worktree)
    importlib.import_module("evpkg.plain")
    importlib.import_module("evpkg.core")
    assert redirect.unscanned_modules(str(worktree)) == [
        {
            "module": "evpkg.core",
            "path": "evpkg/core.py",
            "target": "notes/cheat.txt",
            "why": "reached through the symlink evpkg/core.py",
        }
    ]


def test_a_module_under_a_symlinked_folder_is_reported(tmp_path: Path, clean_import) -> None:  # type: ignore[no-untyped-def]
    worktree = tmp_path / "wt"
    (worktree / "elsewhere").mkdir(parents=True)
    (worktree / "elsewhere/__init__.py").write_text("")
    (worktree / "elsewhere/core.py").write_text(CHEAT)
    os.symlink("elsewhere", worktree / "evlinked")
    clean_import(worktree)
    importlib.import_module("evlinked.core")
    found = {f["module"]: f["why"] for f in redirect.unscanned_modules(str(worktree))}
    assert found["evlinked.core"] == "reached through the symlink evlinked"


def test_a_module_loaded_from_another_kind_of_file_is_reported(tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / "payload.txt").write_text("X = 1\n")
    module = type(sys)("evtextmodule")
    module.__file__ = str(worktree / "payload.txt")
    sys.modules["evtextmodule"] = module
    try:
        found = redirect.unscanned_modules(str(worktree))
    finally:
        del sys.modules["evtextmodule"]
    assert [(f["module"], f["why"]) for f in found] == [
        ("evtextmodule", "not a Python source file (.txt)")
    ]


def run_with(*unscanned: tuple[str, str, str, str]) -> RunResult:
    return RunResult("oracle", 0, 1.0, unscanned=unscanned)


LINK = (
    "pkg.core",
    "src/pkg/core.py",
    "notes/cheat.txt",
    "reached through the symlink src/pkg/core.py",
)


def change(path: str) -> Change:
    return Change("A", None, path, "000000", "120000")


def test_an_unscanned_import_the_change_touched_is_suspicious() -> None:
    scan = with_unscanned_imports(ScanResult(), [run_with(LINK)], [change("src/pkg/core.py")], {})
    assert len(scan.suspicious) == 1
    assert scan.suspicious[0].startswith("src/pkg/core.py: the oracle process imported pkg.core")


def test_a_changed_target_behind_an_old_link_is_suspicious() -> None:
    scan = with_unscanned_imports(ScanResult(), [run_with(LINK)], [change("notes/cheat.txt")], {})
    assert len(scan.suspicious) == 1


def test_an_old_link_to_an_old_file_and_an_allowed_link_are_not() -> None:
    assert with_unscanned_imports(ScanResult(), [run_with(LINK)], [change("README")], {}) == (
        ScanResult()
    )
    allow = {"src/pkg/**": frozenset({Construct.SYMLINK})}
    touched = [change("src/pkg/core.py")]
    assert with_unscanned_imports(ScanResult(), [run_with(LINK)], touched, allow) == ScanResult()


def symlinked_module(repo: SampleRepo) -> None:
    """minilib/text.py becomes a symlink to a text file holding the fixed code."""
    text = (repo.path / "minilib/text.py").read_text(encoding="utf-8")
    fixed = text.replace('r"[^a-z0-9]"', 'r"[^a-z0-9]+"')
    (repo.path / "notes").mkdir()
    (repo.path / "notes/text.txt").write_text(fixed, encoding="utf-8")
    (repo.path / "minilib/text.py").unlink()
    os.symlink("../notes/text.txt", repo.path / "minilib/text.py")


@pytest.mark.slow
def test_a_symlinked_module_is_named_by_the_scan_and_by_the_import_audit(sample) -> None:  # type: ignore[no-untyped-def]
    run = sample.gate(sample.change(symlinked_module))
    details = run.details("PRODUCTION_SUSPICIOUS")
    assert any("[symlink]" in d and d.startswith("minilib/text.py") for d in details), details
    assert any("process imported minilib.text from it" in d for d in details), details
    assert run.decision == "block"


def test_a_shard_bundle_carries_the_unscanned_imports_to_combine() -> None:
    import json

    from andgate.check.bundle import run_from_json, run_to_json

    run = run_with(LINK)
    assert run_from_json(json.loads(json.dumps(run_to_json(run)))).unscanned == (LINK,)


def test_the_last_phase_adds_unscanned_imports_and_installed_hooks_to_the_scan() -> None:
    """The inventory phase, where authorship is decided, hands both to the verdict."""
    import datetime as dt

    from andgate.check.inventory.phase import run_inventory_phase
    from andgate.check.state import CheckState, RunKey, RunName
    from andgate.process.requests import RunEnvironment
    from andgate.trust.config import BaseConfig
    from andgate.trust.freeze import FreezeSet
    from andgate.trust.manifest import parse_manifest
    from andgate.trust.paths import ConfigChanges
    from harness import MANIFEST

    config = BaseConfig(
        manifest=parse_manifest(MANIFEST.encode(), "tests/trust_manifest.yaml"),
        freezes=FreezeSet("freeze.yaml"),
        accepted=frozenset(),
        invariants_found=True,
        known_bad=(),
    )
    state = CheckState(environment=RunEnvironment(head_only_plugins=("cheat",)))
    runs = {RunKey(RunName.ORACLE): run_with(LINK)}
    touched = [Change("A", None, "src/pkg/core.py", "000000", "120000")]
    today = dt.date(2026, 1, 1)
    outcome = run_inventory_phase(
        state, runs, config, touched, ConfigChanges(), ScanResult(), approved_by=(), today=today
    )
    found = outcome.changes.suspicious
    assert any("imported pkg.core" in f for f in found), found
    assert any("pytest plugin 'cheat'" in f for f in found), found
