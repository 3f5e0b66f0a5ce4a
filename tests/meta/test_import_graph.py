"""The seams: what each stage may import, read from the source (no import side effects).

Every `import` counts, also those inside functions and under `TYPE_CHECKING`: an
import that only runs later still ties two modules together.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

import andgate

PACKAGE = Path(andgate.__file__).parent
STAGES = ("plugin", "trust", "process", "check", "report", "commands")
LEAVES = (
    "andgate.records",
    "andgate.verdict",
    "andgate.errors",
    "andgate.exitcodes",
    "andgate.git",
    "andgate.writer",
)
# What each stage may import besides itself, the leaves and the package's `__version__`:
# the pipeline reads downwards (commands -> check -> report -> process -> trust -> plugin).
# The report renders the records a check returns and never asks how a check runs.
MAY_IMPORT = {
    "plugin": (),
    "trust": ("plugin",),
    "process": ("plugin", "trust"),
    "report": ("plugin", "trust", "process"),
    "check": ("plugin", "trust", "process", "report"),
    "commands": ("plugin", "trust", "process", "check", "report"),
}
MAX_TOP_LEVEL_ENTRIES = 15


def module_files() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if "samples" in parts or "templates" in parts:
            continue  # package data: the demo's project, not andgate's code
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = module_files()


def own_module(name: str) -> str:
    """The andgate module `name` (a module or a name inside one) lives in."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


@cache
def imports_of(module: str) -> frozenset[str]:
    """Every dotted name `module` imports (absolute imports: the project uses no others)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{module}: relative import"
            assert node.module is not None
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return frozenset(found)


@cache
def own_imports(module: str) -> frozenset[str]:
    """The andgate modules `module` imports directly."""
    names = {n for n in imports_of(module) if n == "andgate" or n.startswith("andgate.")}
    return frozenset(own_module(n) for n in names) - {module, "andgate"}


def closure(module: str) -> set[str]:
    """`module`'s andgate modules, and every name imported along the way."""
    seen, todo = {module}, [module]
    while todo:
        for name in own_imports(todo.pop()):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def stage_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in STAGES) else None


def cycles() -> Iterator[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(node: str) -> Iterator[list[str]]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in own_imports(node):
            if nxt not in index:
                yield from visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                yield sorted(component)

    for module in sorted(MODULES):
        if module not in index:
            yield from visit(module)


def test_the_graph_sees_every_kind_of_import():
    # Guards the reader: the pipeline imports its phases at module level, the
    # artifacts writer its HTML page inside a function.
    assert "andgate.check.oracle.phase" in own_imports("andgate.check.pipeline")
    assert own_imports("andgate.commands.cli")


def test_no_import_cycles():
    assert list(cycles()) == []


def test_the_top_of_the_package_stays_small():
    entries = [p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"]
    assert len(entries) <= MAX_TOP_LEVEL_ENTRIES, sorted(entries)


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_is_a_package_that_says_its_one_job(stage):
    init = PACKAGE / stage / "__init__.py"
    assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), stage


@pytest.mark.parametrize(
    "package",
    sorted(m for m in MODULES if MODULES[m].name == "__init__.py" and m != "andgate"),
)
def test_subpackages_import_nothing(package):
    """Importing any module runs its packages' `__init__`: they stay empty, so a
    module pytest loads never drags a stage's code in with it."""
    assert not imports_of(package)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if stage_of(m)))
def test_each_stage_imports_only_what_lies_below_it(module):
    stage = stage_of(module)
    allowed = {stage, *MAY_IMPORT[stage]}
    for name in own_imports(module):
        other = stage_of(name)
        assert other is None or other in allowed, f"{module} imports {name}"


@pytest.mark.parametrize("leaf", LEAVES)
def test_leaves_import_no_stage(leaf):
    assert not {m for m in closure(leaf) if stage_of(m)}, leaf


def test_records_imports_nothing_of_andgate():
    assert not own_imports("andgate.records")


def test_the_verdict_never_reaches_processes_or_git():
    reached = closure("andgate.verdict")
    assert reached <= {"andgate.verdict", "andgate.records", "andgate.exitcodes"}
    assert not {"subprocess", "os"} & imports_of("andgate.verdict")


REPORT_MODULES = sorted(m for m in MODULES if stage_of(m) == "report")


@pytest.mark.parametrize("module", REPORT_MODULES)
def test_the_report_never_reaches_the_check(module):
    """A reporter renders the records a check returns (`records`, `verdict`, the result
    types): a new output never needs to know how a check runs, and the check may write
    its report without a cycle."""
    assert not [m for m in closure(module) if stage_of(m) == "check"], module


def test_the_arrow_between_check_and_report_points_down():
    # Guards the rule above: the reporters are found, and the check does write its report.
    assert {"andgate.report.artifacts", "andgate.report.context"} <= set(REPORT_MODULES)
    assert "andgate.report.artifacts" in closure("andgate.check.pipeline")


IN_PYTEST_PROCESS = sorted(
    m for m in MODULES if m.startswith("andgate.plugin") or m == "andgate.process.forkserver"
)


@pytest.mark.parametrize("module", IN_PYTEST_PROCESS)
def test_modules_loaded_into_pytest_import_only_pytest_and_the_standard_library(module):
    for own in closure(module):
        assert own.startswith("andgate.plugin") or own in (module, "andgate.records"), (
            f"{module} pulls in {own}"
        )
        for name in imports_of(own):
            top = name.split(".")[0]
            assert top in sys.stdlib_module_names or top in ("pytest", "_pytest", "andgate"), (
                f"{own} imports {name}"
            )
