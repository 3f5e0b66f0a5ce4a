"""Process and environment effects: production code that changes the process or the
machine a test runs in.

A module that exits the process when it is imported (`sys.exit()` at module level,
`os._exit`, `atexit.register` anywhere) ends a test run with whatever code it
likes; a write to `os.environ` plants a made-up credential a test then finds; a
write to an absolute system path (`/etc/hosts` pointing a service at a stub), from
Python or from a shell script a test may run, changes what the test talks to; a
write under the test side or into a bytecode cache (`__pycache__`, a `.pyc`, a path
built from `__file__` down to `tests/`, Python files found by globbing), or the tools
that forge one (`importlib.util.MAGIC_NUMBER`, `cache_from_source`, pytest's
`PYC_TAIL`, `py_compile`, `git update-index --skip-worktree`), changes what the next
test imports. Each is named with its file and line, at import or in a function
alike: either runs inside the test process. `sys.exit()` under
`if __name__ == "__main__":` or in a `__main__.py` is a script's exit, not an
import's; a cache in the user's home or a temporary folder is no test-side write.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from andgate.check.production.common import (
    PYTHON_SUFFIXES,
    FileChange,
    Hit,
    Names,
    ScanContext,
    ScanFinding,
    Scope,
    added_lines,
    hit,
    is_binary,
    node_lines,
    plain_hit,
    short,
    split_lines,
)
from andgate.check.production.rules import Family, line_patterns
from andgate.records import Construct

EXIT_ANYWHERE = frozenset({"os._exit", "os.abort", "atexit.register"})
EXIT_AT_MODULE_LEVEL = frozenset(
    {"sys.exit", "exit", "quit", "os.kill", "signal.raise_signal", "os.killpg"}
)
ENVIRON_MAPS = frozenset({"os.environ", "os.environb"})
ENVIRON_WRITERS = frozenset({"setdefault", "update", "__setitem__"})
PUTENV = frozenset({"os.putenv"})
OPENERS = frozenset({"open", "io.open", "codecs.open", "builtins.open"})
PATH_WRITERS = frozenset({"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to"})
COPIERS = frozenset({"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move", "os.rename"})
WRITE_MODES = frozenset("wax+")
OPEN_MODE = re.compile(r"[rwxabtU+]{1,5}")  # not a path in the mode's place (`zf.open(name)`)
WRITE_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_APPEND", "O_CREAT", "O_TRUNC"})
# Absolute paths every program may write: the null device and the standard streams.
HARMLESS_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "nul"})
WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]")
SHELL_SUFFIXES = frozenset({".sh", ".bash", ".zsh", ".ksh"})
# `>> /etc/hosts`, `tee -a /etc/hosts`, `cp stub /etc/resolv.conf` in a script
SHELL_SYSTEM_WRITE = re.compile(
    r"(?:>>?|\btee(?:\s+-a)?|\b(?:cp|mv|ln(?:\s+-s?f)?|install)\s+\S+)\s+['\"]?"
    r"/(?:etc|usr|bin|sbin|lib|lib64|boot|root|var/lib|var/run|run)/"
)


# -- the scope walk: exits at import ------------------------------------------------------


def exit_import(names: Names, stmt: ast.ImportFrom, scope: Scope) -> Iterator[Hit]:
    """`from os import _exit`: the name exits wherever it is called."""
    if stmt.level or not stmt.module or stmt.module == "unittest":
        return
    if {f"{stmt.module}.{a.name}" for a in stmt.names} & EXIT_ANYWHERE:
        yield hit(Construct.EXIT_AT_IMPORT, short(stmt), stmt, scope)


def raise_system_exit(names: Names, stmt: ast.Raise, scope: Scope) -> Iterator[Hit]:
    if not scope.at_import or scope.in_main:
        return
    exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
    if names.dotted(exc) in ("SystemExit", "KeyboardInterrupt"):
        yield hit(Construct.EXIT_AT_IMPORT, short(stmt), stmt, scope)


def exit_reference(names: Names, node: ast.Attribute | ast.Name, scope: Scope) -> Iterator[Hit]:
    name = names.dotted(node)
    if name in EXIT_ANYWHERE:
        yield hit(Construct.EXIT_AT_IMPORT, name, node, scope)


def exit_call(names: Names, node: ast.Call, scope: Scope) -> Iterator[Hit]:
    if scope.at_import and not scope.in_main and names.dotted(node.func) in EXIT_AT_MODULE_LEVEL:
        yield hit(Construct.EXIT_AT_IMPORT, short(node), node, scope)


# -- the plain walk: writes to the environment and to system files ------------------------------


def environment_assignment(
    names: Names, stmt: ast.Assign | ast.AugAssign | ast.AnnAssign, qualname: str
) -> Iterator[Hit]:
    """`os.environ["TOKEN"] = ...`, `os.environ |= {...}`."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    for target in targets:
        for part in ast.walk(target):
            if is_environ_item(names, part) or (
                isinstance(stmt, ast.AugAssign) and names.dotted(part) in ENVIRON_MAPS
            ):
                yield plain_hit(
                    Construct.ENVIRONMENT_WRITE, short(stmt), node_lines(stmt), qualname
                )


def is_environ_item(names: Names, target: ast.AST) -> bool:
    return isinstance(target, ast.Subscript) and names.dotted(target.value) in ENVIRON_MAPS


def writing_call(names: Names, node: ast.Call, qualname: str) -> Iterator[Hit]:
    """`os.putenv(...)`, `os.environ.update(...)`; `open("/etc/hosts", "a")`,
    `shutil.copy(stub, "/etc/resolv.conf")`, `Path("/etc/hosts").write_text(...)`;
    `ORACLE.write_text(...)`, `(cache / name).write_bytes(...)` (`test_side_write`)."""
    func = node.func
    name = names.dotted(func) or ""
    if name in PUTENV or (
        isinstance(func, ast.Attribute)
        and func.attr in ENVIRON_WRITERS
        and names.dotted(func.value) in ENVIRON_MAPS
    ):
        yield plain_hit(Construct.ENVIRONMENT_WRITE, short(node), node_lines(node), qualname)
    elif writes_system_file(names, node, name):
        yield plain_hit(Construct.SYSTEM_FILE_WRITE, short(node), node_lines(node), qualname)
    else:
        why = test_side_write(names, node, name, qualname)
        if why is not None:
            detail = f"{short(node)}: {why}"
            yield plain_hit(Construct.TEST_SIDE_WRITE, detail, node_lines(node), qualname)


def writes_system_file(names: Names, node: ast.Call, name: str) -> bool:
    func, args = node.func, node.args
    if name in OPENERS or name == "os.open":
        mode = args[1] if len(args) > 1 else keyword(node, "flags" if "os." in name else "mode")
        return bool(args) and system_path(names, args[0]) and opens_for_writing(mode, name)
    if name in COPIERS:
        return len(args) > 1 and system_path(names, args[1])
    if isinstance(func, ast.Attribute) and system_path(names, func.value):
        if func.attr in PATH_WRITERS:
            return True
        if func.attr == "open":
            return opens_for_writing(args[0] if args else keyword(node, "mode"), "open")
    return False


def opens_for_writing(mode: ast.expr | None, opener: str) -> bool:
    if opener == "os.open":
        flags = ast.walk(mode) if mode is not None else ()
        used = {getattr(n, "attr", None) or getattr(n, "id", "") for n in flags}
        return bool(used & WRITE_FLAGS)
    return (
        isinstance(mode, ast.Constant)
        and isinstance(mode.value, str)
        and bool(OPEN_MODE.fullmatch(mode.value))
        and bool(WRITE_MODES & set(mode.value))
    )


def system_path(names: Names, node: ast.expr) -> bool:
    """An absolute path written as a literal: `"/etc/hosts"`, `Path("/etc") / "hosts"`,
    `os.path.join("/etc", "hosts")`, `Path("/etc/hosts")`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
        absolute = text.startswith("/") or bool(WINDOWS_ABSOLUTE.match(text))
        return absolute and text.lower() not in HARMLESS_FILES
    if isinstance(node, ast.JoinedStr) and node.values:
        return system_path(names, node.values[0])  # f"/etc/{name}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return system_path(names, node.left)
    if isinstance(node, ast.Call) and node.args:
        callee = names.dotted(node.func) or ""
        if callee in ("pathlib.Path", "pathlib.PurePath", "os.path.join"):
            return system_path(names, node.args[0])
    return False


# -- writes to the test side and to bytecode caches ----------------------------------------------

# A path component of the test side (`trust.paths.is_test_file`), globs included.
TEST_PART = re.compile(r"^(?:tests?|testing|conftest\.py|test_[^/\\]*\.py|[^/\\]*_test\.py)$")
CACHE_TEXT = re.compile(r"__pycache__|\.py[co]\b|\.pytest_cache")
SOURCES_PATTERN = re.compile(r"\*\.py$")
GLOBBERS = frozenset({"glob.glob", "glob.iglob", "os.walk", "os.fwalk", "os.scandir", "os.listdir"})
GLOB_METHODS = frozenset({"glob", "rglob", "iterdir", "walk"})
# Where a program keeps its own caches: the user's home and temporary folders.
PRIVATE_PLACES = (
    "tempfile.",
    "pathlib.Path.home",
    "os.path.expanduser",
    "pathlib.Path.expanduser",
    "platformdirs.",
    "appdirs.",
    "xdg.",
    "xdg_base_dirs.",
)
PRIVATE_VARIABLES = frozenset(
    {"HOME", "USERPROFILE", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"}
    | {"LOCALAPPDATA", "APPDATA", "TMPDIR", "TEMP", "TMP"}
)
TEST_SIDE_PATH_WRITERS = PATH_WRITERS | {"mkdir"}
PATH_MOVERS = frozenset({"rename", "replace"})  # a str has `replace`: only on a Path
PATH_METHODS = frozenset(
    {"with_name", "with_suffix", "with_stem", "joinpath", "resolve", "absolute", "expanduser"}
    | {"glob", "rglob", "iterdir"}
)
# The call -> which of its arguments name a file it writes (a move takes two).
TEST_SIDE_WRITERS = {
    "shutil.copy": (1,),
    "shutil.copy2": (1,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
    "os.rename": (0, 1),
    "os.renames": (0, 1),
    "os.replace": (0, 1),
    "os.link": (1,),
    "os.symlink": (1,),
    "os.utime": (0,),
    "os.truncate": (0,),
    "os.mkdir": (0,),
    "os.makedirs": (0,),
    "marshal.dump": (1,),
}
BYTECODE_COMPILERS = frozenset(
    {"py_compile.compile", "compileall.compile_dir", "compileall.compile_file"}
    | {"compileall.compile_path"}
)
CACHE_INTERNALS = frozenset(
    {
        "importlib.util.cache_from_source",
        "importlib.util.MAGIC_NUMBER",
        "importlib.util.source_hash",
        "importlib._bootstrap_external.cache_from_source",
        "importlib._bootstrap_external.MAGIC_NUMBER",
        "importlib._bootstrap_external._code_to_timestamp_pyc",
        "importlib._bootstrap_external._code_to_hash_pyc",
    }
)
# pytest's assertion rewriting names its caches with these (`_pytest.assertion.rewrite`)
PYTEST_CACHE_NAMES = frozenset({"PYC_TAIL", "PYC_EXT", "PYTEST_TAG"})
HIDDEN_FROM_GIT = re.compile(r"--(?:no-)?(?:skip-worktree|assume-unchanged)\b")


def test_side_write(names: Names, node: ast.Call, name: str, qualname: str) -> str | None:
    """Why the call writes the test side or a bytecode cache, or None: `open(path, "w")`,
    `path.write_bytes(...)`, a copy, move, `os.utime` or `marshal.dump` whose path is
    built from a literal naming a cache or a test-side folder or file, or found by
    globbing for Python files; `py_compile.compile` and `compileall` always."""
    if name in BYTECODE_COMPILERS:
        return f"{name} writes bytecode caches"
    func, args = node.func, node.args
    targets: list[ast.expr] = []
    if name in OPENERS or name == "os.open":
        mode = args[1] if len(args) > 1 else keyword(node, "flags" if "os." in name else "mode")
        if args and opens_for_writing(mode, name):
            targets = [args[0]]
    elif name in TEST_SIDE_WRITERS:
        targets = [args[i] for i in TEST_SIDE_WRITERS[name] if i < len(args)]
    elif isinstance(func, ast.Attribute) and not name.startswith(("os.", "shutil.")):
        if func.attr in PATH_MOVERS and is_path_object(names, func.value, qualname):
            targets = [func.value, *args[:1]]
        elif func.attr in TEST_SIDE_PATH_WRITERS or (
            func.attr == "open" and opens_for_writing(first_or(node, "mode"), "open")
        ):
            targets = [func.value]
    for target in targets:
        why = test_side_place(names, target, qualname)
        if why is not None:
            return why
    return None


def is_path_object(names: Names, node: ast.expr, qualname: str, depth: int = 3) -> bool:
    """Whether an expression is a `pathlib` path (`Path(__file__).parent / "x"`, a name
    bound to one, what its `glob` yields), not text read from one (`str.replace`)."""
    if isinstance(node, ast.Name):
        values = names.bound(node.id, qualname) if depth else []
        return any(is_path_object(names, v, qualname, depth - 1) for v in values)  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return is_path_object(names, node.left, qualname, depth)
    if isinstance(node, ast.Subscript):  # `path.parents[1]`
        return is_path_object(names, node.value, qualname, depth)
    if isinstance(node, ast.Attribute) and node.attr in ("parent", "parents"):
        return is_path_object(names, node.value, qualname, depth)
    if isinstance(node, ast.Call):
        func = node.func
        if (names.dotted(func) or "").startswith("pathlib."):
            return True
        if isinstance(func, ast.Attribute) and func.attr in PATH_METHODS:
            return is_path_object(names, func.value, qualname, depth)
    return False


def test_side_place(names: Names, target: ast.expr, qualname: str) -> str | None:
    """What a path expression reaches that a test run imports from: read through the
    names it uses (`folder = ORACLE.parent / "__pycache__"`); None for a path under the
    user's home or a temporary folder, where programs keep their own caches."""
    strings: list[str] = []
    called: set[str] = set()
    for part in names.reach(target, qualname):
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            strings.append(part.value)
        elif isinstance(part, ast.Attribute | ast.Name):
            called.add(names.dotted(part) or "")
            if isinstance(part, ast.Attribute):
                called.add(f".{part.attr}")
    if any(c.startswith(PRIVATE_PLACES) or c == ".expanduser" for c in called) or any(
        text.startswith("~") or text in PRIVATE_VARIABLES for text in strings
    ):
        return None
    if any(CACHE_TEXT.search(text) for text in strings) or called & CACHE_INTERNALS:
        return "into a bytecode cache"
    folder = next(
        (p for text in strings for p in re.split(r"[/\\]", text) if TEST_PART.match(p)), None
    )
    if folder is not None:
        return f"under the test side ({folder})"
    globbed = called & GLOBBERS or {
        c for c in called if c.lstrip(".") in GLOB_METHODS and c[0] == "."
    }
    if globbed and any(SOURCES_PATTERN.search(text) for text in strings):
        return "into Python files found by globbing"
    return None


def cache_reference(names: Names, node: ast.Attribute | ast.Name, scope: Scope) -> Iterator[Hit]:
    """What forges a bytecode cache: `importlib.util.MAGIC_NUMBER`, `cache_from_source`,
    `source_hash`, pytest's `PYC_TAIL`."""
    name = names.dotted(node)
    if name in CACHE_INTERNALS:
        yield hit(Construct.TEST_SIDE_WRITE, f"{name}: forges bytecode caches", node, scope)
    elif (node.attr if isinstance(node, ast.Attribute) else node.id) in PYTEST_CACHE_NAMES:
        detail = f"{short(node)}: pytest's rewritten-assert cache names"
        yield hit(Construct.TEST_SIDE_WRITE, detail, node, scope)


def cache_text(names: Names, node: ast.Constant, scope: Scope) -> Iterator[Hit]:
    """`"PYC_TAIL"` (read with `getattr`), `git update-index --skip-worktree`."""
    if not isinstance(node.value, str):
        return
    if node.value in PYTEST_CACHE_NAMES:
        detail = f"{node.value!r}: pytest's rewritten-assert cache names"
        yield hit(Construct.TEST_SIDE_WRITE, detail, node, scope)
    elif HIDDEN_FROM_GIT.search(node.value):
        detail = f"{node.value!r}: hides a file's changes from git"
        yield hit(Construct.TEST_SIDE_WRITE, detail, node, scope)


def first_or(node: ast.Call, name: str) -> ast.expr | None:
    """The call's first argument, or its keyword `name`."""
    return node.args[0] if node.args else keyword(node, name)


def keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


# -- files that are not Python ------------------------------------------------------------------


def shell_system_writes(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    """Added lines of a script (a test may run it) that write a system file, or hide
    a file's changes from git (`git update-index --skip-worktree`)."""
    new = change.new
    if new is None or change.is_symlink or PurePosixPath(change.path).suffix in PYTHON_SUFFIXES:
        return
    is_script = PurePosixPath(change.path).suffix in SHELL_SUFFIXES or new.startswith(b"#!")
    if not is_script or is_binary(new):
        return
    text = split_lines(new.decode("utf-8", "replace"))
    for number in sorted(added_lines(change.old, new)):
        line = text[number - 1]
        if line.lstrip().startswith("#"):
            continue
        detail = line.strip()[:60]
        if SHELL_SYSTEM_WRITE.search(line):
            yield ScanFinding(change.path, number, Construct.SYSTEM_FILE_WRITE, detail)
        elif HIDDEN_FROM_GIT.search(line):
            yield ScanFinding(change.path, number, Construct.TEST_SIDE_WRITE, detail)


# -- a .py that does not parse ------------------------------------------------------------------

LINE_PATTERNS: tuple[tuple[Construct, re.Pattern[str]], ...] = (
    (Construct.EXIT_AT_IMPORT, re.compile(r"os\._exit\s*\(|os\.abort\s*\(|atexit\.register")),
    (Construct.EXIT_AT_IMPORT, re.compile(r"^(?:sys\.exit|exit|quit)\s*\(|^raise\s+SystemExit")),
    (
        Construct.TEST_SIDE_WRITE,
        re.compile(
            r"\b(?:cache_from_source|MAGIC_NUMBER|source_hash|PYC_TAIL|PYTEST_TAG)\b|"
            r"\b(?:py_compile|compileall)\.compile|--skip-worktree|--assume-unchanged"
        ),
    ),
)


FAMILY = Family(
    name="process and environment effects",
    constructs=frozenset(
        {
            Construct.EXIT_AT_IMPORT,
            Construct.ENVIRONMENT_WRITE,
            Construct.SYSTEM_FILE_WRITE,
            Construct.TEST_SIDE_WRITE,
        }
    ),
    file_rules=(shell_system_writes,),
    statement_rules=((ast.ImportFrom, exit_import), (ast.Raise, raise_system_exit)),
    node_rules=(
        ((ast.Attribute, ast.Name), exit_reference),
        (ast.Call, exit_call),
        ((ast.Attribute, ast.Name), cache_reference),
        (ast.Constant, cache_text),
    ),
    plain_rules=(
        ((ast.Assign, ast.AugAssign, ast.AnnAssign), environment_assignment),
        (ast.Call, writing_call),
    ),
    plain_words=(
        "environ|putenv|open|write_|touch|symlink_to|hardlink_to|shutil|rename|replace|utime"
        "|mkdir|makedirs|marshal|compile|link|truncate"
    ),
    line_rules=(line_patterns(LINE_PATTERNS),),
)
