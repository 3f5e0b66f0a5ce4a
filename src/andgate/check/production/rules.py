"""The shape of a family of the production scan's rules, and the walks that run them.

Each family module (`imports`, `harness`, `effects`, `files`, `hardcoded`) exposes
`FAMILY`, a `Family`: the constructs its rules find and its rules, by kind. The entry
point (`scan.scan_production`) merges every family's rules (`compose`) and runs each
kind where it belongs:

- `file_rules`: each changed file as a whole (path, modes, bytes on both sides);
- `change_rules`: all changed files at once (an added literal an oracle holds);
- `statement_rules`, `expression_rules`, `node_rules`: the scope walk over a Python
  module (`ScopeWalk`), which gives each node its `Scope` (qualified name, whether it
  runs at import, only as a script, the `if` tests around it) and never enters a
  docstring or an `if TYPE_CHECKING:` body;
- `plain_rules`: the plain walk (`plain_walk`) over every node, with its qualified
  name only, in a module whose text holds one of the families' `plain_words`;
- `line_rules`: the added lines of a `.py` that does not parse.

A rule of the scope or plain walk returns `Hit`s: what it found in one version of the
file; the entry point reports those of head that base did not have. Each walk runs
once per file version, whatever the number of families. A new rule is a function in
its family's module and an entry in its family's `FAMILY`; a rule that needs more
of the repository than the changed files reads it from `common.ScanContext`, a
field there filled by `phase.start_scan`. A construct belongs to one family only,
so a family's findings never need another family's to be read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any, TypeVar

from andgate.check.production.common import (
    FileChange,
    Hit,
    Names,
    ScanContext,
    ScanFinding,
    Scope,
    decode,
    is_docstring,
    parse,
    split_lines,
)
from andgate.records import Construct

# A rule of the scope walk: the module's names, the node, where it is.
ScopeRule = Callable[[Names, Any, Scope], Iterable[Hit]]
# A rule of the plain walk: the module's names, the node, its scope's qualified name.
PlainRule = Callable[[Names, Any, str], Iterable[Hit]]
FileRule = Callable[[FileChange, ScanContext], Iterable[ScanFinding]]
ChangeRule = Callable[[Sequence[FileChange], ScanContext], Iterable[ScanFinding]]
# The lines of the file (as Python counts them) and the added ones -> (line, construct, detail)
LineRule = Callable[[Sequence[str], frozenset[int]], Iterable[tuple[int, Construct, str]]]
NodeTypes = type[ast.AST] | tuple[type[ast.AST], ...]
R = TypeVar("R")


@dataclass(frozen=True)
class Family:
    """One family of rules: one module of `check/production/`, one row of the README's
    "What the scan sees" (`name`). `constructs` are what its findings block with
    (PRODUCTION_SUSPICIOUS), `warns` what they only warn about."""

    name: str
    constructs: frozenset[Construct]
    warns: frozenset[Construct] = frozenset()
    file_rules: tuple[FileRule, ...] = ()
    change_rules: tuple[ChangeRule, ...] = ()
    statement_rules: tuple[tuple[NodeTypes, ScopeRule], ...] = ()
    expression_rules: tuple[ScopeRule, ...] = ()
    node_rules: tuple[tuple[NodeTypes, ScopeRule], ...] = ()
    plain_rules: tuple[tuple[NodeTypes, PlainRule], ...] = ()
    # A regular expression for the words without which plain_rules find nothing: the
    # plain walk skips a module whose text holds no family's words.
    plain_words: str = ""
    line_rules: tuple[LineRule, ...] = ()


@dataclass(frozen=True)
class Rules:
    """Every family's rules of each kind, merged (`compose`); the walks' node rules by
    the node's type."""

    file_rules: tuple[FileRule, ...]
    change_rules: tuple[ChangeRule, ...]
    statements: dict[type[ast.AST], tuple[ScopeRule, ...]]
    expressions: tuple[ScopeRule, ...]
    nodes: dict[type[ast.AST], tuple[ScopeRule, ...]]
    plain: dict[type[ast.AST], tuple[PlainRule, ...]]
    plain_words: re.Pattern[str] | None
    line_rules: tuple[LineRule, ...]

    @property
    def walks_scopes(self) -> bool:
        return bool(self.statements or self.expressions or self.nodes)


def compose(families: Iterable[Family]) -> Rules:
    """The families' rules merged, each kind in the families' order."""
    chosen = tuple(families)
    walked = [f.plain_words for f in chosen if f.plain_rules]
    return Rules(
        file_rules=tuple(r for f in chosen for r in f.file_rules),
        change_rules=tuple(r for f in chosen for r in f.change_rules),
        statements=by_type(pair for f in chosen for pair in f.statement_rules),
        expressions=tuple(r for f in chosen for r in f.expression_rules),
        nodes=by_type(pair for f in chosen for pair in f.node_rules),
        plain=by_type(pair for f in chosen for pair in f.plain_rules),
        plain_words=re.compile("|".join(walked)) if walked else None,
        line_rules=tuple(r for f in chosen for r in f.line_rules),
    )


def by_type(pairs: Iterable[tuple[NodeTypes, R]]) -> dict[type[ast.AST], tuple[R, ...]]:
    table: dict[type[ast.AST], tuple[R, ...]] = {}
    for types, rule in pairs:
        for kind in types if isinstance(types, tuple) else (types,):
            table[kind] = (*table.get(kind, ()), rule)
    return table


# -- the walks ------------------------------------------------------------------------------


def module_hits(data: bytes, path: str, rules: Rules) -> list[Hit] | None:
    """What the walks' rules find in one version of a Python file; None when it does
    not parse."""
    tree = parse(data)
    if tree is None:
        return None
    names = Names(tree, path)
    hits = ScopeWalk(rules, names).run(tree, path) if rules.walks_scopes else []
    if rules.plain_words is not None and rules.plain_words.search(decode(data)):
        hits += plain_walk(tree, names, rules)
    return hits


class ScopeWalk:
    """Walks one module, statement by statement, and runs the scope rules on each
    statement, each expression a statement holds, and each node of those."""

    def __init__(self, rules: Rules, names: Names) -> None:
        self.rules = rules
        self.names = names
        self.hits: list[Hit] = []

    def run(self, tree: ast.Module, path: str) -> list[Hit]:
        is_main_module = PurePosixPath(path).name == "__main__.py"
        self.block(tree.body, Scope("", at_import=True, in_main=is_main_module))
        return self.hits

    def block(self, body: Sequence[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self.statement(stmt, scope)

    def statement(self, stmt: ast.stmt, scope: Scope) -> None:
        if is_docstring(stmt):
            return
        for rule in self.rules.statements.get(type(stmt), ()):
            self.hits.extend(rule(self.names, stmt, scope))
        if isinstance(stmt, ast.If):
            self.if_statement(stmt, scope)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            self.function(stmt, scope)
        elif isinstance(stmt, ast.ClassDef):
            for expr in (*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)):
                self.expression(expr, scope)
            self.block(stmt.body, replace(scope, qualname=f"{scope.qualname}.{stmt.name}"))
        else:
            self.parts(stmt, scope)

    def parts(self, stmt: ast.stmt, scope: Scope) -> None:
        for _, value in ast.iter_fields(stmt):
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, ast.stmt):
                    self.statement(item, scope)
                elif isinstance(item, ast.expr):
                    self.expression(item, scope)
                elif isinstance(item, ast.excepthandler | ast.match_case | ast.withitem):
                    self.compound_part(item, scope)

    def if_statement(self, stmt: ast.If, scope: Scope) -> None:
        guarded = scope.guarded_by(stmt.test)
        if is_type_checking(stmt.test):
            self.block(stmt.orelse, guarded)  # the body never runs
            return
        if is_main_guard(stmt.test):
            self.block(stmt.body, scope.guarded_by(stmt.test, in_main=True))
            self.block(stmt.orelse, guarded)
            return
        self.expression(stmt.test, scope)
        self.block(stmt.body, guarded)
        self.block(stmt.orelse, guarded)

    def compound_part(self, part: ast.AST, scope: Scope) -> None:
        for value in ast.iter_child_nodes(part):
            if isinstance(value, ast.stmt):
                self.statement(value, scope)
            elif isinstance(value, ast.expr):
                self.expression(value, scope)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        for expr in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if expr is not None:
                self.expression(expr, scope)
        qualname = f"{scope.qualname}.{node.name}"
        self.block(node.body, Scope(qualname, at_import=False, in_main=False))

    def expression(self, expr: ast.expr, scope: Scope) -> None:
        """One expression a statement holds (its test, value, call...), walked whole;
        what a lambda holds does not run at import."""
        for rule in self.rules.expressions:
            self.hits.extend(rule(self.names, expr, scope))
        in_lambda = replace(scope, at_import=False)
        nodes = self.rules.nodes
        stack: list[tuple[ast.AST, Scope]] = [(expr, scope)]
        while stack:
            node, where = stack.pop()
            for rule in nodes.get(type(node), ()):
                self.hits.extend(rule(self.names, node, where))
            inner = in_lambda if isinstance(node, ast.Lambda) else where
            stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def is_main_guard(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    sides = [test.left, test.comparators[0]]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    consts = {s.value for s in sides if isinstance(s, ast.Constant)}
    return isinstance(test.ops[0], ast.Eq) and names == {"__name__"} and consts == {"__main__"}


def plain_walk(tree: ast.Module, names: Names, rules: Rules) -> list[Hit]:
    """One walk over every node, each with the qualified name of its scope: at import
    or in a function alike, docstrings and `TYPE_CHECKING` bodies included."""
    hits: list[Hit] = []
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, qualname = stack.pop()
        for rule in rules.plain.get(type(node), ()):
            hits.extend(rule(names, node, qualname))
        inner = qualname
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = f"{inner}.{node.name}"
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return hits


# -- a .py that does not parse ----------------------------------------------------------------


def line_hits(
    data: bytes, added: frozenset[int], rules: Rules
) -> Iterator[tuple[int, Construct, str]]:
    text = split_lines(decode(data))
    for rule in rules.line_rules:
        yield from rule(text, added)


def line_patterns(patterns: Sequence[tuple[Construct, re.Pattern[str]]]) -> LineRule:
    """A line rule from patterns: on each added line that is not a comment, each
    construct once, with the first of its patterns that matches."""

    def rule(text: Sequence[str], added: frozenset[int]) -> Iterator[tuple[int, Construct, str]]:
        for number in sorted(added):
            line = text[number - 1]
            if line.lstrip().startswith("#"):
                continue
            seen = set()
            for construct, pattern in patterns:
                match = pattern.search(line)
                if match and construct not in seen:
                    seen.add(construct)
                    yield number, construct, match.group(0).strip()[:60]

    return rule
