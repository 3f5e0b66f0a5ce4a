"""Which oracle files a known-bad replay runs first: those most likely to kill it.

A cold replay (no killer cache) runs the oracle class with `-x` until the first
failing item; in collection order, a killer in the last file costs a run of
almost the whole class. This module reads the fixture and the replay's worktree
(after `git apply`) and names the oracle files to run first: `replay.py` runs
them alone, in a process that collects only them, and the rest in a second
process only if none of them failed (the plugin also puts `first_files` of the
run spec first, for a single-process run). An oracle file goes first when its
source, read with `ast` (never imported):

- imports a module the fixture patches (`import pkg.mod`, `from pkg import mod`,
  `from pkg.mod import x`; a patched `pkg/__init__.py` is module `pkg`, so
  `from pkg import x` and `import pkg.sub` count), or
- imports from the patched module's top-level package and names something whose
  definition the fixture's hunks touch (a function, class, method or
  module-level name): `from pkg import chunk` when the fixture edits `chunk` in
  `pkg/text.py` and `pkg/__init__.py` re-exports it; `pkg.chunk(...)` after
  `import pkg`.

Everything here is an ordering hint: every item still runs when none of the
first fails, so a wrong guess makes a replay slower, never greener. It never raises for what it
reads: a test file that does not parse, cannot be read or is not reached within
the time budget keeps its place. A fixture that patches no Python module
reorders nothing. Standard library only, nothing is imported or executed.
"""

from __future__ import annotations

import ast
import hashlib
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

# Bounds: the scan must cost far less than the replay it speeds up.
BUDGET_SECONDS = 2.0
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_CACHED_SUMMARIES = 20_000

DIFF_GIT = re.compile(r"^diff --git (?P<rest>.*)$")
HUNK = re.compile(r"^@@ -\d+(?:,(?P<old_count>\d+))? \+(?P<new>\d+)(?:,(?P<new_count>\d+))? @@")
# Header lines that name a path unambiguously (before a file's first hunk).
PATH_LINES = (
    ("--- ", False),
    ("+++ ", True),
    ("rename from ", False),
    ("rename to ", True),
    ("copy to ", True),
)


@dataclass(frozen=True)
class PatchedFile:
    """One file of a patch: its paths (old and new), its path afterwards (None:
    deleted) and where its lines changed, as new-side line ranges (an added line;
    the two lines either side of a removed one)."""

    paths: tuple[str, ...]
    new_path: str | None
    ranges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Summary:
    """What a test file's source says about its imports, cheaply comparable."""

    modules: frozenset[str]  # absolute imports, each with its parent packages
    names: frozenset[str]  # identifiers, attribute names and imported names


def patched_files(patch: bytes) -> tuple[PatchedFile, ...]:
    """Each file a patch touches, from its headers (`diff --git a/P b/P`, then
    `--- a/`, `+++ b/`, `rename from/to`; a plain unified diff's `---`/`+++`
    pair), never from hunk bodies: hunks are read by their line counts."""
    out: list[PatchedFile] = []
    paths: list[str] = []
    new_path: str | None = None
    ranges: list[tuple[int, int]] = []
    state = "outside"  # "header" (of a file), "hunk" (inside one), "outside"
    old_left = new_left = line_no = 0

    def flush() -> None:
        if paths:
            out.append(PatchedFile(tuple(dict.fromkeys(paths)), new_path, tuple(ranges)))

    for raw in patch.splitlines():
        line = raw.decode("utf-8", "surrogateescape").rstrip("\r")
        if state == "hunk" and not line.startswith(("+", "-", " ", "\\")) and line:
            state = "outside"  # a truncated hunk: this line is no part of it
        if state == "hunk":
            # Where, on the new side, lines were added or removed.
            if line.startswith("+"):
                ranges.append((line_no, line_no))
                line_no, new_left = line_no + 1, new_left - 1
            elif line.startswith("-"):
                ranges.append((max(line_no - 1, 1), line_no))
                old_left -= 1
            elif line.startswith(" ") or not line:
                line_no, old_left, new_left = line_no + 1, old_left - 1, new_left - 1
            if old_left <= 0 and new_left <= 0:
                state = "outside"  # until the next hunk of this file, or the next file
            continue
        header = DIFF_GIT.match(line)
        if header or (line.startswith("--- ") and state == "outside"):
            flush()
            paths, ranges, new_path, state = [], [], None, "header"
            if header:
                new_path = _header_path(header["rest"])
                paths += [new_path] if new_path is not None else []
                continue
        hunk = HUNK.match(line)
        if hunk and paths:
            state, line_no = "hunk", int(hunk["new"])
            old_left = 1 if hunk["old_count"] is None else int(hunk["old_count"])
            new_left = 1 if hunk["new_count"] is None else int(hunk["new_count"])
            if old_left <= 0 and new_left <= 0:
                state = "outside"
            continue
        if state != "header":
            continue
        if line.startswith("deleted file mode"):
            new_path = None
        for prefix, is_new in PATH_LINES:
            if line.startswith(prefix):
                path = _unquote(line[len(prefix) :].rstrip("\t"))
                if prefix in ("--- ", "+++ "):
                    if not path.startswith(("a/", "b/")):  # /dev/null
                        new_path = None if is_new else new_path
                        break
                    path = path[2:]
                paths.append(path)
                new_path = path if is_new else new_path
                break
    flush()
    return tuple(out)


def _header_path(rest: str) -> str | None:
    """The path of `diff --git a/P b/P`, when it is not ambiguous (a rename of a
    path with spaces is, and gets its paths from the lines that follow)."""
    if rest.startswith('"'):
        parts = re.findall(r'"(?:[^"\\]|\\.)*"|\S+', rest)
        if len(parts) == 2 and parts[1].strip('"').startswith("b/"):
            return _unquote(parts[1])[2:]
        return None
    half = (len(rest) - 5) // 2
    if (len(rest) - 5) % 2 == 0 and rest == f"a/{rest[2 : 2 + half]} b/{rest[2 : 2 + half]}":
        return rest[2 : 2 + half]
    return None


def _unquote(path: str) -> str:
    """git's C-style quoting of unusual paths ("a/t\\303\\251st.py")."""
    if not (len(path) >= 2 and path.startswith('"') and path.endswith('"')):
        return path
    raw = path[1:-1].encode("latin-1", "backslashreplace")
    try:
        text = raw.decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return path[1:-1]
    return text


def module_names(path: str, root: Path) -> tuple[str, ...]:
    """The import names a repository-relative `.py` path can have: its package
    chain in `root` (folders with `__init__.py`) gives the shortest, and every
    longer one is kept too (namespace packages, a flat layout without a package
    marker). `src/pkg/mod.py` -> `pkg.mod`, `src.pkg.mod`; `pkg/__init__.py` -> `pkg`."""
    if not path.endswith(".py"):
        return ()
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts:
        return ()
    top = len(parts) - 1
    while top > 0 and (root.joinpath(*parts[:top]) / "__init__.py").is_file():
        top -= 1
    names = []
    for start in range(top, -1, -1):
        chain = parts[start:]
        if all(p.isidentifier() for p in chain):
            names.append(".".join(chain))
    return tuple(names)


def changed_names(source: bytes, ranges: Sequence[tuple[int, int]]) -> frozenset[str]:
    """The names defined where the hunks touch the patched file: functions,
    classes and methods whose lines (decorators included) overlap a hunk,
    module- or class-level assignments and imports (re-exports). Dunder names
    say nothing and are left out."""
    if not ranges:
        return frozenset()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    found: set[str] = set()

    def touched(node: ast.stmt) -> bool:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        last = node.end_lineno or node.lineno
        return any(lo <= last and first <= hi for lo, hi in ranges)

    def visit(body: Iterable[ast.stmt]) -> None:
        for node in body:
            if not touched(node):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.add(node.name)
            elif isinstance(node, ast.ClassDef):
                found.add(node.name)
                visit(node.body)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    found.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):  # a re-export
                found.update((a.asname or a.name).split(".")[0] for a in node.names)
            else:  # if/try/with blocks at module or class level
                visit(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))

    visit(tree.body)
    return frozenset(n for n in found if not (n.startswith("__") and n.endswith("__")))


_SUMMARIES: dict[bytes, Summary | None] = {}
_SUMMARIES_LOCK = threading.Lock()


def summarize(source: bytes) -> Summary | None:
    """A test file's absolute imports and names, or None when it does not parse.
    Remembered by content: parallel replays share one oracle side."""
    key = hashlib.blake2b(source, digest_size=16).digest()
    with _SUMMARIES_LOCK:
        if key in _SUMMARIES:
            return _SUMMARIES[key]
    summary = _summarize(source)
    with _SUMMARIES_LOCK:
        if len(_SUMMARIES) >= MAX_CACHED_SUMMARIES:
            _SUMMARIES.clear()
        _SUMMARIES[key] = summary
    return summary


def _summarize(source: bytes) -> Summary | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.update(_with_parents(alias.name))
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.name for alias in node.names)
            names.update(alias.asname for alias in node.names if alias.asname)
            if node.level or not node.module:
                continue  # relative imports stay inside the test package
            modules.update(_with_parents(node.module))
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return Summary(frozenset(modules), frozenset(names))


def _with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


@dataclass(frozen=True)
class Target:
    """What the fixture patched, as a test file would refer to it."""

    modules: frozenset[str]
    packages: frozenset[str]  # top-level packages of the patched modules
    names: frozenset[str]
    files: frozenset[str]  # the patched paths themselves

    @property
    def tokens(self) -> tuple[bytes, ...]:
        """Text a test file must contain to refer to the target at all."""
        words = {m.rsplit(".", 1)[-1] for m in self.modules} | set(self.names)
        return tuple(sorted(w.encode() for w in words))

    def wanted(self, summary: Summary) -> bool:
        if summary.modules & self.modules:
            return True
        packages = {m.split(".", 1)[0] for m in summary.modules}
        return bool(packages & self.packages and summary.names & self.names)


def target_of(patch: bytes, root: Path) -> Target:
    modules: set[str] = set()
    names: set[str] = set()
    files: set[str] = set()
    for patched in patched_files(patch):
        if not all(_inside(p) for p in patched.paths):
            continue  # git apply refuses these; nothing outside the worktree is read
        files.update(patched.paths)
        for path in patched.paths:
            modules.update(module_names(path, root))
        if patched.new_path and patched.new_path.endswith(".py"):
            source = _read(root / patched.new_path)
            if source is not None:
                names.update(changed_names(source, patched.ranges))
    packages = frozenset(m.split(".", 1)[0] for m in modules)
    return Target(frozenset(modules), packages, frozenset(names), frozenset(files))


def first_files(
    patch: bytes, root: Path, oracle_files: Sequence[str], budget: float = BUDGET_SECONDS
) -> tuple[str, ...]:
    """The oracle files (repository-relative, as in `oracle_files`) whose items a
    replay of `patch` in the worktree `root` should run first, in the given order;
    () when nothing stands out (no Python module patched, or every file would go
    first). Bounded by `budget` seconds: files not read by then keep their place."""
    target = target_of(patch, root)
    if not target.modules:
        return ()
    deadline = time.monotonic() + budget
    tokens = target.tokens
    first = []
    for path in oracle_files:
        if time.monotonic() > deadline:
            break
        if path in target.files:
            first.append(path)
            continue
        source = _read(root / path)
        if source is None or not any(t in source for t in tokens):
            continue
        summary = summarize(source)
        if summary is not None and target.wanted(summary):
            first.append(path)
    return () if len(first) == len(oracle_files) else tuple(first)


def _inside(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and ".git" not in parts


def _read(path: Path) -> bytes | None:
    """A regular file's bytes (not through a symlink), or None."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_bytes()
    except OSError:
        return None
