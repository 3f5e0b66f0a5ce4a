"""Where a test file makes items xfail, read with `ast` (never imported: `andgate
init` runs no test code).

An oracle item that xfails does not pass, and neither does one that xpasses
(contract section 4, outcome rules): an xfail item in an oracle file makes every
check block with `ORACLE_FAILED: xfailed`. So `init` does not propose such a file
as an oracle, and says which items keep it out and what to do about them; `doctor`
names the xfail items of the oracle files a manifest already has, from pytest's
own collection.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# What the fix is, said once for init's manifest comment, its report and doctor.
WHY = (
    "an oracle item that xfails never passes (xfailed and xpassed both fail it), so "
    "every check would block with ORACLE_FAILED"
)
FIX = (
    "fix the code or the test and drop the xfail, or move the xfail test into a file "
    "that is not an oracle"
)


@dataclass(frozen=True)
class Xfail:
    """One place that makes items xfail: a mark (`@pytest.mark.xfail`, in
    `pytestmark`, in `pytest.param(marks=...)`) or a `pytest.xfail()` call."""

    line: int
    where: str  # the test function or class it is in, or "" at module level
    how: str

    def describe(self) -> str:
        return f"line {self.line}{f' ({self.where})' if self.where else ''}: {self.how}"


def xfails_in(source: bytes) -> tuple[Xfail, ...]:
    """Every xfail mark and call in a test module; () when it does not parse
    (pytest then reports the file as a collection error, which doctor names)."""
    if b"xfail" not in source:
        return ()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    finder = _Finder()
    finder.visit(tree)
    return tuple(sorted(set(finder.found), key=lambda x: x.line))


def _is_mark(node: ast.expr) -> bool:
    """`pytest.mark` or a bare `mark` (`from pytest import mark`)."""
    if isinstance(node, ast.Name):
        return node.id == "mark"
    return isinstance(node, ast.Attribute) and node.attr == "mark"


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[Xfail] = []
        self.scope: list[str] = []
        self.xfail_names: set[str] = set()  # `from pytest import xfail [as name]`

    def _where(self) -> str:
        return ".".join(self.scope)

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)  # its decorators too: they mark this definition
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == "pytest":
            self.xfail_names.update(a.asname or a.name for a in node.names if a.name == "xfail")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "xfail" and _is_mark(node.value):
            self.found.append(Xfail(node.lineno, self._where(), "marked xfail"))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = (
            isinstance(func, ast.Attribute)
            and func.attr == "xfail"
            and isinstance(func.value, ast.Name)
            and func.value.id == "pytest"
        ) or (isinstance(func, ast.Name) and func.id in self.xfail_names)
        if called:
            self.found.append(Xfail(node.lineno, self._where(), "calls pytest.xfail()"))
        self.generic_visit(node)
