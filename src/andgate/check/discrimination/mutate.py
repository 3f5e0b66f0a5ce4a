"""Small mutants of production functions: where the oracle class is blind.

A mutant changes one thing in one function: a comparison operator, `and`/`or`,
a `not` dropped, a boolean or number constant, `return x` made `return None`,
or a simple statement made `pass`. Each is a unified diff of the file that
`git apply` accepts, replayed like a known-bad fixture; a mutant every oracle
item survives marks a place the oracles do not look at.

The mutator is andgate's own, on the standard library's `ast`: mutmut's engine
is not importable as a library, and libcst is not a dependency andgate adds.
Every edit replaces one source segment (`ast` positions, UTF-8 byte columns),
so the rest of the file stays byte-identical and the diff is one hunk.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Container, Iterator
from dataclasses import dataclass

COMPARE_SWAPS: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Lt: ("<", "<="),
    ast.LtE: ("<=", "<"),
    ast.Gt: (">", ">="),
    ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="),
    ast.NotEq: ("!=", "=="),
    ast.Is: ("is", "is not"),
    ast.IsNot: ("is not", "is"),
    ast.In: ("in", "not in"),
    ast.NotIn: ("not in", "in"),
}
BOOL_SWAPS: dict[type[ast.boolop], tuple[str, str]] = {
    ast.And: ("and", "or"),
    ast.Or: ("or", "and"),
}
# Statements whose removal (`pass` in their place) is a plausible bug.
REMOVABLE = (
    ast.Expr,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Raise,
    ast.Assert,
    ast.Delete,
    ast.Break,
    ast.Continue,
)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Edit:
    """Replace source bytes [start, end) with `text`."""

    start: int
    end: int
    text: str
    line: int
    kind: str
    description: str


@dataclass(frozen=True)
class Mutant:
    path: str
    function: str
    line: int
    kind: str
    description: str
    patch: bytes

    @property
    def size(self) -> int:
        """Changed lines: smaller diffs make clearer fixtures."""
        return sum(
            1
            for line in self.patch.splitlines()
            if line[:1] in (b"+", b"-") and not line.startswith((b"+++", b"---"))
        )

    @property
    def name(self) -> str:
        stem = self.path.rsplit("/", 1)[-1].removesuffix(".py")
        return f"{stem}.{self.function}:{self.line} {self.kind}"


class Source:
    """A file's text with byte offsets for `ast` positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def apply(self, edit: Edit) -> str:
        return (self.data[: edit.start] + edit.text.encode() + self.data[edit.end :]).decode()


def mutants_of(
    path: str,
    text: str,
    lines: Container[int] | None = None,
    limit: int | None = None,
    only: Container[str] | None = None,
) -> list[Mutant]:
    """Every mutant of every function in a file, in source order; only those on
    `lines`, of the functions `only` names (qualified, `Class.method`) and at most
    `limit` when given (each mutant parses the whole file and diffs it: on a large
    module, every mutant of it costs seconds). A file that does not parse has none."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    source = Source(text)
    original = ast.dump(tree)
    mutants: list[Mutant] = []
    for function, node in functions(tree):
        if only is not None and function not in only:
            continue
        for edit in sorted(edits_in(node, source), key=lambda e: (e.start, e.end, e.kind)):
            if lines is not None and edit.line not in lines:
                continue
            if limit is not None and len(mutants) >= limit:
                return mutants
            mutated = source.apply(edit)
            if not _changes_meaning(mutated, original):
                continue
            patch = unified_diff(path, text, mutated)
            mutants.append(Mutant(path, function, edit.line, edit.kind, edit.description, patch))
    return mutants


def _changes_meaning(mutated: str, original: str) -> bool:
    try:
        return ast.dump(ast.parse(mutated)) != original
    except (SyntaxError, ValueError):
        return False


def functions(tree: ast.Module, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function and method, nested ones too."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, FUNCTIONS):
            name = f"{prefix}{node.name}"
            yield name, node
            yield from functions(node, f"{name}.")  # type: ignore[arg-type]
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")  # type: ignore[arg-type]


def own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of functions or classes inside it
    (they are mutated under their own name), nor decorators and defaults."""
    stack = list(reversed(function.body))  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda, ast.JoinedStr)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def edits_in(function: ast.AST, source: Source) -> Iterator[Edit]:
    docstring = _docstring(function)
    for node in own_nodes(function):
        if isinstance(node, ast.Compare):
            yield from _compare(node, source)
        elif isinstance(node, ast.BoolOp):
            yield from _boolop(node, source)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield from _not(node, source)
        elif isinstance(node, ast.Constant):
            yield from _constant(node, source)
        if isinstance(node, ast.Return) and _returns_something(node):
            start, end = source.span(node.value)  # type: ignore[arg-type]
            yield Edit(start, end, "None", node.lineno, "return", "return None")
        if isinstance(node, REMOVABLE) and _removable(node, docstring):
            start, end = source.span(node)
            what = source.segment(start, end)
            yield Edit(start, end, "pass", node.lineno, "remove", f"removed `{_short(what)}`")


def _compare(node: ast.Compare, source: Source) -> Iterator[Edit]:
    operands = [node.left, *node.comparators]
    for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
        swap = COMPARE_SWAPS.get(type(op))
        if swap is None:
            continue
        old, new = swap
        edit = _in_gap(source, left, right, old, new)
        if edit is not None:
            yield Edit(*edit, new, node.lineno, "compare", f"`{old}` -> `{new}`")


def _boolop(node: ast.BoolOp, source: Source) -> Iterator[Edit]:
    old, new = BOOL_SWAPS[type(node.op)]
    edit = _in_gap(source, node.values[0], node.values[1], old, new)
    if edit is not None:
        yield Edit(*edit, new, node.lineno, "boolean", f"`{old}` -> `{new}`")


def _in_gap(
    source: Source, left: ast.AST, right: ast.AST, old: str, new: str
) -> tuple[int, int] | None:
    """The span of operator `old` between two operands, when the text between them
    is only that operator, spaces and parentheses (no comment, no line break)."""
    gap_start, gap_end = source.span(left)[1], source.span(right)[0]
    gap = source.segment(gap_start, gap_end)
    found = re.fullmatch(r"[\s()]*?(" + r"\s+".join(map(re.escape, old.split())) + r")[\s()]*", gap)
    if found is None or "\n" in gap:
        return None
    start = gap_start + len(gap[: found.start(1)].encode())
    return start, start + len(found.group(1).encode())


def _not(node: ast.UnaryOp, source: Source) -> Iterator[Edit]:
    start, end = source.span(node)
    inner = source.segment(*source.span(node.operand))
    if "\n" not in inner:
        yield Edit(start, end, f"({inner})", node.lineno, "not", "dropped `not`")


def _constant(node: ast.Constant, source: Source) -> Iterator[Edit]:
    value = node.value
    if isinstance(value, bool):
        new = str(not value)
    elif isinstance(value, int) and not isinstance(value, bool):
        new = str(value + 1)
    else:
        return
    start, end = source.span(node)
    old = source.segment(start, end)
    yield Edit(start, end, new, node.lineno, "constant", f"`{old}` -> `{new}`")


def _returns_something(node: ast.Return) -> bool:
    value = node.value
    return value is not None and not (isinstance(value, ast.Constant) and value.value is None)


def _docstring(function: ast.AST) -> ast.AST | None:
    body = function.body  # type: ignore[attr-defined]
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first
    return None


def _removable(node: ast.AST, docstring: ast.AST | None) -> bool:
    """A one-line statement that does something (not the docstring, not `...`)."""
    if node is docstring or node.lineno != node.end_lineno:  # type: ignore[attr-defined]
        return False
    return not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))


def _short(text: str, limit: int = 50) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def unified_diff(path: str, old: str, new: str) -> bytes:
    """A `git diff`-style patch of one file that `git apply` accepts."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    out = [f"diff --git a/{path} b/{path}\n"]
    for line in lines:
        # A last line without a newline is marked the way git marks it.
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out).encode("utf-8")
