"""The seams: what each layer may import (checked on the source, no import side effects)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import andgate

PACKAGE = Path(andgate.__file__).parent
PURE = ("records", "verdict")
FORBIDDEN_FOR_PURE = {"andgate.run", "andgate.git", "andgate.worktree", "subprocess"}
# Loaded into the user's pytest process: pytest and the standard library only.
IN_PYTEST_PROCESS = (
    "plugin",
    "classify",
    "shard",
    "redirect",
    "records",
    "forkserver",
    "isolation",
)


def imports_of(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def closure(module: str) -> set[str]:
    """Everything `module` imports, following andgate's own modules."""
    seen: set[str] = set()
    visited, todo = {module}, [module]
    while todo:
        for name in imports_of(todo.pop()):
            seen.add(name)
            own = name.removeprefix("andgate.")
            if name != own and (PACKAGE / f"{own}.py").exists() and own not in visited:
                visited.add(own)
                todo.append(own)
    return seen


def test_records_imports_nothing_of_andgate():
    assert not {n for n in imports_of("records") if n.startswith("andgate")}


@pytest.mark.parametrize("module", PURE)
def test_the_verdict_never_reaches_processes_or_git(module):
    assert not closure(module) & FORBIDDEN_FOR_PURE


@pytest.mark.parametrize("module", IN_PYTEST_PROCESS)
def test_modules_loaded_into_pytest_import_only_pytest_and_the_standard_library(module):
    import sys

    for name in closure(module):
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names or top in ("pytest", "_pytest", "andgate"), name
        if top == "andgate" and name.count(".") == 1 and (PACKAGE / f"{name[8:]}.py").exists():
            assert name[8:] in IN_PYTEST_PROCESS, f"{module} pulls in {name}"
