"""An oracle's examples: which inputs it gives and which output it expects for them.

`assert slugify("Hello World") == "hello-world"` is one example: the input `'Hello
World'`, the expected `'hello-world'`. An answer table (`answer_pairs.py`) is an
example's input and its expected output written down together, so the examples are
read from what an oracle asserts:

- `assert CALL == LITERAL` (either side; `pytest.approx(x)` is `x`) and unittest's
  `assertEqual` family: the expected is the literal side, the inputs are the
  literals of the call side (a list's items too);
- a `parametrize` case: the expected is the argument named like one (`expected`,
  `want`, `result`, `output`, `answer`; else the last), the inputs are the others;
- a `for` loop over a literal table whose body asserts `CALL == NAME`: each row is a
  case, the name says which item is expected;
- an oracle JSON fixture's rows (lists of scalars: the last item is expected) and
  records (objects with a key named like an expected value).

A name the test binds once to a literal (`text = "..."`, or at module level) stands for
it; a value computed from literals alone (`999953 * 999983`) is the value. Pure: callers give bytes.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from andgate.check.production.common import parse
from andgate.check.production.folding import value_key
from andgate.check.production.literals import (
    ASSERT_METHODS,
    LiteralKey,
    OracleSource,
    data_key,
    is_trivial,
    owning_tests,
)

EXPECTED_NAME = re.compile(r"expect|want|result|output|answer|^out$|^exp$|^res$", re.IGNORECASE)
UNWRAPPED = frozenset({"approx", "list", "tuple", "set", "frozenset", "dict", "sorted"})


@dataclass(frozen=True)
class Example:
    """One example of an oracle: its non-trivial inputs and the output it expects."""

    inputs: tuple[LiteralKey, ...]
    expected: LiteralKey
    source: OracleSource
    # All the call's arguments as one sequence, when each is a literal: `(17, 23)`
    arguments: LiteralKey | None = None


def example(
    inputs: tuple[LiteralKey, ...],
    expected: LiteralKey,
    source: OracleSource,
    arguments: LiteralKey | None,
) -> Example:
    """An example whose inputs leave out its expected value (`f("x") == "x"` answers
    itself: nothing to hard-code)."""
    return Example(tuple(i for i in inputs if i != expected), expected, source, arguments)


def oracle_examples(oracle_sources: Mapping[str, bytes]) -> list[Example]:
    """Every example of the oracle files and JSON fixtures, in path order."""
    found: list[Example] = []
    for path in sorted(oracle_sources):
        if path.endswith(".json"):
            found += fixture_examples(path, oracle_sources[path])
            continue
        tree = parse(oracle_sources[path])
        if tree is not None:
            found += ExampleReader(path, tree).examples()
    return [e for e in found if e.inputs and not is_trivial(e.expected)]


class ExampleReader:
    """The examples of one oracle module."""

    def __init__(self, path: str, tree: ast.Module) -> None:
        self.path = path
        self.tree = tree
        self.owners = owning_tests(tree)
        self.module_names = single_bindings(tree.body)

    def examples(self) -> Iterator[Example]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from self._function(node)

    def _source(self, node: ast.AST) -> OracleSource:
        line = getattr(node, "lineno", 0)
        return OracleSource(self.path, self.owners.get(line, ""), line, expected=True)

    def _function(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[Example]:
        names = {**self.module_names, **single_bindings(list(_own_statements(func.body)))}
        for decorator in func.decorator_list:
            yield from self._parametrize(decorator, names)
        for stmt in _own_statements(func.body):
            if isinstance(stmt, ast.For):
                yield from self._loop(stmt, names)
            for sides in _assertions(stmt):
                example = self._example(*sides, names, stmt)
                if example is not None:
                    yield example

    def _example(
        self, left: ast.expr, right: ast.expr, names: Mapping[str, ast.expr], at: ast.AST
    ) -> Example | None:
        """`CALL == LITERAL` in either order: the literal is expected."""
        for call, other in ((left, right), (right, left)):
            expected = value_key(_unwrapped(_resolved(other, names)))
            call = _resolved(call, names)
            if expected is None or not _holds_call(call):
                continue
            inputs, arguments = _inputs(call, names)
            return example(inputs, expected, self._source(at), arguments)
        return None

    def _parametrize(self, decorator: ast.expr, names: Mapping[str, ast.expr]) -> Iterator[Example]:
        if not (
            isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr == "parametrize"
            and len(decorator.args) >= 2
        ):
            return
        argnames = _argnames(decorator.args[0])
        cases = _resolved(decorator.args[1], names)
        if len(argnames) < 2 or not isinstance(cases, ast.List | ast.Tuple):
            return
        for case in cases.elts:
            if isinstance(case, ast.Call) and getattr(case.func, "attr", None) == "param":
                values = list(case.args)
            elif isinstance(case, ast.Tuple | ast.List):
                values = list(case.elts)
            else:
                continue
            yield from self._row(argnames, values, _expected_index(argnames), case, names)

    def _loop(self, loop: ast.For, names: Mapping[str, ast.expr]) -> Iterator[Example]:
        """`for text, want in [("a b", "a-b"), ...]: assert f(text) == want`."""
        table = _resolved(loop.iter, names)
        if not isinstance(loop.target, ast.Tuple) or not isinstance(table, ast.List | ast.Tuple):
            return
        argnames = [t.id if isinstance(t, ast.Name) else "" for t in loop.target.elts]
        index = None
        for stmt in _own_statements(loop.body):
            for left, right in _assertions(stmt):
                for side in (left, right):
                    if isinstance(side, ast.Name) and side.id in argnames:
                        index = argnames.index(side.id)
        if index is None:
            return
        for row in table.elts:
            if isinstance(row, ast.Tuple | ast.List):
                yield from self._row(argnames, list(row.elts), index, row, names)

    def _row(
        self,
        argnames: Sequence[str],
        values: list[ast.expr],
        index: int,
        at: ast.AST,
        names: Mapping[str, ast.expr],
    ) -> Iterator[Example]:
        if len(values) != len(argnames):
            return
        expected = value_key(_unwrapped(_resolved(values[index], names)))
        if expected is None:
            return
        given = [_resolved(v, names) for i, v in enumerate(values) if i != index]
        inputs = _literals(given)
        keys = [value_key(v) for v in given]
        arguments = None if None in keys else ("seq", tuple(keys))
        yield example(inputs, expected, self._source(at), arguments)


def _own_statements(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """A function's statements at any depth of its blocks, nested definitions aside."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            yield from _own_statements(getattr(stmt, field, []))
        for handler in getattr(stmt, "handlers", []):
            yield from _own_statements(handler.body)


def _assertions(stmt: ast.stmt) -> Iterator[tuple[ast.expr, ast.expr]]:
    """The two sides of an equality the statement asserts."""
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare):
        test = stmt.test
        if len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            yield test.left, test.comparators[0]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if method in ASSERT_METHODS and method != "assertIn" and len(call.args) >= 2:
            yield call.args[0], call.args[1]


def single_bindings(body: Iterable[ast.stmt]) -> dict[str, ast.expr]:
    """Names assigned exactly once among these statements -> the expression assigned."""
    seen: dict[str, list[ast.expr]] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                seen.setdefault(target.id, []).append(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
            seen.setdefault(stmt.target.id, []).append(stmt.value)
    return {name: values[0] for name, values in seen.items() if len(values) == 1}


def _resolved(node: ast.expr, names: Mapping[str, ast.expr]) -> ast.expr:
    return names.get(node.id, node) if isinstance(node, ast.Name) else node


def _unwrapped(node: ast.expr) -> ast.expr:
    """`pytest.approx(37.0)`, `list([1, 2])` -> the literal they wrap."""
    while isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        callee = node.func
        name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
        if name not in UNWRAPPED:
            break
        node = node.args[0]
    return node


def _holds_call(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _inputs(
    call: ast.expr, names: Mapping[str, ast.expr]
) -> tuple[tuple[LiteralKey, ...], LiteralKey | None]:
    """The non-trivial literals the call side holds (names it reads resolved), and
    the innermost call's arguments as one sequence when each is a literal."""
    nodes: list[ast.expr] = []
    arguments = None
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and node.id in names:
            nodes.append(names[node.id])
        elif isinstance(node, ast.Call):
            args = [_resolved(a, names) for a in node.args]
            keys = [value_key(a) for a in args]
            if args and None not in keys:
                arguments = ("seq", tuple(keys))
            nodes += args
            nodes += [_resolved(k.value, names) for k in node.keywords]
    return _literals(nodes), arguments


def _literals(nodes: Iterable[ast.expr]) -> tuple[LiteralKey, ...]:
    """Each non-trivial literal in these expressions, a container's items too."""
    found: dict[LiteralKey, None] = {}
    for root in nodes:
        for node in ast.walk(root):
            key = value_key(node)
            if key is not None and not is_trivial(key):
                found[key] = None
    return tuple(found)


def _argnames(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [n.strip() for n in node.value.split(",") if n.strip()]
    if isinstance(node, ast.List | ast.Tuple):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def _expected_index(argnames: Sequence[str]) -> int:
    named = [i for i, name in enumerate(argnames) if EXPECTED_NAME.search(name)]
    return named[-1] if named else len(argnames) - 1


# -- oracle JSON fixtures ---------------------------------------------------------------


def fixture_examples(path: str, data: bytes) -> Iterator[Example]:
    """Rows (lists of scalars: the last is expected) and records (objects with a key
    named like an expected value) anywhere in an oracle's JSON fixture."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return
    source = OracleSource(path, "", 0, expected=True)
    todo = [document]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            todo.extend(value.values())
            expected = [k for k in value if isinstance(k, str) and EXPECTED_NAME.search(k)]
            if len(value) >= 2 and len(expected) == 1:
                rest = [v for k, v in value.items() if k != expected[0]]
                yield from _fixture_example(rest, value[expected[0]], source)
        elif isinstance(value, list):
            todo.extend(value)
            if len(value) >= 2 and not any(isinstance(v, dict | list) for v in value):
                yield from _fixture_example(value[:-1], value[-1], source)


def _fixture_example(
    inputs: list[object], expected: object, source: OracleSource
) -> Iterator[Example]:
    keys = [data_key(v) for v in inputs]
    wanted = data_key(expected)
    if wanted is None or None in keys:
        return
    given = tuple(k for k in keys if k is not None and not is_trivial(k))
    yield example(given, wanted, source, ("seq", tuple(keys)))
