"""Literals: what one is (`literal_key`, a list and a tuple alike), which are too
plain to say anything (`is_trivial`), and which an oracle holds (`oracle_literals`:
in its code, docstrings aside, and in its JSON fixtures). The hard-coded answers
family (`hardcoded.py`) reads literals with these. Pure: callers give bytes.
"""

from __future__ import annotations

import ast
import decimal
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from andgate.check.production.common import is_docstring, parse

ASSERT_METHODS = frozenset(
    {
        "assertEqual",
        "assertEquals",
        "assertNotEqual",
        "assertListEqual",
        "assertTupleEqual",
        "assertDictEqual",
        "assertSetEqual",
        "assertSequenceEqual",
        "assertMultiLineEqual",
        "assertAlmostEqual",
        "assertIn",
        "assertRaisesRegex",
        "assertRegex",
    }
)
ROUND_INTS = frozenset({12, 16, 24, 32, 60, 64, 128, 256, 365, 512, 1024, 3600})
MIN_STRING = 4

LiteralKey = tuple[str, object]


def literal_key(node: ast.AST) -> LiteralKey | None:
    """A comparable key for a literal (list and tuple alike); None for anything else."""
    if isinstance(node, ast.Constant):
        # object, not typeshed's union: a folded constant may be a tuple or frozenset.
        value: object = node.value
        if isinstance(value, bool) or value is None or value is Ellipsis:
            return ("const", value)
        if isinstance(value, int | float | complex):
            return ("num", value)
        if isinstance(value, str | bytes):
            return (type(value).__name__, value)
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = literal_key(node.operand)
        if inner and inner[0] == "num":
            return ("num", -inner[1])  # type: ignore[operator]
        return None
    if isinstance(node, ast.Tuple | ast.List):
        items = tuple(literal_key(e) for e in node.elts)
        return None if None in items else ("seq", items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        keys = [literal_key(k) for k in node.keys if k is not None]
        values = [literal_key(v) for v in node.values]
        if None in keys or None in values:
            return None
        return dict_key(zip(keys, values, strict=True))  # type: ignore[arg-type]
    return None


def dict_key(items: Iterable[tuple[LiteralKey, LiteralKey]]) -> LiteralKey:
    """A dict's key: its items in a canonical order (dicts compare equal in any order)."""
    return ("dict", tuple(sorted(set(items), key=repr)))


def parts(key: LiteralKey) -> tuple[LiteralKey, ...]:
    """The literals a sequence or dict is made of (a dict's keys and values)."""
    kind, value = key
    assert isinstance(value, tuple)
    if kind == "dict":
        return tuple(part for item in value for part in item)
    return value


def is_trivial_number(value: object) -> bool:
    if isinstance(value, complex):
        return value == 0
    assert isinstance(value, int | float)
    if float(value).is_integer():
        number = abs(int(value))
        return number <= 10 or number in ROUND_INTS or is_round(number)
    return abs(value) <= 10 and float(value * 4).is_integer()  # 0.5, 2.25, -0.75


def is_round(number: int) -> bool:
    """100, 200, 5000, 1000000: the numbers people type without reading them anywhere."""
    while number and number % 10 == 0:
        number //= 10
    return number < 10


def is_trivial(key: LiteralKey) -> bool:
    kind, value = key
    if kind == "const":
        return True
    if kind == "num":
        return is_trivial_number(value)
    if kind in ("str", "bytes"):
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        return len(text) < MIN_STRING or not any(c.isalnum() for c in text)
    assert isinstance(value, tuple)  # a sequence or a dict
    return all(is_trivial(item) for item in parts(key)) and len(value) < MIN_STRING


COMPARE_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def compared_literals(tree: ast.Module) -> dict[int, str]:
    """id(literal node) -> the form comparing against it: an operand of `==`, `!=`,
    `in`, `is`, an item of the container `in` searches, a dict key, a `match` case."""
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for index, op in enumerate(node.ops):
                form = COMPARE_OPS.get(type(op))
                if form is None:
                    continue
                for side in operands[index : index + 2]:
                    found.setdefault(id(side), f"compared with {form}")
                    if form in ("in", "not in") and isinstance(
                        side, ast.Tuple | ast.List | ast.Set
                    ):
                        for item in side.elts:
                            found.setdefault(id(item), f"searched with {form}")
        elif isinstance(node, ast.Dict):
            for dict_key in node.keys:
                if dict_key is not None:
                    found.setdefault(id(dict_key), "as a dict key")
        elif isinstance(node, ast.MatchValue):
            found.setdefault(id(node.value), "as a match case")
    return found


def expectation_nodes(tree: ast.Module) -> Iterator[ast.AST]:
    """The literals an oracle file expects: both sides of `assert a == b`, the arguments
    of unittest's `assertEqual` family, and parametrize argvalues."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            compare = node.test
            if any(isinstance(op, ast.Eq | ast.In | ast.Is) for op in compare.ops):
                yield compare.left
                yield from compare.comparators
        elif isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if callee in ASSERT_METHODS:
                yield from node.args
            elif callee == "parametrize" and len(node.args) >= 2:
                yield from argvalues(node.args[1])


def argvalues(node: ast.AST) -> Iterator[ast.AST]:
    if not isinstance(node, ast.List | ast.Tuple):
        return
    for case in node.elts:
        if isinstance(case, ast.Call) and getattr(case.func, "attr", None) == "param":
            yield from case.args
        elif isinstance(case, ast.Tuple | ast.List):
            yield from case.elts
        yield case


def show_literal(key: LiteralKey) -> str:
    kind, value = key
    if kind == "seq":
        assert isinstance(value, tuple)
        return "(" + ", ".join(show_literal(k) for k in value) + ")"
    if kind == "dict":
        assert isinstance(value, tuple)
        return "{" + ", ".join(f"{show_literal(k)}: {show_literal(v)}" for k, v in value) + "}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- distinctive ------------------------------------------------------------------------

# A string with fewer letters and digits is something anyone types ("yes", "__%s__").
MIN_STRING_CHARS = 6
# The bar for a literal the line compares against: the comparison is the special case.
MIN_COMPARED_CHARS = 4
# 123, 391, 3.14159: a number anyone might type has fewer significant digits.
MIN_SIGNIFICANT_DIGITS = 3
# A sequence of this many non-trivial items is distinctive even when each is plain.
MIN_SEQUENCE_ITEMS = 3
# One word or one name (`default`, `max_length`, `utf-8`): the vocabulary of code,
# typed into honest changes daily. Hyphens and dots join words of one name too.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")
DUNDER = re.compile(r"__[A-Za-z][A-Za-z0-9_]*__")
# Numbers programs are full of whatever their tests say: limits, masks, ports, codes.
COMMON_NUMBERS = frozenset(
    {
        127, 128, 255, 256, 511, 512, 1023, 1024, 2047, 2048, 4095, 4096, 8191, 8192,
        65535, 65536, 32767, 32768, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1,
        100, 200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 409, 500, 502, 503,
        1900, 1970, 8000, 8080, 8443, 3600, 86400,
    }
)  # fmt: skip


def why_not_distinctive(key: LiteralKey, *, compared: bool = False) -> str | None:
    """Why the literal is too plain to prove anything (None: it is distinctive)."""
    if is_trivial(key):
        return "too plain"
    kind, value = key
    if kind in ("str", "bytes"):
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        return _plain_text(text.strip(), compared)
    if kind == "num":
        return _plain_number(value)
    if any(why_not_distinctive(item, compared=compared) is None for item in parts(key)):
        return None
    assert isinstance(value, tuple)
    members = value if kind == "seq" else tuple(("seq", item) for item in value)
    if sum(not is_trivial(item) for item in members) >= MIN_SEQUENCE_ITEMS:
        return None  # (12, 17, 23): plain alone, an oracle's example together
    return f"a sequence of fewer than {MIN_SEQUENCE_ITEMS} items that are not plain"


def _plain_text(text: str, compared: bool) -> str | None:
    """Only letters and digits count: `'__%s__'` and `' -> '` are punctuation. A dunder
    name (`'__setattr__'`) is Python's own vocabulary, compared or not."""
    if DUNDER.fullmatch(text):
        return "a dunder name"
    letters = sum(c.isalnum() for c in text)
    least = MIN_COMPARED_CHARS if compared else MIN_STRING_CHARS
    if letters < least:
        return f"fewer than {least} letters or digits"
    if compared:
        return None
    if NAME.fullmatch(text):
        return "one word or name"
    return None


def _plain_number(value: object) -> str | None:
    assert isinstance(value, int | float | complex)
    if isinstance(value, complex):
        return "a complex number"
    if isinstance(value, int) and abs(value) in COMMON_NUMBERS:
        return "a common number"
    digits = decimal.Decimal(repr(abs(value))).normalize().as_tuple().digits
    if len(digits) < MIN_SIGNIFICANT_DIGITS:
        return f"fewer than {MIN_SIGNIFICANT_DIGITS} significant digits"
    return None


# -- what the oracles hold ----------------------------------------------------------------


@dataclass(frozen=True)
class OracleSource:
    """Where an oracle holds a literal: `tests/oracles/test_core.py::test_shout` (line 5)."""

    path: str
    test: str
    line: int
    expected: bool  # in an assertion or a parametrized case (`expectation_nodes`)

    @property
    def where(self) -> str:
        name = f"{self.path}::{self.test}" if self.test else self.path
        return f"{name} (line {self.line})" if self.line else name


def oracle_literals(oracle_sources: Mapping[str, bytes]) -> dict[LiteralKey, OracleSource]:
    """Every non-trivial literal of the oracles' code, docstrings aside -> the first
    test holding it: an input assigned to a variable first is still the oracle's
    input. A literal an oracle asserts or parametrizes (`expectation_nodes`) is
    named where it does, and only those feed the ORACLE_LITERAL warning."""
    found: dict[LiteralKey, OracleSource] = {}
    for path in sorted(oracle_sources):
        if path.endswith(".json"):
            for literal in json_literals(oracle_sources[path]):
                found.setdefault(literal, OracleSource(path, "", 0, expected=True))
            continue
        tree = parse(oracle_sources[path])
        if tree is None:
            continue
        owners = owning_tests(tree)
        docstrings = {
            id(s.value) for s in ast.walk(tree) if isinstance(s, ast.stmt) and is_docstring(s)
        }
        expected = {id(n) for root in expectation_nodes(tree) for n in ast.walk(root)}
        for node in ast.walk(tree):
            key = literal_key(node)
            if key is None or is_trivial(key) or id(node) in docstrings:
                continue
            line = getattr(node, "lineno", 0)
            source = OracleSource(path, owners.get(line, ""), line, id(node) in expected)
            if key not in found or (source.expected and not found[key].expected):
                found[key] = source
    return found


def json_literals(data: bytes) -> Iterator[LiteralKey]:
    """The non-trivial values of an oracle's JSON fixture (its cases: inputs and
    expected values), keys included; nothing from a file that is not JSON."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return
    todo = [document]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            todo.extend(value.keys())
            todo.extend(value.values())
            continue
        key = data_key(value)
        if key is not None and not is_trivial(key):
            yield key
        if isinstance(value, list):
            todo.extend(value)


def data_key(value: object) -> LiteralKey | None:
    """The key `literal_key` gives the same value written in Python, for a value a
    data file's parser returns (JSON, TOML, YAML); None for anything else (a date)."""
    if isinstance(value, bool) or value is None:
        return ("const", value)
    if isinstance(value, int | float):
        return ("num", value)
    if isinstance(value, str | bytes):
        return (type(value).__name__, value)
    if isinstance(value, list | tuple):
        items = tuple(data_key(item) for item in value)
        return None if None in items else ("seq", items)
    if isinstance(value, dict):
        pairs = [(data_key(k), data_key(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return dict_key(pairs)  # type: ignore[arg-type]
    return None


def owning_tests(tree: ast.Module) -> dict[int, str]:
    """Line -> the (qualified) test function or class whose lines, decorators
    included, hold it."""
    owners: dict[int, str] = {}

    def visit(body: Sequence[ast.stmt], prefix: str) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{stmt.name}"
                first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
                for line in range(first, (stmt.end_lineno or stmt.lineno) + 1):
                    owners[line] = name
                if isinstance(stmt, ast.ClassDef):
                    visit(stmt.body, f"{name}::")

    visit(tree.body, "")
    return owners
