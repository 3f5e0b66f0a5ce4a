"""The command line stays a thin door: `cli.py` only dispatches, and every exit code is a
named member of `exitcodes`, documented where users read it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import andgate
from andgate import exitcodes
from andgate.exitcodes import ClassifyExit, Exit

PACKAGE = Path(andgate.__file__).parent
ROOT = PACKAGE.parents[1]
CLI = PACKAGE / "commands" / "cli.py"
CLI_MAX_LINES = 450
COMMAND_MODULES = sorted((PACKAGE / "commands").glob("*.py"))
ENUMS = (Exit, ClassifyExit)


def test_cli_stays_a_dispatcher():
    """Options belong beside their command's handler (`declare` in its own module), the
    shared ones in `commands.options`: not here."""
    lines = len(CLI.read_text(encoding="utf-8").splitlines())
    assert lines <= CLI_MAX_LINES, f"commands/cli.py has {lines} lines (limit {CLI_MAX_LINES})"


def _is_int(node: ast.expr | None) -> bool:
    if isinstance(node, ast.IfExp):
        return _is_int(node.body) or _is_int(node.orelse)
    if isinstance(node, ast.UnaryOp):
        return _is_int(node.operand)
    return isinstance(node, ast.Constant) and type(node.value) is int


def _call_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def literal_exit_codes(tree: ast.AST) -> Iterator[int]:
    """Lines where an int literal is used as an exit code: returned, passed to
    `guarded`/`handled_by` as the could-not-run code, or to `sys.exit`/`SystemExit`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and _is_int(node.value):
            yield node.lineno
        elif isinstance(node, ast.Call):
            name = _call_name(node)
            codes = [k.value for k in node.keywords if k.arg == "could_not_run"]
            if name in ("exit", "SystemExit", "_exit"):
                codes += node.args
            elif name == "guarded":
                codes += node.args[1:]
            if any(_is_int(code) for code in codes):
                yield node.lineno


@pytest.mark.parametrize("path", COMMAND_MODULES, ids=lambda p: p.name)
def test_no_command_writes_an_exit_code_as_a_number(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = list(literal_exit_codes(tree))
    assert not lines, (
        f"commands/{path.name}:{lines}: an int literal as an exit code; return a member of "
        "exitcodes.Exit (or ClassifyExit), adding one there and to docs/commands.md if needed"
    )


def test_no_exit_code_property_returns_a_number():
    """`Verdict.exit_code`, `ShardOutcome.exit_code`, classify's `Findings.exit_code`."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name == "exit_code":
                found.append(path.name)
                assert not list(literal_exit_codes(node)), f"{path}: exit_code returns a literal"
    assert len(found) >= 3, found


def test_the_literal_finder_sees_every_form():
    source = (
        "def a():\n    return 2\n"
        "def b(ok):\n    return 0 if ok else 1\n"
        "def c():\n    return guarded(run, 2)\n"
        "def d():\n    raise SystemExit(130)\n"
        "def e(p):\n    handled_by(p, h, could_not_run=5)\n"
        "def f():\n    return Exit.OK\n"
        "def g():\n    return guarded(run, Exit.COULD_NOT_RUN)\n"
    )
    assert list(literal_exit_codes(ast.parse(source))) == [2, 4, 6, 8, 10]


@pytest.mark.parametrize("member", [m for enum in ENUMS for m in enum], ids=repr)
def test_every_exit_code_is_documented_in_the_module_and_the_commands_page(member):
    docstring = exitcodes.__doc__ or ""
    assert f"`{member.name}` ({member.value}" in docstring, f"exitcodes.py says nothing of {member}"
    page = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    row = rf"\| {member.value} \| `{type(member).__name__}\.{member.name}` \|"
    assert re.search(row, page), f"docs/commands.md has no exit code row for {member!r}"
