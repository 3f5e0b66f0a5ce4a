"""Harness references and hooks: production code that knows it is under test.

Code that cannot pass a test honestly can still tell when a test is running and
behave only then: it imports the test runner or asks whether it is loaded
(`"pytest" in sys.modules`), reads the runner's environment variables, its command
line or its working directory, looks up the stack for the test calling it, overloads
`==` to agree with anything, or hooks into pytest itself (a `pytest_*` hook or a
plugin registration, loaded into every pytest process by an entry point). Each is
named with its file and line; `unittest.mock` (a library, not the runner) is not.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence

from andgate.check.production.common import (
    Hit,
    Names,
    Scope,
    hit,
    node_lines,
    plain_hit,
    short,
)
from andgate.check.production.probes import mentions_harness, probe_statement
from andgate.check.production.rules import Family, line_patterns
from andgate.records import Construct

HARNESS_MODULES = frozenset({"pytest", "_pytest", "andgate", "xdist", "nose", "nose2"})
UNITTEST_PUBLIC = frozenset({"mock"})  # unittest.mock is a library, not the runner
ENV_NAME = re.compile(r"(?<![A-Za-z0-9])_?(?:PYTEST|ANDGATE)_[A-Z0-9_]*")
TEST_MODULE = re.compile(r"(?:^|\.)(?:test_\w*|\w+_test|tests?|testing|conftest)(?:\.|$)")
TEST_PLACE = re.compile(r"test|andgate|worktree", re.IGNORECASE)
STACK_NAMES = frozenset(
    {
        "sys._getframe",
        "sys._getframemodulename",
        "sys._current_frames",
        "inspect.stack",
        "inspect.currentframe",
        "inspect.getouterframes",
        "inspect.trace",
        "traceback.extract_stack",
        "traceback.walk_stack",
        "traceback.format_stack",
        "traceback.print_stack",
    }
)
IMPORT_CALLS = frozenset(
    {
        "__import__",
        "importlib.import_module",
        "importlib.util.find_spec",
        "importlib.find_loader",
        "pkgutil.find_loader",
    }
)
ARGV = "sys.argv"
ENVIRON = frozenset({"os.environ", "os.getenv", "os.environb", "os.getenvb"})
CWD = frozenset({"os.getcwd", "os.getcwdb", "pathlib.Path.cwd", "os.curdir"})
COMPARISON_DUNDERS = frozenset(
    {"__eq__", "__ne__", "__hash__", "__bool__", "__lt__", "__le__", "__gt__", "__ge__"}
)
HOOK_MARKERS = frozenset({"hookimpl", "hookspec"})


def top_module(name: str) -> str:
    return name.split(".", 1)[0]


def is_harness_module(name: str) -> bool:
    top = top_module(name)
    if top == "unittest":
        return not UNITTEST_PUBLIC.intersection(name.split(".")[1:2])
    return top in HARNESS_MODULES or top.startswith("pytest_")


# -- the scope walk ---------------------------------------------------------------------


def harness_import(names: Names, stmt: ast.Import | ast.ImportFrom, scope: Scope) -> Iterator[Hit]:
    """`import pytest`, `from unittest import TestCase`, `from sys import _getframe`."""
    if isinstance(stmt, ast.Import):
        modules = [alias.name for alias in stmt.names]
    elif stmt.level or not stmt.module:
        return
    elif stmt.module == "unittest":
        modules = [f"unittest.{a.name}" for a in stmt.names]
    else:
        modules = [stmt.module]
        qualified = {f"{stmt.module}.{a.name}" for a in stmt.names}
        if qualified & STACK_NAMES:
            yield hit(Construct.STACK_INSPECTION, short(stmt), stmt, scope)
    if any(is_harness_module(name) for name in modules):
        yield hit(Construct.HARNESS_REFERENCE, short(stmt), stmt, scope)


def constant_dunder(
    names: Names, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope
) -> Iterator[Hit]:
    """`def __eq__(self, other): return True`: every return gives the same constant."""
    if node.name not in COMPARISON_DUNDERS:
        return
    returns = list(own_returns(node))
    values = {constant_value(r.value) for r in returns}
    if returns and len(values) == 1 and None not in values:
        value = next(iter(values))
        assert value is not None  # None is not in values
        lines = frozenset({node.lineno}).union(*(node_lines(r) for r in returns))
        key = (Construct.CONSTANT_COMPARISON.value, f"{scope.qualname}.{node.name}", repr(value))
        detail = f"{node.name} always returns {value[1]!r}"
        yield Hit(Construct.CONSTANT_COMPARISON, detail, lines, key)


def dunder_assignment(names: Names, stmt: ast.Assign, scope: Scope) -> Iterator[Hit]:
    """`__eq__ = lambda self, other: True`, also onto a class from outside it."""
    if not isinstance(stmt.value, ast.Lambda):
        return
    value = constant_value(stmt.value.body)
    for target in stmt.targets:
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
        if name in COMPARISON_DUNDERS and value is not None:
            detail = f"{name} always returns {value[1]!r}"
            yield hit(Construct.CONSTANT_COMPARISON, detail, stmt, scope)


def own_returns(node: ast.AST) -> Iterator[ast.Return]:
    """The function's return statements, not those of functions nested in it."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(child, ast.Return):
            yield child
        yield from own_returns(child)


def constant_value(node: ast.expr | None) -> tuple[str, object] | None:
    """(type, value) of a plain constant (`True`, `0`, `"x"`); None for anything else.
    `NotImplemented` is a name, not a constant, so `return NotImplemented` never counts."""
    if isinstance(node, ast.Constant) and node.value is not None:
        return (type(node.value).__name__, node.value)
    return None


def context_checks(names: Names, expr: ast.expr, scope: Scope) -> Iterator[Hit]:
    """Expressions that test where they run: `"pytest" in sys.modules`, an argv or
    cwd compared with a test-runner string, the environment searched for one. A
    module filed into `sys.modules` is what an import loads, not a test of where code
    runs (`imports.machinery_assignment`)."""
    if is_modules_entry(names, expr):
        return
    used = {names.dotted(n) for n in ast.walk(expr) if isinstance(n, ast.Attribute | ast.Name)}
    strings = [
        n.value for n in ast.walk(expr) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    looks_up_tests = "sys.modules" in used and any(
        is_harness_module(s) or TEST_MODULE.search(s) for s in strings
    )
    checks_runner = ARGV in used and any(mentions_harness(s) for s in strings)
    checks_cwd = bool(used & CWD) and any(TEST_PLACE.search(s) for s in strings)
    if looks_up_tests or checks_runner or checks_cwd:
        yield hit(Construct.HARNESS_REFERENCE, short(expr), expr, scope)
    elif used & ENVIRON and any(mentions_harness(s) for s in strings):
        yield hit(Construct.HARNESS_ENV, short(expr), expr, scope)


def is_modules_entry(names: Names, expr: ast.expr) -> bool:
    """`sys.modules[key]` as the target of an assignment or a `del`."""
    return (
        isinstance(expr, ast.Subscript)
        and isinstance(expr.ctx, ast.Store | ast.Del)
        and names.dotted(expr.value) == "sys.modules"
    )


def harness_variable(names: Names, node: ast.Constant, scope: Scope) -> Iterator[Hit]:
    """A string naming one of the runner's environment variables (`PYTEST_CURRENT_TEST`)."""
    if isinstance(node.value, str) and ENV_NAME.search(node.value):
        yield hit(Construct.HARNESS_ENV, repr(node.value), node, scope)


def stack_reference(names: Names, node: ast.Attribute | ast.Name, scope: Scope) -> Iterator[Hit]:
    if isinstance(node, ast.Attribute) and node.attr == "f_back":
        yield hit(Construct.STACK_INSPECTION, short(node), node, scope)
        return
    name = names.dotted(node)
    if name in STACK_NAMES:
        yield hit(Construct.STACK_INSPECTION, name, node, scope)


def harness_import_call(names: Names, node: ast.Call, scope: Scope) -> Iterator[Hit]:
    """`importlib.import_module("_pytest.runner")`, `__import__("pytest")`."""
    if names.dotted(node.func) in IMPORT_CALLS and node.args:
        first = node.args[0]
        if isinstance(first, ast.Constant) and is_harness_module(str(first.value)):
            yield hit(Construct.HARNESS_REFERENCE, short(node), node, scope)


# -- the plain walk: pytest hooks and plugin registrations, in a function or not ----------------


def hook_definition(
    names: Names, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str
) -> Iterator[Hit]:
    if node.name.startswith("pytest_"):
        # the `def` line only: an edit inside a hook base already had is old
        detail = f"def {node.name}"
        yield plain_hit(Construct.PYTEST_PLUGIN, detail, frozenset({node.lineno}), qualname)


def plugins_assignment(
    names: Names, stmt: ast.Assign | ast.AugAssign | ast.AnnAssign, qualname: str
) -> Iterator[Hit]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    for target in targets:
        for part in ast.walk(target):
            if isinstance(part, ast.Name) and part.id == "pytest_plugins":
                yield plain_hit(Construct.PYTEST_PLUGIN, short(stmt), node_lines(stmt), qualname)


def hook_marker(names: Names, node: ast.Attribute | ast.Name, qualname: str) -> Iterator[Hit]:
    """`pytest.hookimpl`, or `hookimpl` imported from pytest."""
    if isinstance(node, ast.Attribute) and node.attr not in HOOK_MARKERS:
        return
    name = names.dotted(node) or ""
    if name.rpartition(".")[2] in HOOK_MARKERS and is_harness_module(name):
        yield plain_hit(Construct.PYTEST_PLUGIN, name, node_lines(node), qualname)


def pytest_marker_factory(names: Names, node: ast.Call, qualname: str) -> Iterator[Hit]:
    """`pluggy.HookimplMarker("pytest")`: pytest's own hook marker, made anew."""
    name = names.dotted(node.func) or ""
    if name.endswith("HookimplMarker") and any(
        isinstance(a, ast.Constant) and a.value == "pytest" for a in node.args
    ):
        yield plain_hit(Construct.PYTEST_PLUGIN, short(node), node_lines(node), qualname)


# Every statement whose own expressions may read test-run state (`probes.probe_statement`);
# a definition's body is walked statement by statement.
PROBED_STATEMENTS = tuple(
    kind
    for kind in (
        ast.If,
        ast.While,
        ast.Assert,
        ast.Return,
        ast.Match,
        ast.Expr,
        ast.Assign,
        ast.AugAssign,
        ast.AnnAssign,
        ast.For,
        ast.AsyncFor,
        ast.With,
        ast.AsyncWith,
        ast.Raise,
        ast.Try,
        ast.Delete,
    )
)

# -- a .py that does not parse ------------------------------------------------------------------

CONST = r"(?:True|False|-?\d+|'[^']*'|\"[^\"]*\")"
DUNDER = r"__(?:eq|ne|hash|bool|lt|le|gt|ge)__"
LINE_PATTERNS: tuple[tuple[Construct, re.Pattern[str]], ...] = (
    (
        Construct.HARNESS_REFERENCE,
        re.compile(
            r"^\s*(?:import|from)\s+(?:_?pytest\w*|andgate|xdist|pluggy|nose2?|unittest(?!\.mock))"
            r"\b(?!\s+import\s+mock\s*$)"
        ),
    ),
    (Construct.HARNESS_REFERENCE, re.compile(r"sys\.modules.*['\"](?:_?pytest|andgate|test)")),
    (Construct.HARNESS_REFERENCE, re.compile(r"['\"](?:_?pytest|andgate)[.'\"].*sys\.modules")),
    (Construct.HARNESS_REFERENCE, re.compile(r"(?:__import__|import_module)\(\s*['\"]_?pytest")),
    (Construct.HARNESS_REFERENCE, re.compile(r"sys\.argv.*['\"][^'\"]*(?:pytest|andgate)")),
    (Construct.HARNESS_ENV, ENV_NAME),
    (
        Construct.STACK_INSPECTION,
        re.compile(
            r"sys\._getframe|sys\._current_frames|inspect\.(?:stack|currentframe|getouterframes)"
            r"\b|traceback\.(?:extract_stack|walk_stack|format_stack|print_stack)|\.f_back\b"
        ),
    ),
    (
        Construct.CONSTANT_COMPARISON,
        re.compile(rf"def\s+{DUNDER}\s*\([^)]*\)[^:]*:\s*return\s+{CONST}\s*(?:#.*)?$"),
    ),
    (Construct.CONSTANT_COMPARISON, re.compile(rf"{DUNDER}\s*=\s*lambda[^:]*:\s*{CONST}\s*$")),
)


def two_line_dunders(
    text: Sequence[str], added: frozenset[int]
) -> Iterator[tuple[int, Construct, str]]:
    """A multi-line `def __eq__(...):` / `return True` pair."""
    for number in sorted(added):
        if number < len(text) and re.search(rf"def\s+{DUNDER}\s*\(.*:\s*$", text[number - 1]):
            following = text[number].strip()
            if re.fullmatch(rf"return\s+{CONST}", following):
                yield number, Construct.CONSTANT_COMPARISON, following


FAMILY = Family(
    name="harness references and hooks",
    constructs=frozenset(
        {
            Construct.HARNESS_REFERENCE,
            Construct.HARNESS_ENV,
            Construct.STACK_INSPECTION,
            Construct.CONSTANT_COMPARISON,
            Construct.PYTEST_PLUGIN,
            Construct.TEST_RUN_PROBE,
        }
    ),
    statement_rules=(
        ((ast.Import, ast.ImportFrom), harness_import),
        ((ast.FunctionDef, ast.AsyncFunctionDef), constant_dunder),
        (ast.Assign, dunder_assignment),
        (PROBED_STATEMENTS, probe_statement),
    ),
    expression_rules=(context_checks,),
    node_rules=(
        (ast.Constant, harness_variable),
        ((ast.Attribute, ast.Name), stack_reference),
        (ast.Call, harness_import_call),
    ),
    plain_rules=(
        ((ast.FunctionDef, ast.AsyncFunctionDef), hook_definition),
        ((ast.Assign, ast.AugAssign, ast.AnnAssign), plugins_assignment),
        ((ast.Attribute, ast.Name), hook_marker),
        (ast.Call, pytest_marker_factory),
    ),
    # The plain walk skips a module whose text holds none of the families' words
    # (`pluggy.HookimplMarker("pytest")` is a hook marker without `pytest_` or `hook`).
    plain_words="pytest_|hook|Hookimpl",
    line_rules=(line_patterns(LINE_PATTERNS), two_line_dunders),
)
