"""The production-diff scan: constructs that game tests, in the lines a change adds.

Agents that cannot pass a test honestly special-case its inputs, overload `==`,
detect the gate and behave only under it, exit the process, shadow a module the
oracle imports, or hide the working code in committed bytecode. None of that is
visible to a test run, so this module reads base..head's production files before
any test runs and names each such construct with its file and line.

Only what the change adds counts: a construct present identically in base (same
scope, same code) is never reported, so a project's long-standing `sys._getframe`
does not block every later change. Python files are read as ASTs; a `.py` that
does not parse falls back to patterns over its added lines. The module is pure:
callers give it bytes and get findings back.
"""

from __future__ import annotations

import ast
import codecs
import difflib
import io
import re
import sys
import tokenize
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any, TypeGuard

from andgate.records import Construct
from andgate.trust.paths import is_gitattributes, matches


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


# -- what counts ----------------------------------------------------------------------

HARNESS_MODULES = frozenset({"pytest", "_pytest", "andgate", "xdist", "nose", "nose2"})
HARNESS_WORDS = ("pytest", "py.test", "unittest", "andgate", "nose")
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
EXIT_ANYWHERE = frozenset({"os._exit", "os.abort", "atexit.register"})
EXIT_AT_MODULE_LEVEL = frozenset(
    {"sys.exit", "exit", "quit", "os.kill", "signal.raise_signal", "os.killpg"}
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
PACKAGE_ROOTS = frozenset({"", "src", "lib"})
BYTECODE_SUFFIXES = frozenset({".pyc", ".pyo"})
EXTENSION_SUFFIXES = frozenset({".so", ".pyd", ".dll", ".dylib"})
IMPLICIT_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
PYTHON_SUFFIXES = frozenset({".py", ".pyw"})
SYMLINK_MODE = "120000"
BINARY_SNIFF = 8000  # git's heuristic: a NUL in the first 8000 bytes
# Images, fonts and message catalogs whose bytes say what their name says: review tools
# show the first two, and Python imports none of them. A `.png` that is really bytecode
# or a pickle is still binary.
MEDIA_MAGIC = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
    ".ico": (b"\x00\x00\x01\x00",),
    ".webp": (b"RIFF",),
    ".woff": (b"wOFF",),
    ".woff2": (b"wOF2",),
    ".ttf": (b"\x00\x01\x00\x00", b"true"),
    ".otf": (b"OTTO",),
    # gettext's compiled catalogs (either byte order), which `msgfmt` builds from the
    # `.po` files a review shows; humanize generates them at install (generated_files).
    # A catalog is strings Python's gettext looks up, never code it imports.
    ".mo": (b"\xde\x12\x04\x95", b"\x95\x04\x12\xde"),
}


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


# -- the AST scan ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """A construct in one version of a file; `key` (construct, scope, code) says what it
    is independent of the lines it is on."""

    construct: Construct
    detail: str
    lines: frozenset[int]
    key: tuple[str, ...]
    guards: frozenset[int] = frozenset()


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


def top_module(name: str) -> str:
    return name.split(".", 1)[0]


def is_harness_module(name: str) -> bool:
    top = top_module(name)
    if top == "unittest":
        return not UNITTEST_PUBLIC.intersection(name.split(".")[1:2])
    return top in HARNESS_MODULES or top.startswith("pytest_")


def mentions_harness(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in HARNESS_WORDS)


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


class Scanner:
    """Walks one module and collects the constructs in it."""

    def __init__(self, tree: ast.Module, path: str) -> None:
        self.aliases = import_aliases(tree)
        self.is_main_module = PurePosixPath(path).name == "__main__.py"
        self.hits: list[Hit] = []
        self.tree = tree

    def run(self) -> list[Hit]:
        self.block(self.tree.body, Scope("", at_import=True, in_main=self.is_main_module))
        return self.hits

    # -- statements

    def block(self, body: Sequence[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self.statement(stmt, scope)

    def statement(self, stmt: ast.stmt, scope: Scope) -> None:
        if is_docstring(stmt):
            return
        if isinstance(stmt, ast.If):
            self.if_statement(stmt, scope)
            return
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            self.function(stmt, scope)
            return
        if isinstance(stmt, ast.ClassDef):
            for expr in (*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)):
                self.expression(expr, scope)
            inner = replace(scope, qualname=f"{scope.qualname}.{stmt.name}")
            self.block(stmt.body, inner)
            return
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            self.imports(stmt, scope)
        if isinstance(stmt, ast.Raise) and scope.at_import and not scope.in_main:
            self.raise_system_exit(stmt, scope)
        if isinstance(stmt, ast.Assign):
            self.dunder_assignment(stmt, scope)
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
        if node.name in COMPARISON_DUNDERS:
            self.constant_dunder(node, qualname)
        self.block(node.body, Scope(qualname, at_import=False, in_main=False))

    # -- constructs

    def add(self, construct: Construct, detail: str, node: ast.AST, scope: Scope) -> None:
        key = (construct.value, scope.qualname, detail)
        self.hits.append(Hit(construct, detail, node_lines(node), key, scope.guards))

    def imports(self, stmt: ast.Import | ast.ImportFrom, scope: Scope) -> None:
        if isinstance(stmt, ast.Import):
            names = [alias.name for alias in stmt.names]
        elif stmt.level or not stmt.module:
            return
        elif stmt.module == "unittest":
            names = [f"unittest.{a.name}" for a in stmt.names]
        else:
            names = [stmt.module]
            qualified = {f"{stmt.module}.{a.name}" for a in stmt.names}
            if qualified & STACK_NAMES:
                self.add(Construct.STACK_INSPECTION, short(stmt), stmt, scope)
            if qualified & EXIT_ANYWHERE:
                self.add(Construct.EXIT_AT_IMPORT, short(stmt), stmt, scope)
        if any(is_harness_module(name) for name in names):
            self.add(Construct.HARNESS_REFERENCE, short(stmt), stmt, scope)

    def raise_system_exit(self, stmt: ast.Raise, scope: Scope) -> None:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        if self.dotted(exc) in ("SystemExit", "KeyboardInterrupt"):
            self.add(Construct.EXIT_AT_IMPORT, short(stmt), stmt, scope)

    def constant_dunder(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> None:
        returns = list(own_returns(node))
        values = {constant_value(r.value) for r in returns}
        if returns and len(values) == 1 and None not in values:
            value = next(iter(values))
            assert value is not None  # None is not in values
            lines = frozenset({node.lineno}).union(*(node_lines(r) for r in returns))
            key = (Construct.CONSTANT_COMPARISON.value, qualname, repr(value))
            detail = f"{node.name} always returns {value[1]!r}"
            self.hits.append(Hit(Construct.CONSTANT_COMPARISON, detail, lines, key))

    def dunder_assignment(self, stmt: ast.Assign, scope: Scope) -> None:
        """`__eq__ = lambda self, other: True`, also onto a class from outside it."""
        if not isinstance(stmt.value, ast.Lambda):
            return
        value = constant_value(stmt.value.body)
        for target in stmt.targets:
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if name in COMPARISON_DUNDERS and value is not None:
                detail = f"{name} always returns {value[1]!r}"
                self.add(Construct.CONSTANT_COMPARISON, detail, stmt, scope)

    def expression(self, expr: ast.expr, scope: Scope) -> None:
        """One expression a statement holds (its test, value, call...), walked whole."""
        self.context_checks(expr, scope)
        in_lambda = replace(scope, at_import=False)
        stack: list[tuple[ast.AST, Scope]] = [(expr, scope)]
        while stack:
            node, where = stack.pop()
            self.node(node, where)
            inner = in_lambda if isinstance(node, ast.Lambda) else where
            stack.extend((child, inner) for child in ast.iter_child_nodes(node))

    def node(self, node: ast.AST, scope: Scope) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if ENV_NAME.search(node.value):
                self.add(Construct.HARNESS_ENV, repr(node.value), node, scope)
        elif isinstance(node, ast.Attribute | ast.Name):
            self.reference(node, scope)
        elif isinstance(node, ast.Call):
            self.call(node, scope)

    def reference(self, node: ast.Attribute | ast.Name, scope: Scope) -> None:
        name = self.dotted(node)
        if isinstance(node, ast.Attribute) and node.attr == "f_back":
            self.add(Construct.STACK_INSPECTION, short(node), node, scope)
        elif name in STACK_NAMES:
            self.add(Construct.STACK_INSPECTION, name, node, scope)
        elif name in EXIT_ANYWHERE:
            self.add(Construct.EXIT_AT_IMPORT, name, node, scope)

    def call(self, node: ast.Call, scope: Scope) -> None:
        name = self.dotted(node.func)
        if name in IMPORT_CALLS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and is_harness_module(str(first.value)):
                self.add(Construct.HARNESS_REFERENCE, short(node), node, scope)
        if name in EXIT_AT_MODULE_LEVEL and scope.at_import and not scope.in_main:
            self.add(Construct.EXIT_AT_IMPORT, short(node), node, scope)

    def context_checks(self, expr: ast.expr, scope: Scope) -> None:
        """Expressions that test where they run: `"pytest" in sys.modules`, an argv or
        cwd compared with a test-runner string, the environment searched for one."""
        names = {self.dotted(n) for n in ast.walk(expr) if isinstance(n, ast.Attribute | ast.Name)}
        strings = [
            n.value
            for n in ast.walk(expr)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
        looks_up_tests = "sys.modules" in names and any(
            is_harness_module(s) or TEST_MODULE.search(s) for s in strings
        )
        checks_runner = ARGV in names and any(mentions_harness(s) for s in strings)
        checks_cwd = bool(names & CWD) and any(TEST_PLACE.search(s) for s in strings)
        if looks_up_tests or checks_runner or checks_cwd:
            self.add(Construct.HARNESS_REFERENCE, short(expr), expr, scope)
        elif names & ENVIRON and any(mentions_harness(s) for s in strings):
            self.add(Construct.HARNESS_ENV, short(expr), expr, scope)

    def dotted(self, node: ast.AST | None) -> str | None:
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


# -- production-side evasions: plugins, environment and system writes ------------------------

ENVIRON_MAPS = frozenset({"os.environ", "os.environb"})
ENVIRON_WRITERS = frozenset({"setdefault", "update", "__setitem__"})
PUTENV = frozenset({"os.putenv"})
OPENERS = frozenset({"open", "io.open", "codecs.open", "builtins.open"})
PATH_WRITERS = frozenset({"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"})
COPIERS = frozenset({"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move", "os.rename"})
WRITE_MODES = frozenset("wax+")
WRITE_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_APPEND", "O_CREAT", "O_TRUNC"})
# Absolute paths every program may write: the null device and the standard streams.
HARMLESS_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "nul"})
WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]")
HOOK_MARKERS = frozenset({"hookimpl", "hookspec"})


class EvasionScanner:
    """What makes a test process run other code than the code under review, or
    pass for another reason than the code: a pytest hook or plugin registration in
    production code (loaded into every pytest process by an entry point), a write to
    `os.environ` (a made-up credential a test then finds) and a write to an absolute
    system path (`/etc/hosts` pointing a service at a stub). At import or in a
    function alike: either runs inside the test process."""

    def __init__(self, tree: ast.Module, names: Scanner) -> None:
        self.names = names  # its `dotted` resolves the module's import aliases
        self.tree = tree
        self.qualname = ""
        self.hits: list[Hit] = []

    def run(self) -> list[Hit]:
        """One walk over every node, each with the qualified name of its scope."""
        stack: list[tuple[ast.AST, str]] = [(self.tree, "")]
        while stack:
            node, self.qualname = stack.pop()
            handler = EVASION_HANDLERS.get(type(node))
            if handler is not None:
                handler(self, node)
            inner = self.qualname
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{inner}.{node.name}"
            stack.extend((child, inner) for child in ast.iter_child_nodes(node))
        return self.hits

    def add(self, construct: Construct, detail: str, lines: frozenset[int]) -> None:
        self.hits.append(Hit(construct, detail, lines, (construct.value, self.qualname, detail)))

    def dotted(self, node: ast.AST | None) -> str:
        return self.names.dotted(node) or ""

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name.startswith("pytest_"):
            # the `def` line only: an edit inside a hook base already had is old
            self.add(Construct.PYTEST_PLUGIN, f"def {node.name}", frozenset({node.lineno}))

    def assignment(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for part in ast.walk(target):
                self.assigned(part, node)

    def assigned(self, target: ast.AST, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name) and target.id == "pytest_plugins":
            self.add(Construct.PYTEST_PLUGIN, short(stmt), node_lines(stmt))
        elif self.environ_item(target) or (
            isinstance(stmt, ast.AugAssign) and self.dotted(target) in ENVIRON_MAPS
        ):
            self.add(Construct.ENVIRONMENT_WRITE, short(stmt), node_lines(stmt))

    def environ_item(self, target: ast.AST) -> bool:
        return isinstance(target, ast.Subscript) and self.dotted(target.value) in ENVIRON_MAPS

    def reference(self, node: ast.Attribute | ast.Name) -> None:
        """`pytest.hookimpl`, or `hookimpl` imported from pytest."""
        if isinstance(node, ast.Attribute) and node.attr not in HOOK_MARKERS:
            return
        name = self.dotted(node)
        if name.rpartition(".")[2] in HOOK_MARKERS and is_harness_module(name):
            self.add(Construct.PYTEST_PLUGIN, name, node_lines(node))

    def call(self, node: ast.Call) -> None:
        construct = self.call_construct(node)
        if construct is not None:
            self.add(construct, short(node), node_lines(node))

    def call_construct(self, node: ast.Call) -> Construct | None:
        func = node.func
        name = self.dotted(func)
        if name in PUTENV or (
            isinstance(func, ast.Attribute)
            and func.attr in ENVIRON_WRITERS
            and self.dotted(func.value) in ENVIRON_MAPS
        ):
            return Construct.ENVIRONMENT_WRITE
        if name.endswith("HookimplMarker") and any(
            isinstance(a, ast.Constant) and a.value == "pytest" for a in node.args
        ):
            return Construct.PYTEST_PLUGIN
        if self.writes_system_file(node, name):
            return Construct.SYSTEM_FILE_WRITE
        return None

    def writes_system_file(self, node: ast.Call, name: str) -> bool:
        func, args = node.func, node.args
        if name in OPENERS or name == "os.open":
            mode = args[1] if len(args) > 1 else keyword(node, "flags" if "os." in name else "mode")
            return bool(args) and self.system_path(args[0]) and self.opens_for_writing(mode, name)
        if name in COPIERS:
            return len(args) > 1 and self.system_path(args[1])
        if isinstance(func, ast.Attribute) and self.system_path(func.value):
            if func.attr in PATH_WRITERS:
                return True
            if func.attr == "open":
                return self.opens_for_writing(args[0] if args else keyword(node, "mode"), "open")
        return False

    def opens_for_writing(self, mode: ast.expr | None, opener: str) -> bool:
        if opener == "os.open":
            flags = ast.walk(mode) if mode is not None else ()
            names = {getattr(n, "attr", None) or getattr(n, "id", "") for n in flags}
            return bool(names & WRITE_FLAGS)
        return (
            isinstance(mode, ast.Constant)
            and isinstance(mode.value, str)
            and bool(WRITE_MODES & set(mode.value))
        )

    def system_path(self, node: ast.expr) -> bool:
        """An absolute path written as a literal: `"/etc/hosts"`, `Path("/etc") / "hosts"`,
        `os.path.join("/etc", "hosts")`, `Path("/etc/hosts")`."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            absolute = text.startswith("/") or bool(WINDOWS_ABSOLUTE.match(text))
            return absolute and text.lower() not in HARMLESS_FILES
        if isinstance(node, ast.JoinedStr) and node.values:
            return self.system_path(node.values[0])  # f"/etc/{name}"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self.system_path(node.left)
        if isinstance(node, ast.Call) and node.args:
            callee = self.dotted(node.func)
            if callee in ("pathlib.Path", "pathlib.PurePath", "os.path.join"):
                return self.system_path(node.args[0])
        return False


EVASION_HANDLERS: dict[type[ast.AST], Callable[[EvasionScanner, Any], None]] = {
    ast.FunctionDef: EvasionScanner.function,
    ast.AsyncFunctionDef: EvasionScanner.function,
    ast.Assign: EvasionScanner.assignment,
    ast.AugAssign: EvasionScanner.assignment,
    ast.AnnAssign: EvasionScanner.assignment,
    ast.Attribute: EvasionScanner.reference,
    ast.Name: EvasionScanner.reference,
    ast.Call: EvasionScanner.call,
}
# Every evasion names one of these in its source: a module that holds none is not walked.
EVASION_WORDS = re.compile(
    r"pytest_|hook|environ|putenv|open|write_|touch|symlink_to|hardlink_to|shutil|rename"
)


def evasion_hits(tree: ast.Module, text: str, names: Scanner) -> list[Hit]:
    return EvasionScanner(tree, names).run() if EVASION_WORDS.search(text) else []


def keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


def ast_hits(data: bytes, path: str) -> list[Hit] | None:
    tree = parse(data)
    if tree is None:
        return None
    scanner = Scanner(tree, path)
    return scanner.run() + evasion_hits(tree, decode(data), scanner)


# -- the bytes scan, for a .py that does not parse --------------------------------------------

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
    (Construct.EXIT_AT_IMPORT, re.compile(r"os\._exit\s*\(|os\.abort\s*\(|atexit\.register")),
    (Construct.EXIT_AT_IMPORT, re.compile(r"^(?:sys\.exit|exit|quit)\s*\(|^raise\s+SystemExit")),
)


def line_hits(data: bytes, lines: frozenset[int]) -> Iterator[tuple[int, Construct, str]]:
    text = split_lines(decode(data))
    for number in sorted(lines):
        line = text[number - 1]
        if line.lstrip().startswith("#"):
            continue
        seen = set()
        for construct, pattern in LINE_PATTERNS:
            match = pattern.search(line)
            if match and construct not in seen:
                seen.add(construct)
                yield number, construct, match.group(0).strip()[:60]
    # A multi-line `def __eq__(...):` / `return True` pair.
    for number in sorted(lines):
        if number < len(text) and re.search(rf"def\s+{DUNDER}\s*\(.*:\s*$", text[number - 1]):
            following = text[number].strip()
            if re.fullmatch(rf"return\s+{CONST}", following):
                yield number, Construct.CONSTANT_COMPARISON, following


# -- file-level constructs --------------------------------------------------------------------


def module_name(path: str) -> str | None:
    """The top-level import name a new file defines, when it sits at the repository root
    or directly in a package root (`src/`); None for anything deeper or not importable."""
    parts = PurePosixPath(path).parts
    if len(parts) >= 2 and parts[-1] == "__init__.py":
        folder, name = "/".join(parts[:-2]), parts[-2]
    else:
        folder, name = "/".join(parts[:-1]), parts[-1]
        suffix = PurePosixPath(name).suffix
        if suffix in PYTHON_SUFFIXES or suffix in BYTECODE_SUFFIXES:
            name = PurePosixPath(name).stem
        elif suffix in EXTENSION_SUFFIXES:
            name = name.split(".", 1)[0]
        else:
            return None
    if folder not in PACKAGE_ROOTS or not name.isidentifier():
        return None
    return name


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF]


def is_media(path: str, data: bytes) -> bool:
    magic = MEDIA_MAGIC.get(PurePosixPath(path).suffix.lower(), ())
    return any(data.startswith(m) for m in magic)


def file_findings(
    change: FileChange,
    *,
    shadowed: Container[str],
    project_packages: frozenset[str],
    moved_packages: frozenset[str],
) -> Iterator[ScanFinding]:
    path, new = change.path, change.new
    if is_gitattributes(path) and change.old != new:
        yield ScanFinding(path, None, Construct.GITATTRIBUTES, gitattributes_detail(change))
    if new is None or (change.old == new and not change.path_is_new):
        return
    suffix = PurePosixPath(path).suffix
    name = PurePosixPath(path).name
    if suffix in BYTECODE_SUFFIXES:
        yield ScanFinding(path, None, Construct.BINARY_FILE, f"bytecode ({suffix})")
    elif suffix in EXTENSION_SUFFIXES:
        yield ScanFinding(path, None, Construct.BINARY_FILE, f"compiled extension ({suffix})")
    elif is_binary(new) and not is_media(path, new):
        yield ScanFinding(path, None, Construct.BINARY_FILE, "binary content, invisible in review")
    if path == "__init__.py":
        yield ScanFinding(path, None, Construct.IMPLICIT_IMPORT, "a repository-root __init__.py")
    elif name in IMPLICIT_NAMES:
        yield ScanFinding(path, None, Construct.IMPLICIT_IMPORT, f"{name}, run at start-up")
    elif suffix == ".pth":
        yield ScanFinding(path, None, Construct.IMPLICIT_IMPORT, "a .pth file, run by site")
    if change.path_is_new:
        module = module_name(path)
        why = shadow_reason(module, shadowed, project_packages, moved_packages)
        if why:
            yield ScanFinding(path, None, Construct.SHADOWING_MODULE, why)


def gitattributes_detail(change: FileChange) -> str:
    if change.new is None:
        return "deleted; it decides how git checks files out"
    return "it can rewrite files (eol, filters) when git checks them out"


def shadow_reason(
    module: str | None,
    shadowed: Container[str],
    project_packages: frozenset[str],
    moved_packages: frozenset[str],
) -> str | None:
    if module is None or module in moved_packages:
        return None
    if module in project_packages:
        return f"a second top-level copy of the project's package {module!r}"
    if module in shadowed:
        kind = "standard-library" if module in sys.stdlib_module_names else "installed"
        return f"new top-level module {module!r} shadows the {kind} module {module!r}"
    return None


def moved_top_level(changes: Sequence[FileChange]) -> frozenset[str]:
    """Top-level packages a change moves (`pkg/` to `src/pkg/`): the new copy is the
    project's own, not a second one."""
    moved = set()
    for change in changes:
        gone = change.old_path if change.old_path not in (None, change.path) else None
        if change.new is None:
            gone = change.path
        name = module_name(gone) if gone else None
        if name:
            moved.add(name)
    return frozenset(moved)


def evasion_file_findings(change: FileChange) -> Iterator[ScanFinding]:
    """A file Python reads otherwise than a reviewer does: a symlink (Python imports
    its target, a diff shows a path), or a Python file that declares an encoding
    other than UTF-8 (what review tools and this scan show is not what runs)."""
    new, old = change.new, change.old
    if new is None:
        return
    if change.is_symlink:
        was_same_link = change.old_mode == SYMLINK_MODE and old == new and not change.path_is_new
        if not was_same_link:
            target = new.decode("utf-8", "backslashreplace")
            yield ScanFinding(change.path, None, Construct.SYMLINK, f"a symlink to {target}")
        return
    if PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES:
        yield from shell_system_writes(change)
        return
    encoding = declared_encoding(new)
    if encoding is not None and (old is None or declared_encoding(old) != encoding):
        line = declaration_line(new)
        yield ScanFinding(change.path, line, Construct.SOURCE_ENCODING, f"coding: {encoding}")


SHELL_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".ksh"})
# `>> /etc/hosts`, `tee -a /etc/hosts`, `cp stub /etc/resolv.conf` in a script
SHELL_SYSTEM_WRITE = re.compile(
    r"(?:>>?|\btee(?:\s+-a)?|\b(?:cp|mv|ln(?:\s+-s?f)?|install)\s+\S+)\s+['\"]?"
    r"/(?:etc|usr|bin|sbin|lib|lib64|boot|root|var/lib|var/run|run)/"
)


def shell_system_writes(change: FileChange) -> Iterator[ScanFinding]:
    """Added lines of a script (a test may run it) that write a system file."""
    assert change.new is not None
    is_script = PurePosixPath(change.path).suffix in SHELL_SUFFIXES or change.new.startswith(b"#!")
    if not is_script or is_binary(change.new):
        return
    text = split_lines(change.new.decode("utf-8", "replace"))
    for number in sorted(added_lines(change.old, change.new)):
        line = text[number - 1]
        match = SHELL_SYSTEM_WRITE.search(line)
        if match and not line.lstrip().startswith("#"):
            detail = line.strip()[:60]
            yield ScanFinding(change.path, number, Construct.SYSTEM_FILE_WRITE, detail)


def declared_encoding(data: bytes) -> str | None:
    """The file's source encoding when it is not UTF-8 (or ASCII, which reads every
    file it accepts exactly as UTF-8 does); None otherwise."""
    encoding = source_encoding(data)
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return encoding
    return None if name in ("utf-8", "utf-8-sig", "ascii") else encoding


def declaration_line(data: bytes) -> int:
    """Where PEP 263 puts the declaration: line 1, or line 2 below a `#!` line."""
    first = data.split(b"\n", 1)[0]
    return 1 if b"coding" in first else 2


# -- the scan ------------------------------------------------------------------------------


def code_findings(change: FileChange) -> Iterator[ScanFinding]:
    """Constructs in the lines `change` adds to a Python file."""
    if change.new is None or PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES:
        return
    if change.is_symlink:
        return  # its bytes are a path, reported as a symlink
    if is_binary(change.new):
        return  # reported as a binary file; Python would not import it
    added = added_lines(change.old, change.new)
    if not added:
        return
    new_hits = ast_hits(change.new, change.path)
    if new_hits is None:
        for line, construct, detail in line_hits(change.new, added):
            yield ScanFinding(change.path, line, construct, detail)
        return
    old_hits = ast_hits(change.old, change.path) if change.old is not None else []
    yield from new_constructs(change.path, new_hits, old_hits or [], added)


def new_constructs(
    path: str, new_hits: list[Hit], old_hits: list[Hit], added: frozenset[int]
) -> Iterator[ScanFinding]:
    """Hits on added lines that base did not have: the same construct and code in the
    same scope (function, class or module) is old, wherever its lines moved. A function
    that already inspected the stack gains nothing to review from a second look at it."""
    old = {h.key for h in old_hits}
    for hit in new_hits:
        if hit.key in old:
            continue
        touched = sorted(hit.lines & added)
        if touched or hit.guards & added:
            line = touched[0] if touched else min(hit.lines)
            yield ScanFinding(path, line, hit.construct, hit.detail)


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


def scan_production(
    changes: Sequence[FileChange],
    *,
    shadowed: Container[str],
    project_packages: frozenset[str],
    allow: Mapping[str, frozenset[Construct]] = {},
) -> list[ScanFinding]:
    """Every construct that games tests in what `changes` add (their production files),
    minus those `allow` (path glob -> constructs, from base's manifest) permits."""
    moved = moved_top_level(changes)
    found: list[ScanFinding] = []
    for change in changes:
        found.extend(
            file_findings(
                change, shadowed=shadowed, project_packages=project_packages, moved_packages=moved
            )
        )
        found.extend(code_findings(change))
        found.extend(evasion_file_findings(change))
    return unique(f for f in found if not is_allowed(f, allow))


# -- literals (ORACLE_LITERAL and hard-coded answers: `hardcoded.py`) --------------------------

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
    return None


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
    items = value  # a sequence
    assert isinstance(items, tuple)
    return all(is_trivial(item) for item in items) and len(items) < MIN_STRING


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


def literals_in(node: ast.AST) -> Iterator[tuple[LiteralKey, ast.AST]]:
    """Every non-trivial literal in `node`, containers and their items alike."""
    for child in ast.walk(node):
        key = literal_key(child)
        if key is not None and not is_trivial(key):
            yield key, child


def show_literal(key: LiteralKey) -> str:
    kind, value = key
    if kind == "seq":
        assert isinstance(value, tuple)
        return "(" + ", ".join(show_literal(k) for k in value) + ")"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- oracle parameters computed from production code ----------------------------------


def oracle_parameters_from_production(
    oracle_sources: Mapping[str, bytes], project_packages: frozenset[str]
) -> list[str]:
    """Oracle tests whose `parametrize` values are names imported from the project's
    production packages (`@pytest.mark.parametrize("x", mylib.EXAMPLES)`): the change
    under review controls those values (ORACLE_FROM_PRODUCTION). base's collection
    pins the values per id, so changing them is ORACLE_FAILED as well."""
    found = []
    for path, source in sorted(oracle_sources.items()):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        production = _production_names(tree, project_packages)
        for func in _definitions(tree):
            for decorator in func.decorator_list:
                used = _parametrize_sources(decorator, production)
                if used:
                    found.append(
                        f"{path}::{func.name} is parametrised over {', '.join(sorted(used))} "
                        "from production code; keep the oracle's examples on the test side"
                    )
    return found


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _definitions(tree: ast.Module) -> Iterator[Definition]:
    """Every function and class the module defines, at any depth, in `ast.walk`'s
    order. Only statements hold definitions, so the walk skips the expressions, most
    of a test file's nodes."""
    todo: deque[ast.AST] = deque(tree.body)
    while todo:
        node = todo.popleft()
        if isinstance(node, Definition):
            yield node
        todo.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, STATEMENT_HOLDERS))


def _production_names(tree: ast.Module, packages: frozenset[str]) -> dict[str, str]:
    """Local name -> the production module it came from, for the module's imports."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in packages:
                    names[(alias.asname or alias.name).split(".")[0]] = alias.name
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] in packages
        ):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _parametrize_sources(decorator: ast.expr, production: Mapping[str, str]) -> set[str]:
    if not (isinstance(decorator, ast.Call) and _dotted(decorator.func).endswith("parametrize")):
        return set()
    values = decorator.args[1:2] + [k.value for k in decorator.keywords if k.arg == "argvalues"]
    used = set()
    for value in values:
        for node in ast.walk(value):
            if isinstance(node, ast.Name) and node.id in production:
                used.add(production[node.id])
    return used


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""
