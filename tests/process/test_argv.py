"""pytest's arguments for the gate's runs (`process.argv.pytest_argv`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from andgate.plugin.classify import Rules
from andgate.process.argv import pytest_argv
from andgate.process.forkclient import stop_fork_server
from andgate.process.requests import RunRequest
from andgate.process.run import run_pytest
from andgate.records import Role

MODULE = """\
import pytest

LIMIT = 3
assert LIMIT > 0  # at import: runs during collection too


@pytest.mark.parametrize("n", range(LIMIT))
def test_under_limit(n):
    assert n < LIMIT
"""


def argv_of(request: RunRequest) -> list[str]:
    return pytest_argv(request, Path("spec.json"), None, Path("wt"), Path("wt/pytest.ini"))


def test_only_a_collection_skips_assertion_rewriting() -> None:
    """A collection runs no test body, so rewriting asserts is work for nothing; a
    run keeps pytest's assertion introspection."""
    collect = RunRequest("base oracle", Role.ORACLE, Rules(), collect_only=True)
    run = RunRequest("oracle", Role.ORACLE, Rules())
    assert argv_of(collect)[-2:] == ["--collect-only", "--assert=plain"]
    assert not any(arg.startswith("--assert") for arg in argv_of(run))


@pytest.mark.slow
def test_a_collection_imports_test_modules_unrewritten_and_finds_every_item(
    tmp_path: Path,
) -> None:
    """Even with `--assert=rewrite` in the project's addopts (the command line wins),
    no rewritten-assert cache is written, and the items are pytest's own."""
    root = tmp_path / "tree"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\naddopts = --assert=rewrite\n", encoding="utf-8")
    (root / "tests/test_limit.py").write_text(MODULE, encoding="utf-8")
    name = "tests/test_limit.py"
    request = RunRequest(
        "base oracle",
        Role.ORACLE,
        Rules(oracle_files=frozenset({name})),
        (name,),
        collect_only=True,
    )
    stop_fork_server()
    result = run_pytest(request, root, tmp_path / "scratch", 120)
    assert result.error is None, result.error
    assert [i.facts.nodeid for i in result.selected(Role.ORACLE)] == [
        f"{name}::test_under_limit[{n}]" for n in range(3)
    ]
    caches = [p.name for p in (root / "tests").rglob("*.pyc")]
    assert caches and not [c for c in caches if "-pytest-" in c], caches
