"""Values a module computes from literals alone: an answer put together from pieces.

`"The Lord of " + "the Rings"`, `" ".join(["The", "Lord"])`, `f"{'The Lord'} of the
Rings"`, `17 * 23`, `base64.b64decode("VGhl...").decode()`, `"".join(map(chr, [84,
104]))`: no piece is the oracle's literal, the value is. `folded_values` gives each
expression of a module that computes a value from literals, names bound to such
values earlier in the same function (or at module level) and a few pure operations
(`ALLOWED_CALLS`, the string methods in `STR_METHODS`), with the value and the lines
it was built from. Nothing is executed: each operation is evaluated here, on values
of bounded size. Pure: callers give an AST.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import functools
import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from andgate.check.production.common import Names, is_docstring, node_lines, own_expressions, parse
from andgate.check.production.literals import (
    LiteralKey,
    compared_literals,
    data_key,
    literal_key,
)

# A value bigger than this is no answer to an example, and building it costs memory.
MAX_TEXT = 10_000
MAX_ITEMS = 1_000
MAX_INT_BITS = 256
# A width or precision in a format spec above this could allocate gigabytes.
WIDE = re.compile(r"\d{5,}")

# A value folded from literals: str, bytes, int, float, bool, None, or a tuple of them.
Value = Any


class Unfoldable(Exception):
    """The expression's value is not known from literals alone."""


@dataclass(frozen=True)
class Folded:
    """An expression's value, computed from literals, and the lines it was built from
    (its own and those of the bindings it read)."""

    node: ast.expr
    key: LiteralKey
    lines: frozenset[int]


BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}
# Methods of str and bytes that compute a value from their arguments alone.
STR_METHODS = frozenset(
    {
        "join", "upper", "lower", "title", "capitalize", "casefold", "swapcase", "strip",
        "lstrip", "rstrip", "replace", "format", "decode", "encode", "removeprefix",
        "removesuffix", "zfill", "center", "ljust", "rjust", "split", "splitlines",
    }
)  # fmt: skip
CODECS = frozenset({"rot13", "rot_13", "hex", "base64", "utf-8", "utf8", "latin-1", "ascii"})


def _codec(text: Value, name: Value) -> Value:
    """`codecs.decode` with one of the codecs in CODECS (rot13, hex, base64, text)."""
    if not isinstance(name, str) or name.lower() not in CODECS:
        raise Unfoldable
    return codecs.decode(text, name)


ALLOWED_CALLS: dict[str, Callable[..., object]] = {
    "chr": chr,
    "ord": ord,
    "str": str,
    "int": int,
    "float": float,
    "bytes": lambda *args: bytes(*args) if args and not isinstance(args[0], int) else b"",
    "bytes.fromhex": bytes.fromhex,
    "list": tuple,
    "tuple": tuple,
    "reversed": lambda items: tuple(reversed(items)),
    "base64.b64decode": base64.b64decode,
    "base64.standard_b64decode": base64.standard_b64decode,
    "base64.urlsafe_b64decode": base64.urlsafe_b64decode,
    "base64.b32decode": base64.b32decode,
    "base64.b16decode": base64.b16decode,
    "base64.b85decode": base64.b85decode,
    "base64.a85decode": base64.a85decode,
    "binascii.unhexlify": binascii.unhexlify,
    "binascii.a2b_hex": binascii.a2b_hex,
    "binascii.a2b_base64": binascii.a2b_base64,
    "codecs.decode": _codec,
}
# What evaluating may raise on values it was given: the expression does not fold.
FAILURES = (
    Unfoldable, ArithmeticError, ValueError, TypeError, LookupError, AttributeError,
    UnicodeError, binascii.Error, RecursionError,
)  # fmt: skip

Binding = tuple[Value, frozenset[int]]


_CONSTANTS = Names(ast.Module(body=[], type_ignores=[]))


def value_key(node: ast.AST) -> LiteralKey | None:
    """The key of a literal, or of the value an expression computes from literals
    alone (`999953 * 999983`, `"a" * 3`); None for anything else."""
    key = literal_key(node)
    if key is not None or not isinstance(node, ast.BinOp | ast.UnaryOp | ast.JoinedStr):
        return key
    found = Folder(_CONSTANTS, {}).value(node)
    return data_key(found[0]) if found is not None else None


@dataclass(frozen=True)
class ModuleValues:
    """What one version of a module says in values: its AST, the literals it compares
    against (id of the node -> the form), what it folds (id of the node -> the value),
    and its docstrings (ids of their nodes)."""

    tree: ast.Module
    compared: dict[int, str]
    folded: dict[int, Folded]
    docstrings: frozenset[int]


@functools.lru_cache(maxsize=64)
def module_values(data: bytes) -> ModuleValues | None:
    """The module's values, None when it does not parse (cached: the family's rules
    read each changed module's head more than once)."""
    tree = parse(data)
    if tree is None:
        return None
    docstrings = frozenset(
        id(s.value) for s in ast.walk(tree) if isinstance(s, ast.stmt) and is_docstring(s)
    )
    folded = {id(f.node): f for f in folded_values(tree)}
    return ModuleValues(tree, compared_literals(tree), folded, docstrings)


def folded_values(tree: ast.Module) -> Iterator[Folded]:
    """Each outermost expression of the module that is not itself a literal or a name
    and computes a value from literals: per scope (the module, each function and class
    body), statements in order, a name standing for the value last bound to it."""
    names = Names(tree)
    module_env: dict[str, Binding] = {}
    yield from _scope(tree.body, names, module_env)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from _scope(node.body, names, dict(module_env))


def _scope(body: list[ast.stmt], names: Names, env: dict[str, Binding]) -> Iterator[Folded]:
    folder = Folder(names, env)
    for stmt in _statements(body):
        for expr in own_expressions(stmt):
            yield from folder.outermost(expr)
        folder.bind(stmt)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            yield from folder.bound(stmt.target)


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of one scope in the order they are written, nested blocks
    included, definitions (their own scopes) left out."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, field, []))
        for handler in getattr(stmt, "handlers", []):
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", []):
            yield from _statements(case.body)


class Folder:
    """Evaluates expressions of one scope against the values its names are bound to."""

    def __init__(self, names: Names, env: dict[str, Binding]) -> None:
        self.names = names
        self.env = env

    def outermost(self, expr: ast.expr) -> Iterator[Folded]:
        todo: list[ast.AST] = [expr]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.Lambda | ast.Name) or literal_key(node) is not None:
                continue
            if isinstance(node, ast.expr):
                found = self.value(node)
                key = data_key(found[0]) if found else None
                if found and key is not None and key[0] != "const":
                    yield Folded(node, key, found[1])
                    continue
            todo.extend(ast.iter_child_nodes(node))

    def value(self, node: ast.expr) -> Binding | None:
        try:
            return self.fold(node), self.lines(node)
        except FAILURES:
            return None

    def bound(self, name: ast.Name) -> Iterator[Folded]:
        """The value `name` was just bound to (`s += "the Rings"` builds a new one)."""
        if name.id in self.env:
            value, lines = self.env[name.id]
            key = data_key(value)
            if key is not None and key[0] != "const":
                yield Folded(name, key, lines)

    def lines(self, node: ast.expr) -> frozenset[int]:
        found = set(node_lines(node))
        for name in ast.walk(node):
            if isinstance(name, ast.Name) and name.id in self.env:
                found |= self.env[name.id][1]
        return frozenset(found)

    def bind(self, stmt: ast.stmt) -> None:
        """Record what an assignment binds; a name bound to anything unknown is forgotten."""
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self._assign(target, stmt.value, stmt)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._assign(stmt.target, stmt.value, stmt)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            combined = ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op, stmt.value)
            self._assign(stmt.target, ast.copy_location(combined, stmt), stmt)
        else:
            for name in _bound_names(stmt):
                self.env.pop(name, None)

    def _assign(self, target: ast.expr, value: ast.expr, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            found = self.value(value)
            if found is None:
                self.env.pop(target.id, None)
            else:
                self.env[target.id] = (found[0], found[1] | node_lines(stmt))
        else:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    self.env.pop(name.id, None)

    # -- evaluation -------------------------------------------------------------------

    def fold(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str | bytes | int | float | bool) or node.value is None:
                return node.value
            raise Unfoldable
        if isinstance(node, ast.Name):
            if node.id not in self.env:
                raise Unfoldable
            return self.env[node.id][0]
        if isinstance(node, ast.Tuple | ast.List):
            return _bounded(tuple(self.fold(e) for e in node.elts))
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            return _binary(node.op, self.fold(node.left), self.fold(node.right))
        if isinstance(node, ast.UnaryOp):
            return _checked(UNARY[type(node.op)](self.fold(node.operand)))
        if isinstance(node, ast.JoinedStr):
            return _bounded("".join(self._piece(v) for v in node.values))
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.GeneratorExp | ast.ListComp):
            return self._comprehension(node)
        raise Unfoldable

    def _piece(self, value: ast.expr) -> str:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
        if not isinstance(value, ast.FormattedValue):
            raise Unfoldable
        inner = self.fold(value.value)
        spec = self.fold(value.format_spec) if value.format_spec is not None else ""
        if not isinstance(spec, str) or WIDE.search(spec):
            raise Unfoldable
        converted = {-1: inner, 115: str(inner), 114: repr(inner), 97: ascii(inner)}
        return format(converted[value.conversion], spec)

    def _call(self, node: ast.Call) -> Value:
        func = node.func
        name = self.names.dotted(func)
        is_method = isinstance(func, ast.Attribute) and func.attr in STR_METHODS
        if not is_method and name not in ALLOWED_CALLS and name != "map":
            raise Unfoldable
        if any(k.arg is None for k in node.keywords) or any(
            isinstance(a, ast.Starred) for a in node.args
        ):
            raise Unfoldable
        if name == "map" and len(node.args) == 2 and isinstance(node.args[0], ast.Name):
            return self._map(node.args[0].id, self.fold(node.args[1]))
        args = [self.fold(a) for a in node.args]
        kwargs = {k.arg: self.fold(k.value) for k in node.keywords if k.arg}
        if isinstance(func, ast.Attribute) and is_method:
            try:
                receiver = self.fold(func.value)
            except FAILURES:
                receiver = None
            if isinstance(receiver, str | bytes):
                return _method(receiver, func.attr, args, kwargs)
        if name not in ALLOWED_CALLS or any(_too_wide(a) for a in args):
            raise Unfoldable
        return _checked(ALLOWED_CALLS[name](*args, **kwargs))

    def _map(self, function: str, items: Value) -> Value:
        if function not in ("chr", "str", "ord", "int") or not isinstance(items, tuple | str):
            raise Unfoldable
        return _bounded(tuple(ALLOWED_CALLS[function](item) for item in items))

    def _subscript(self, node: ast.Subscript) -> Value:
        value = self.fold(node.value)
        if not isinstance(value, str | bytes | tuple):
            raise Unfoldable
        if isinstance(node.slice, ast.Slice):
            bounds = [self.fold(b) if b is not None else None for b in _slice_parts(node.slice)]
            return value[slice(*bounds)]
        return value[self.fold(node.slice)]

    def _comprehension(self, node: ast.GeneratorExp | ast.ListComp) -> Value:
        if len(node.generators) != 1:
            raise Unfoldable
        generator = node.generators[0]
        items = self.fold(generator.iter)
        if not isinstance(generator.target, ast.Name) or not isinstance(items, tuple | str):
            raise Unfoldable
        inner = Folder(self.names, dict(self.env))
        out = []
        for item in _bounded(items):
            inner.env[generator.target.id] = (item, frozenset())
            if all(inner.fold(test) for test in generator.ifs):
                out.append(inner.fold(node.elt))
        return tuple(out)


def _slice_parts(node: ast.Slice) -> tuple[ast.expr | None, ...]:
    return (node.lower, node.upper, node.step)


def _bound_names(stmt: ast.stmt) -> Iterator[str]:
    """Names a statement other than an assignment binds (a loop's target, `with ... as`,
    an import): their values are unknown from here on."""
    targets: list[ast.AST] = []
    if isinstance(stmt, ast.For | ast.AsyncFor):
        targets.append(stmt.target)
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        targets.extend(i.optional_vars for i in stmt.items if i.optional_vars is not None)
    elif isinstance(stmt, ast.Import | ast.ImportFrom):
        yield from ((a.asname or a.name).split(".")[0] for a in stmt.names)
    for target in targets:
        yield from (n.id for n in ast.walk(target) if isinstance(n, ast.Name))


def _binary(op: ast.operator, left: Value, right: Value) -> Value:
    for side in (left, right):
        if isinstance(side, int) and side.bit_length() > MAX_INT_BITS:
            raise Unfoldable
    if isinstance(op, ast.Pow) and (not isinstance(right, int | float) or abs(right) > 64):
        raise Unfoldable
    if isinstance(op, ast.LShift) and (not isinstance(right, int) or right > MAX_INT_BITS):
        raise Unfoldable
    if isinstance(op, ast.Mult):
        sizes = [len(s) for s in (left, right) if isinstance(s, str | bytes | tuple)]
        counts = [n for n in (left, right) if isinstance(n, int)]
        if sizes and counts and sizes[0] * max(counts[0], 0) > MAX_TEXT:
            raise Unfoldable
    if isinstance(op, ast.Mod) and isinstance(left, str | bytes) and _wide_format(left, right):
        raise Unfoldable
    return _checked(BINARY[type(op)](left, right))


def _method(receiver: str | bytes, name: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    if any(_too_wide(a) for a in (*args, *kwargs.values())) or WIDE.search(str(receiver)):
        raise Unfoldable  # a width that would allocate more than any answer
    if name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        if not isinstance(old, str | bytes) or not isinstance(new, str | bytes):
            raise Unfoldable
        count = receiver.count(old) if old else len(receiver) + 1  # type: ignore[arg-type]
        if len(receiver) + count * len(new) > MAX_TEXT:
            raise Unfoldable
    result = getattr(receiver, name)(*args, **kwargs)
    return _checked(tuple(result) if isinstance(result, list) else result)


def _checked(value: object) -> Value:
    """A value the evaluation may go on with: of a known type, bounded in size."""
    if isinstance(value, list):
        value = tuple(value)
    if not (isinstance(value, str | bytes | int | float | bool | tuple) or value is None):
        raise Unfoldable
    return _bounded(value)


def _too_wide(value: Value) -> bool:
    """An argument that could make a format, a padding or `bytes()` allocate more than
    any answer: a number above MAX_TEXT, a text with a five-digit width."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value > MAX_TEXT
    return isinstance(value, str) and WIDE.search(value) is not None


def _wide_format(template: str | bytes, arguments: Value) -> bool:
    """`"%*s" % (10**8, "x")`, `"%99999s"`: a %-format that would allocate too much."""
    return WIDE.search(str(template)) is not None or any(_too_wide(v) for v in _items(arguments))


def _items(value: Value) -> tuple[Value, ...]:
    return value if isinstance(value, tuple) else (value,)


def _weight(value: Value) -> int:
    """How much a value holds: characters, bytes and items, nested ones counted."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, tuple):
        return len(value) + sum(_weight(item) for item in value)
    return 1


def _bounded(value: Value) -> Value:
    if isinstance(value, str | bytes) and len(value) > MAX_TEXT:
        raise Unfoldable
    if isinstance(value, tuple) and (len(value) > MAX_ITEMS or _weight(value) > 4 * MAX_TEXT):
        raise Unfoldable
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise Unfoldable
    return value
