"""What every family of the production scan's rules reads with: the changed file and
the finding, the lines a change adds (in the encoding Python reads the file with),
a module's AST, and the names its imports bind (`Names`). Pure: bytes in, facts out.

A rule family (one module beside this one) never imports another family: what two
families share lives here or in `rules.py` (the shape of a family and the walks).
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from collections.abc import Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeGuard

from andgate.records import Construct
from andgate.trust.paths import matches

PYTHON_SUFFIXES = frozenset({".py", ".pyw"})
BYTECODE_SUFFIXES = frozenset({".pyc", ".pyo"})
EXTENSION_SUFFIXES = frozenset({".so", ".pyd", ".dll", ".dylib"})
SYMLINK_MODE = "120000"
BINARY_SNIFF = 8000  # git's heuristic: a NUL in the first 8000 bytes


@dataclass(frozen=True)
class FileChange:
    """One changed file; `old`/`new` are its bytes in base/head, None when absent.
    `old_path` is where a renamed file came from (None: same path)."""

    path: str
    old: bytes | None
    new: bytes | None
    old_path: str | None = None
    # git's file modes (`100644`, `120000` for a symlink, whose bytes are its target)
    old_mode: str | None = None
    new_mode: str | None = None

    @property
    def is_symlink(self) -> bool:
        return self.new is not None and self.new_mode == SYMLINK_MODE

    @property
    def path_is_new(self) -> bool:
        return self.new is not None and (self.old is None or self.old_path not in (None, self.path))

    @property
    def adds_bytes(self) -> bool:
        """Head has bytes at this path that base did not have there: a new, edited,
        renamed or copied file (not a deleted or unchanged one)."""
        return self.new is not None and (self.old != self.new or self.path_is_new)


@dataclass(frozen=True)
class ScanFinding:
    path: str
    line: int | None
    construct: Construct
    detail: str

    @property
    def message(self) -> str:
        """One line for the verdict:
        `src/pkg/core.py:12: stack inspection (sys._getframe) in added code [stack_inspection]`"""
        if self.line is None:
            return f"{self.path}: {self.construct.label} ({self.detail}) [{self.construct}]"
        return (
            f"{self.path}:{self.line}: {self.construct.label} ({self.detail}) in added code"
            f" [{self.construct}]"
        )


@dataclass(frozen=True)
class ScanContext:
    """What the rules read besides the changed files: the names a new top-level module
    could shadow (the standard library, installed distributions), the project's own
    packages on base and those the change moves, base's oracle files and fixtures, and
    what the author was given (base's files outside the test side, read only if a rule
    iterates them, and then only once: a second rule that needs them shares the first
    one's reading, as `hardcoded.Corpus` does)."""

    shadowed: Container[str] = frozenset()
    project_packages: frozenset[str] = frozenset()
    moved_packages: frozenset[str] = frozenset()
    oracle_sources: Mapping[str, bytes] = field(default_factory=dict)
    given: Iterable[tuple[str, bytes]] = ()
    # The module names base's test side provides (name -> the test-side path that
    # provides it) and the folders tests import from (`trust.test_names`).
    test_names: Mapping[str, str] = field(default_factory=dict)
    test_roots: tuple[str, ...] = ()


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF]


# -- lines a change adds ----------------------------------------------------------------

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as Python's tokenizer counts them (not str.splitlines: no \\f, \\x1c, ...)."""
    lines = LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def source_encoding(data: bytes) -> str:
    """The encoding Python reads a source file with: its BOM or `coding` declaration
    (PEP 263), `utf-8` without one. A declaration Python refuses is reported as
    `utf-8`: the file then does not import at all."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (SyntaxError, LookupError):
        return "utf-8"
    return encoding


def decode(data: bytes) -> str:
    """The text as the interpreter reads it. A scan that decoded `# coding: utf-7`
    as UTF-8 would count `+AAo-` (a line break in UTF-7) as part of one comment
    line, and drop the constructs Python runs on the lines it makes."""
    try:
        return data.decode(source_encoding(data))
    except (UnicodeDecodeError, LookupError):
        return data.decode("utf-8", "replace")


def added_lines(old: bytes | None, new: bytes) -> frozenset[int]:
    """1-based numbers of the lines of `new` that are not in `old`."""
    new_lines = split_lines(decode(new))
    if old is None:
        return frozenset(range(1, len(new_lines) + 1))
    matcher = difflib.SequenceMatcher(None, split_lines(decode(old)), new_lines, autojunk=False)
    added: set[int] = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            added.update(range(j1 + 1, j2 + 1))
    return frozenset(added)


# -- a module's AST ---------------------------------------------------------------------


def parse(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def node_lines(node: ast.AST) -> frozenset[int]:
    start = getattr(node, "lineno", None)
    if start is None:
        return frozenset()
    return frozenset(range(start, (getattr(node, "end_lineno", None) or start) + 1))


def short(node: ast.AST, limit: int = 60) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_docstring(stmt: ast.stmt) -> TypeGuard[ast.Expr]:
    """A bare string statement: a docstring, or an attribute docstring."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted name it stands for (`import inspect as i`, `from sys import argv`)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


class Names:
    """What a module's names stand for: `dotted` spells the name an expression refers
    to through the module's imports (`i.stack` is `inspect.stack` after
    `import inspect as i`; `Path.cwd()` is `pathlib.Path.cwd`)."""

    def __init__(self, tree: ast.Module, path: str = "") -> None:
        self.path = path  # the file's path in the repository
        self.aliases = import_aliases(tree)
        # Several families' rules ask for the same node's name: each is spelt once.
        self._spelt: dict[ast.AST, str | None] = {}
        self.tree = tree  # the module, for rules that first ask whether it can hold a finding
        self._bound: dict[tuple[str, str], list[ast.AST]] | None = None
        self._iterated: set[int] = set()

    def bound(self, name: str, qualname: str, *, iterated: bool = True) -> list[ast.AST]:
        """What the module binds `name` to, as seen from the scope `qualname` (the
        scope's own bindings, else the enclosing scopes' up to the module's): the
        values of its assignments, the `with` item it names, and (with `iterated`)
        what a `for` or a comprehension iterates. Read once per module, on first use."""
        return self.binding(name, qualname, iterated=iterated)[1]

    def binding(
        self, name: str, qualname: str, *, iterated: bool = True
    ) -> tuple[str, list[ast.AST]]:
        """The scope whose binding of `name` the scope `qualname` sees, and its values."""
        if self._bound is None:
            self._bound = bindings(self.tree, self._iterated)
        scope = qualname
        while True:
            values = self._bound.get((scope, name))
            if values or not scope:
                values = values or []
                if not iterated:
                    values = [v for v in values if id(v) not in self._iterated]
                return scope, values
            scope = scope.rpartition(".")[0]

    def reach(self, node: ast.AST, qualname: str, depth: int = 3) -> Iterator[ast.AST]:
        """Every node of `node`, and of what the names it reads are bound to (up to
        `depth` bindings away): where a value or a path comes from."""
        seen: set[int] = set()
        stack = [(node, depth)]
        while stack:
            current, left = stack.pop()
            for part in ast.walk(current):
                if id(part) in seen:
                    continue
                seen.add(id(part))
                yield part
                if left and isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load):
                    stack.extend((value, left - 1) for value in self.bound(part.id, qualname))

    def dotted(self, node: ast.AST | None) -> str | None:
        if node is None:
            return None
        if node not in self._spelt:
            self._spelt[node] = self._spell(node)
        return self._spelt[node]

    def _spell(self, node: ast.AST | None) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Call) and parts:
            # Path.cwd() / pathlib.Path().cwd(): the call's callee names the object
            inner = self.dotted(node.func)
            return f"{inner}.{'.'.join(reversed(parts))}" if inner else None
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id, node.id)
        if head == "Path" or head.endswith(".Path"):
            head = "pathlib.Path"
        return ".".join([head, *reversed(parts)])


def bindings(tree: ast.Module, iterated: set[int]) -> dict[tuple[str, str], list[ast.AST]]:
    """(scope's qualified name, name) -> what the module binds the name to there;
    `iterated` gets the ids of the values a loop or comprehension iterates."""
    found: dict[tuple[str, str], list[ast.AST]] = {}

    def bind(target: ast.AST, value: ast.AST, scope: str) -> None:
        if isinstance(target, ast.Name):
            found.setdefault((scope, target.id), []).append(value)
        elif isinstance(target, ast.Tuple | ast.List):
            pairs = isinstance(value, ast.Tuple | ast.List) and len(value.elts) == len(target.elts)
            for i, part in enumerate(target.elts):
                bind(part, value.elts[i] if pairs else value, scope)  # type: ignore[attr-defined]
        elif isinstance(target, ast.Starred):
            bind(target.value, value, scope)

    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value, scope)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr) and node.value:
            bind(node.target, node.value, scope)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            iterated.add(id(node.iter))
            bind(node.target, node.iter, scope)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bind(node.optional_vars, node.context_expr, scope)
        inner = scope
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = f"{scope}.{node.name}"
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return found


# -- constructs in one version of a file --------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """Where a node is: its qualified name, whether it runs at import, whether only as a
    script, and the lines of the `if` tests that decide whether it runs (an edited guard
    around an unchanged line changes what that line does)."""

    qualname: str
    at_import: bool
    in_main: bool
    guards: frozenset[int] = frozenset()

    def guarded_by(self, test: ast.expr, *, in_main: bool | None = None) -> Scope:
        in_main = self.in_main if in_main is None else in_main
        return replace(self, in_main=in_main, guards=self.guards | node_lines(test))


@dataclass(frozen=True)
class Hit:
    """A construct in one version of a file; `key` (construct, scope, code) says what it
    is independent of the lines it is on."""

    construct: Construct
    detail: str
    lines: frozenset[int]
    key: tuple[str, ...]
    guards: frozenset[int] = frozenset()


def hit(construct: Construct, detail: str, node: ast.AST, scope: Scope) -> Hit:
    """The construct at `node`, keyed by its scope and code, with the scope's guards."""
    key = (construct.value, scope.qualname, detail)
    return Hit(construct, detail, node_lines(node), key, scope.guards)


def plain_hit(construct: Construct, detail: str, lines: frozenset[int], qualname: str) -> Hit:
    """The construct on `lines` of the scope `qualname`, however that scope runs."""
    return Hit(construct, detail, lines, (construct.value, qualname, detail))


# -- findings ---------------------------------------------------------------------------------


def is_allowed(finding: ScanFinding, allow: Mapping[str, frozenset[Construct]]) -> bool:
    return any(
        finding.construct in constructs and matches(finding.path, (glob,))
        for glob, constructs in allow.items()
    )


def unique(findings: Iterable[ScanFinding]) -> list[ScanFinding]:
    """One finding per file, line and construct (`inspect.currentframe().f_back` is one)."""
    seen: dict[tuple[str, int | None, Construct], ScanFinding] = {}
    for finding in findings:
        seen.setdefault((finding.path, finding.line, finding.construct), finding)
    return sorted(seen.values(), key=lambda f: (f.path, f.line or 0, f.construct))


def own_expressions(stmt: ast.stmt) -> Iterator[ast.expr]:
    """The expressions a statement holds itself (its test, value, targets, a `with`'s
    contexts, a case's guard, a handler's exception type), not those of the statements
    nested in its body."""
    for _, value in ast.iter_fields(stmt):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.expr):
                yield item
            elif isinstance(item, ast.withitem):
                yield item.context_expr
            elif isinstance(item, ast.match_case) and item.guard is not None:
                yield item.guard
            elif isinstance(item, ast.ExceptHandler) and item.type is not None:
                yield item.type
