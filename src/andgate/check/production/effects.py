"""Process and environment effects: production code that changes the process or the
machine a test runs in.

A module that exits the process when it is imported (`sys.exit()` at module level,
`os._exit`, `atexit.register` anywhere) ends a test run with whatever code it
likes; a write to `os.environ` plants a made-up credential a test then finds; a
write to an absolute system path (`/etc/hosts` pointing a service at a stub), from
Python or from a shell script a test may run, changes what the test talks to. Each
is named with its file and line, at import or in a function alike: either runs
inside the test process. `sys.exit()` under `if __name__ == "__main__":` or in a
`__main__.py` is a script's exit, not an import's.
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
    `shutil.copy(stub, "/etc/resolv.conf")`, `Path("/etc/hosts").write_text(...)`."""
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


def keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in node.keywords if k.arg == name), None)


# -- files that are not Python ------------------------------------------------------------------


def shell_system_writes(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    """Added lines of a script (a test may run it) that write a system file."""
    new = change.new
    if new is None or change.is_symlink or PurePosixPath(change.path).suffix in PYTHON_SUFFIXES:
        return
    is_script = PurePosixPath(change.path).suffix in SHELL_SUFFIXES or new.startswith(b"#!")
    if not is_script or is_binary(new):
        return
    text = split_lines(new.decode("utf-8", "replace"))
    for number in sorted(added_lines(change.old, new)):
        line = text[number - 1]
        match = SHELL_SYSTEM_WRITE.search(line)
        if match and not line.lstrip().startswith("#"):
            detail = line.strip()[:60]
            yield ScanFinding(change.path, number, Construct.SYSTEM_FILE_WRITE, detail)


# -- a .py that does not parse ------------------------------------------------------------------

LINE_PATTERNS: tuple[tuple[Construct, re.Pattern[str]], ...] = (
    (Construct.EXIT_AT_IMPORT, re.compile(r"os\._exit\s*\(|os\.abort\s*\(|atexit\.register")),
    (Construct.EXIT_AT_IMPORT, re.compile(r"^(?:sys\.exit|exit|quit)\s*\(|^raise\s+SystemExit")),
)


FAMILY = Family(
    name="process and environment effects",
    constructs=frozenset(
        {Construct.EXIT_AT_IMPORT, Construct.ENVIRONMENT_WRITE, Construct.SYSTEM_FILE_WRITE}
    ),
    file_rules=(shell_system_writes,),
    statement_rules=((ast.ImportFrom, exit_import), (ast.Raise, raise_system_exit)),
    node_rules=(((ast.Attribute, ast.Name), exit_reference), (ast.Call, exit_call)),
    plain_rules=(
        ((ast.Assign, ast.AugAssign, ast.AnnAssign), environment_assignment),
        (ast.Call, writing_call),
    ),
    plain_words="environ|putenv|open|write_|touch|symlink_to|hardlink_to|shutil|rename",
    line_rules=(line_patterns(LINE_PATTERNS),),
)
