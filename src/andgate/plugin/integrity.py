"""What a trusted pytest process executed for its worktree's Python files (contract
section 4, step 4).

PYTEST_DONT_REWRITE. Runs inside the gate's trusted pytest processes (oracle,
property, known-bad replays, every run of base) and their xdist workers, so it
imports only pytest and the standard library.

Production code runs in the same process and worktree as base's tests, so between
two imports it can rewrite a test file, plant the bytecode Python or pytest would
load for it, or put a module of its own where a test-side name resolves. What is on
disk when the run starts proves nothing; what the process executed does. So, once
`install` ran (before any repository code):

- every module whose file lies in the worktree is compiled from bytes this process
  read once, and their git blob id is recorded with the module's name:
  `SourceFileLoader.get_code` and pytest's `AssertionRewritingHook.exec_module`
  (the assertion rewriting included) are replaced for those files. No bytecode cache
  is read or written for them, here or anywhere: nothing production code or an
  earlier run left can be executed;
- a module loaded from a worktree file any other way (bytecode without its source, a
  compiled extension, a loader that is neither) is recorded as not verified;
- the bytecode caches this Python or this pytest would load for a test-side file
  (`__pycache__` beside it, or under `sys.pycache_prefix`) are read when the module
  is imported and again when the session ends. Trusted runs write none, so one that
  holds code other than what the file's bytes compile to was written by code that
  ran meanwhile.

The gate judges the records against the tree the run checked out
(`andgate.process.integrity.judge`): which files are the test side, which names
base's test side provides and which blob each file must have is its business.
In-process code that tampers with the interpreter, with this module or with the
import system's own state stays out of reach (docs/threat-model.md).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import threading
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from _pytest.assertion import rewrite

_GUARD: Guard | None = None
_ORIGINALS: dict[str, Callable[..., Any]] = {}
_LOCK = threading.Lock()

# pytest's rewritten-assert cache: `<stem>.<tag>-pytest-<version>.pyc` (PYC_TAIL).
PYTEST_TAIL = getattr(rewrite, "PYC_TAIL", None)
# Where `Guard.compiled` keeps the code each way of compiling gave: plain, rewritten.
SLOTS = {"compiled": 1, "rewritten": 2}
BEFORE = "loaded before the check began"


def blob_id(data: bytes, algorithm: str) -> str:
    """The id git gives a blob holding `data` (sha1, or sha256 repositories')."""
    digest = hashlib.new(algorithm)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


class Guard:
    """One process's records: what it compiled from the worktree and how."""

    def __init__(self, root: str, algorithm: str, test_files: Iterable[str]) -> None:
        self.roots = tuple(dict.fromkeys((os.path.abspath(root), os.path.realpath(root))))
        self.algorithm = algorithm
        self.test_files = frozenset(test_files)  # worktree-relative, posix
        self.config: Any = None  # pytest's, once configured: rewriting on demand
        self.loads: list[dict[str, str]] = []
        self.unverified: list[dict[str, str]] = []
        self.bytecode: dict[str, dict[str, str]] = {}
        # id(module) -> (module, path): which module objects this guard compiled
        self.verified: dict[int, tuple[types.ModuleType, str]] = {}
        self.paths: set[str] = set()  # every file it compiled
        # path -> [bytes, plain code, rewritten code, module]: what its caches must hold
        self.compiled: dict[str, list[Any]] = {}
        self.seen_unverified: set[tuple[str, str]] = set()

    def relative(self, path: object) -> str | None:
        """`path` relative to the worktree (posix), or None outside it."""
        try:
            text = os.fspath(path)  # type: ignore[call-overload]
        except TypeError:
            return None
        if not isinstance(text, str):
            return None
        text = os.path.normpath(text if os.path.isabs(text) else os.path.abspath(text))
        for root in self.roots:
            if text.startswith(root + os.sep):
                return text[len(root) + 1 :].replace(os.sep, "/")
        return None

    def compiled_from(
        self,
        module_name: str,
        rel: str,
        data: bytes,
        module: types.ModuleType | None,
        how: str,
        code: types.CodeType | None,
        loader: dict[str, str] | None = None,
    ) -> None:
        """Record a module compiled from `data`, the bytes of worktree file `rel`."""
        load = {"module": module_name, "path": rel, "blob": blob_id(data, self.algorithm)}
        if b"\r\n" in data:  # checked out with CRLF line ends from an LF blob
            load["blob_lf"] = blob_id(data.replace(b"\r\n", b"\n"), self.algorithm)
        load["how"] = how
        real = self.relative(os.path.realpath(os.path.join(self.roots[0], rel)))
        if real is not None and real != rel:  # through a symlinked folder or file
            load["real"] = real
        load.update(loader or {})
        with _LOCK:
            self.loads.append(load)
            self.paths.add(rel)
            if module is not None:
                self.verified[id(module)] = (module, rel)
            if rel in self.test_files:
                kept = self.compiled.setdefault(rel, [data, None, None, module_name])
                if kept[0] != data:
                    kept[:] = [data, None, None, module_name]
                kept[3] = module_name
                if how in SLOTS:
                    kept[SLOTS[how]] = code
        if rel in self.test_files:
            self.check_caches(rel)

    def adopt_loaded(self) -> None:
        """The worktree's modules loaded from source before the guard: an xdist
        worker imports its `-p` plugins and entry points before any hook of andgate's
        runs. Each is recorded with the bytes its file holds now and its caches are
        looked at like the others' (none was there when the run started); one loaded
        any other way is left for `report` to name."""
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            rel = self.relative(file) if isinstance(file, str) else None
            if rel is None or not _from_source(module):
                continue
            try:
                with open(os.path.join(self.roots[0], rel), "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            self.compiled_from(name, rel, data, module, BEFORE, None)

    def loaded_unverified(self, module_name: str, rel: str, why: str) -> None:
        with _LOCK:
            if (module_name, rel) in self.seen_unverified:
                return
            self.seen_unverified.add((module_name, rel))
            self.unverified.append({"module": module_name, "path": rel, "why": why})

    # -- bytecode caches of test-side files ---------------------------------------------

    def check_caches(self, rel: str) -> None:
        """Every cache of `rel` this process could load must hold its compiled bytes."""
        source = os.path.join(self.roots[0], rel)
        for pyc, kind, optimize in cache_files(source):
            why = self._bad_cache(rel, source, pyc, kind, optimize)
            if why is not None:
                where = self.relative(pyc) or pyc
                with _LOCK:
                    module = self.compiled[rel][3]
                    self.bytecode[where] = {"path": where, "source": rel, "module": module}
                    self.bytecode[where]["why"] = why

    def _bad_cache(self, rel: str, source: str, pyc: str, kind: str, optimize: int) -> str | None:
        try:
            with open(pyc, "rb") as fh:
                header, body = fh.read(16), fh.read()
        except OSError:
            return None  # gone meanwhile (or a folder): nothing to load
        if header[:4] != importlib.util.MAGIC_NUMBER:
            return None  # another Python's: this one rewrites it, never loads it
        try:
            code = marshal.loads(body)
        except Exception:
            return "is not valid bytecode"
        expected = self._expected(rel, source, kind, optimize)
        if expected is None:
            return None  # rewriting needs pytest's configuration: looked at again at the end
        if not isinstance(code, types.CodeType) or code != expected:
            return "holds code its source does not compile to"
        return None

    def _expected(self, rel: str, source: str, kind: str, optimize: int) -> types.CodeType | None:
        kept = self.compiled[rel]
        data = kept[0]
        if kind == "python":
            if kept[1] is None or optimize != -1:
                code = compile(data, source, "exec", dont_inherit=True, optimize=optimize)
                if optimize != -1:
                    return code
                kept[1] = code
            return kept[1]  # type: ignore[no-any-return]
        if kept[2] is None and self.config is not None:
            tree = ast.parse(data, filename=source)
            rewrite.rewrite_asserts(tree, data, source, self.config)
            kept[2] = compile(tree, source, "exec", dont_inherit=True)
        return kept[2]  # type: ignore[no-any-return]

    # -- the session's end ------------------------------------------------------------

    def report(self) -> dict[str, list[dict[str, str]]]:
        """The records, after a last look at `sys.modules` and at the caches."""
        for source in list(self.compiled):
            self.check_caches(source)
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            rel = self.relative(file) if isinstance(file, str) else None
            if rel is None:
                continue
            known = self.verified.get(id(module))
            if known is not None and known[0] is module and known[1] == rel:
                continue
            if rel in self.paths and _from_source(module):
                continue  # `exec_module` on a module it had not put in sys.modules first
            self.loaded_unverified(name, rel, _how_loaded(module))
        with _LOCK:
            return {
                "loads": list(self.loads),
                "unverified": list(self.unverified),
                "bytecode": sorted(self.bytecode.values(), key=lambda b: b["path"]),
            }


def cache_files(source: str) -> list[tuple[str, str, int]]:
    """The bytecode files this interpreter (`python`) or this pytest (`pytest`) would
    look for as `source`'s cache: (path, kind, optimization level; -1: none)."""
    folder, name = os.path.split(source)
    stem = name.rpartition(".")[0]
    places = [os.path.join(folder, "__pycache__")]
    if sys.pycache_prefix:
        places.append(os.path.dirname(importlib.util.cache_from_source(source)))
    tag = sys.implementation.cache_tag
    found = []
    for place in dict.fromkeys(places):
        try:
            names = os.listdir(place)
        except OSError:
            continue
        for entry in names:
            if not (entry.startswith(f"{stem}.") and entry.endswith(".pyc")):
                continue
            middle = entry[len(stem) + 1 : -len(".pyc")]
            if middle == tag:
                found.append((os.path.join(place, entry), "python", -1))
            elif middle.startswith(f"{tag}.opt-") and middle[len(tag) + 5 :].isdigit():
                found.append((os.path.join(place, entry), "python", int(middle[len(tag) + 5 :])))
            elif PYTEST_TAIL is not None and f".{middle}.pyc" == PYTEST_TAIL:
                found.append((os.path.join(place, entry), "pytest", -1))
    return found


def _from_source(module: types.ModuleType) -> bool:
    """Loaded by a loader whose compiling goes through the guard."""
    loader = getattr(getattr(module, "__spec__", None), "loader", None)
    kinds = (importlib.machinery.SourceFileLoader, rewrite.AssertionRewritingHook)
    return isinstance(loader, kinds)


def _how_loaded(module: types.ModuleType) -> str:
    spec = getattr(module, "__spec__", None)
    loader = getattr(spec, "loader", None) or getattr(module, "__loader__", None)
    if loader is None:
        return "without a loader"
    kind = type(loader)
    if kind is importlib.machinery.SourcelessFileLoader:
        return "from bytecode without its source"
    if kind is importlib.machinery.ExtensionFileLoader:
        return "as a compiled extension"
    if isinstance(loader, (importlib.machinery.SourceFileLoader, rewrite.AssertionRewritingHook)):
        return "as a module object the check did not compile"
    return f"by the loader {kind.__module__}.{kind.__qualname__}"


# -- the replaced loader methods -------------------------------------------------------------


def _get_code(self: importlib.machinery.SourceFileLoader, fullname: str) -> types.CodeType:
    """SourceFileLoader's, without bytecode caches for worktree files."""
    guard = _GUARD
    path = self.get_filename(fullname)
    rel = guard.relative(path) if guard is not None else None
    if guard is None or rel is None:
        return _ORIGINALS["get_code"](self, fullname)  # type: ignore[no-any-return]
    data = self.get_data(path)
    code = self.source_to_code(data, path)
    module = sys.modules.get(fullname)
    if getattr(getattr(module, "__spec__", None), "loader", None) is not self:
        module = None  # not the module being loaded (runpy, a direct get_code call)
    loader: dict[str, str] = {}
    if type(self) is not importlib.machinery.SourceFileLoader:
        # A subclass compiles with its own `source_to_code` (an import hook that
        # instruments code): whose code that is, the gate judges.
        kind = type(self)
        loader["loader"] = f"{kind.__module__}.{kind.__qualname__}"
        where = guard.relative(getattr(sys.modules.get(kind.__module__), "__file__", None))
        if where is not None:
            loader["loader_path"] = where
    guard.compiled_from(fullname, rel, data, module, "compiled", code, loader)
    return code


def _exec_rewritten(self: rewrite.AssertionRewritingHook, module: types.ModuleType) -> None:
    """pytest's, rewriting the bytes this process read, never a cache."""
    __tracebackhide__ = True
    guard = _GUARD
    origin = getattr(module.__spec__, "origin", None)
    rel = guard.relative(origin) if guard is not None and origin else None
    if guard is None or rel is None or not isinstance(origin, str):
        _ORIGINALS["exec_module"](self, module)
        return
    guard.config = guard.config or self.config
    names = getattr(self, "_rewritten_names", None)
    if isinstance(names, dict):
        names[module.__name__] = Path(origin)  # what pytest's own exec_module records
    with open(origin, "rb") as fh:
        data = fh.read()
    tree = ast.parse(data, filename=origin)
    rewrite.rewrite_asserts(tree, data, origin, self.config)
    code = compile(tree, origin, "exec", dont_inherit=True)
    guard.compiled_from(module.__name__, rel, data, module, "rewritten", code)
    exec(code, module.__dict__)


def _sourceless_get_code(
    self: importlib.machinery.SourcelessFileLoader, fullname: str
) -> types.CodeType | None:
    guard = _GUARD
    rel = guard.relative(self.get_filename(fullname)) if guard is not None else None
    if guard is not None and rel is not None:
        guard.loaded_unverified(fullname, rel, "from bytecode without its source")
    return _ORIGINALS["sourceless"](self, fullname)  # type: ignore[no-any-return]


def _create_extension(
    self: importlib.machinery.ExtensionFileLoader, spec: importlib.machinery.ModuleSpec
) -> types.ModuleType:
    guard = _GUARD
    rel = guard.relative(self.path) if guard is not None else None
    if guard is not None and rel is not None:
        guard.loaded_unverified(spec.name, rel, "as a compiled extension")
    return _ORIGINALS["extension"](self, spec)  # type: ignore[no-any-return]


def install(root: str, algorithm: str, test_files: Iterable[str]) -> Guard:
    """Guard this process's imports from `root` (once; again: the same guard)."""
    global _GUARD
    with _LOCK:
        if _GUARD is not None:
            return _GUARD
        if not _ORIGINALS:
            source = importlib.machinery.SourceFileLoader
            sourceless = importlib.machinery.SourcelessFileLoader
            extension = importlib.machinery.ExtensionFileLoader
            hook = rewrite.AssertionRewritingHook
            _ORIGINALS.update(
                get_code=source.get_code,
                exec_module=hook.exec_module,
                sourceless=sourceless.get_code,
                extension=extension.create_module,
            )
            source.get_code = _get_code  # type: ignore[method-assign,assignment]
            hook.exec_module = _exec_rewritten  # type: ignore[method-assign]
            sourceless.get_code = _sourceless_get_code  # type: ignore[method-assign]
            extension.create_module = _create_extension  # type: ignore[method-assign]
        guard = _GUARD = Guard(root, algorithm, test_files)
    guard.adopt_loaded()
    return guard


def current() -> Guard | None:
    return _GUARD


def merge(reports: Iterable[dict[str, list[dict[str, str]]]]) -> dict[str, list[dict[str, str]]]:
    """One process's report from its own and its xdist workers'."""
    merged: dict[str, list[dict[str, str]]] = {"loads": [], "unverified": [], "bytecode": []}
    for report in reports:
        for key, entries in merged.items():
            entries.extend(report.get(key, ()))
    return merged
