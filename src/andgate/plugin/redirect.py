"""Make a pytest process import the project from its own worktree.

PYTEST_DONT_REWRITE. Runs inside the gate's pytest processes (the bootstrap,
and xdist workers through the plugin), so it imports only the standard library.

An editable install points into the user's checkout: a `.pth` path entry
(`/repo/src`) or an import finder whose mapping names files there (setuptools'
`MAPPING`, the `editables` redirector). Every such path whose counterpart
exists in the worktree is rewritten to that counterpart: `/repo/src` becomes
`<worktree>/src`. Paths to untracked places in the checkout (a `.venv/` holding
pytest itself) have no counterpart and are left alone. A copy installed in
site-packages is shadowed by putting the worktree's folders for the project's
import names (found by the gate, `andgate.process.installed`) first on `sys.path`.
The same folders go first on `PYTHONPATH`, so a Python process a test starts (a CLI
run as `python -m pkg`, pytester's `runpytest_subprocess`) imports the worktree's
project too, not the checkout (where a known-bad fixture was never applied) or the copy.

`foreign_modules` is the check that follows: a module the process imported
from the checkout, or a project module imported from anywhere but the
worktree, means the run did not test head, and the gate blocks.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

Remap = Callable[[str], "str | None"]
STDLIB_FINDERS = ("_frozen_importlib", "_frozen_importlib_external")


# Per (checkout, worktree) as given: the modules (name -> identity and file) that
# `apply` found in this process not to come from the checkout.
_AUDITED: dict[tuple[str, str], dict[str, Any]] = {}


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def real_paths() -> Callable[[str], str]:
    """`os.path.realpath` for many paths in few folders: each folder is resolved
    once, and a path itself only when it is a link (flit's `--symlink` install
    links single modules). A pytest process holds hundreds of modules from a few
    dozen folders, and resolving each file alone cost it tens of milliseconds."""
    folders: dict[str, str] = {}

    def real(path: str) -> str:
        folder, name = os.path.split(path)
        if name in ("", ".", "..") or os.path.islink(path):
            return os.path.realpath(path)
        resolved = folders.get(folder)
        if resolved is None:
            resolved = folders[folder] = os.path.realpath(folder)
        return os.path.join(resolved, name)

    return real


def remapper(checkout: str, worktree: str, real: Callable[[str], str] | None = None) -> Remap:
    """A function from a path in the checkout to its counterpart in the worktree
    (None when the path is elsewhere, already in the worktree, or untracked)."""
    checkout, worktree = os.path.realpath(checkout), os.path.realpath(worktree)
    real = real or real_paths()

    def remap(path: str) -> str | None:
        if not isinstance(path, str) or not os.path.isabs(path):
            return None
        resolved = real(path)
        if _inside(resolved, worktree) or not _inside(resolved, checkout):
            return None
        counterpart = os.path.join(worktree, os.path.relpath(resolved, checkout))
        return counterpart if os.path.exists(counterpart) else None

    return remap


def _remap_value(value: Any, remap: Remap) -> Any:
    if isinstance(value, str):
        return remap(value) or value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [remap(v) or v for v in value]
    return value


def _remap_mappings(namespace: Mapping[str, Any], remap: Remap) -> list[str]:
    """Rewrite, in place, every dict of the namespace that maps names to paths; the
    folders that hold the top-level packages and modules it now maps to the worktree."""
    folders = []
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue  # __builtins__, __dict__: never a finder's mapping
        if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
            for key, path in list(value.items()):
                value[key] = _remap_value(path, remap)
                if "." not in key and isinstance(path, str) and value[key] != path:
                    folders.append(_import_folder(value[key]))
    return folders


def _import_folder(path: str) -> str:
    """The `sys.path` folder of a package (its folder or `__init__.py`) or a module."""
    if os.path.basename(path) == "__init__.py":
        path = os.path.dirname(path)
    return os.path.dirname(path)


def _finder_namespaces(finder: object) -> Iterable[Mapping[str, Any]]:
    module = sys.modules.get(getattr(finder, "__module__", "") or "")
    for owner in (finder, type(finder), module):
        if owner is not None:
            try:
                yield vars(owner)
            except TypeError:
                continue


def apply(checkout: str, worktree: str, roots: Iterable[str] = ()) -> None:
    """Point `sys.path`, editable finders and the project's roots at the worktree."""
    remap = remapper(checkout, worktree)
    # Where this process now imports the project from instead of the checkout or a copy.
    redirected = [q for q in map(remap, sys.path) if q]
    sys.path[:] = [remap(p) or p for p in sys.path]
    for finder in list(sys.meta_path):
        owner = finder if isinstance(finder, type) else type(finder)
        if getattr(owner, "__module__", "") in STDLIB_FINDERS:
            continue
        for namespace in _finder_namespaces(finder):
            redirected += _remap_mappings(namespace, remap)
    front = [os.path.join(worktree, r) if r != "." else worktree for r in roots]
    sys.path[:0] = [p for p in front if p not in sys.path[:1]]
    _export_to_children([*front, *redirected], remap)
    audited = _AUDITED.setdefault((checkout, worktree), {})
    for name, module in list(sys.modules.items()):
        if _from_checkout(name, module, remap, audited):
            del sys.modules[name]  # imported from the checkout before we got here
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()


def _export_to_children(folders: list[str], remap: Remap) -> None:
    """PYTHONPATH for the processes the tests start: the project's folders in this
    worktree first (ahead of an editable install's `.pth` entries and finders, which
    Python consults after it, and of an installed copy), then the user's entries,
    those in the checkout pointing here. Idempotent: an xdist worker inherits it."""
    given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    paths = list(dict.fromkeys([*folders, *(remap(p) or p for p in given)]))
    if paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(paths)


def foreign_modules(
    checkout: str,
    worktree: str,
    names: Iterable[str],
    roots: Iterable[str] = (".",),
    distributions: Iterable[str] = (),
) -> list[str]:
    """Modules this process imported from somewhere other than the worktree: any
    with a counterpart in the checkout, and any under the project's names loaded
    from a file of the project found elsewhere (`ProjectFiles.elsewhere`).

    What counts is the file, not the name: six's meta-path importer files standard
    library modules under its own name (`six.moves.BaseHTTPServer` is
    `http.server`), and a project may alias an installed dependency the same way.
    Such a module is not the project's code loaded from elsewhere."""
    real = real_paths()
    remap = remapper(checkout, worktree, real)
    tops = frozenset(names)
    project = ProjectFiles(worktree, tops, roots, distributions, real)
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            continue
        if remap(file) or (name.partition(".")[0] in tops and project.elsewhere(file)):
            found.append(f"{name} from {file}")
    return sorted(found)


SITE_FOLDERS = ("site-packages", "dist-packages")


class ProjectFiles:
    """Whether a file a module of the project's names was loaded from is the
    project's own code outside the worktree. Fail closed: it is, unless it is
    neither a copy of one of the worktree's files (same path below a project
    name, under one of the import roots) nor a file the project's installed
    distributions hold (a copy install's compiled extension has no counterpart
    in the worktree), and it lies in the standard library or in the folders
    where other distributions are installed."""

    def __init__(
        self,
        worktree: str,
        names: frozenset[str],
        roots: Iterable[str],
        distributions: Iterable[str],
        real: Callable[[str], str],
    ) -> None:
        self.worktree = os.path.realpath(worktree)
        self.names = names
        self.roots = [os.path.normpath(os.path.join(self.worktree, r)) for r in roots] or [
            self.worktree
        ]
        self.distributions = tuple(distributions)
        self.real = real
        self._installed: frozenset[str] | None = None
        self._places: tuple[str, ...] | None = None

    def elsewhere(self, file: str) -> bool:
        path = self.real(file)
        if _inside(path, self.worktree):
            return False
        if self._copies_a_worktree_file(path) or path in self._installed_files():
            return True
        return not any(_inside(path, place) for place in self._other_places())

    def _copies_a_worktree_file(self, path: str) -> bool:
        """`.../site-packages/pkg/core.py` when the worktree has `src/pkg/core.py`:
        the path from a folder or file named after the project on."""
        parts = path.split(os.sep)
        for i in range(1, len(parts)):
            last = i == len(parts) - 1
            if (parts[i] if not last else parts[i].partition(".")[0]) not in self.names:
                continue
            rel = os.path.join(*parts[i:])
            if any(os.path.isfile(os.path.join(root, rel)) for root in self.roots):
                return True
        return False

    def _installed_files(self) -> frozenset[str]:
        """Every file the project's own distributions installed, read on first use."""
        if self._installed is None:
            from importlib import metadata  # only here: most runs never ask

            files: set[str] = set()
            for name in self.distributions:
                try:
                    dist = metadata.distribution(name)
                    files.update(self.real(str(dist.locate_file(f))) for f in dist.files or ())
                except Exception:  # a broken record: the other checks still apply
                    continue
            self._installed = frozenset(files)
        return self._installed

    def _other_places(self) -> tuple[str, ...]:
        """The standard library and the folders distributions are installed in."""
        if self._places is None:
            import sysconfig

            paths = sysconfig.get_paths()
            places = [
                paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths
            ]
            places += [p for p in sys.path if os.path.basename(p.rstrip(os.sep)) in SITE_FOLDERS]
            self._places = tuple(dict.fromkeys(os.path.realpath(p) for p in places if p))
        return self._places


PYTHON_SOURCE = (".py", ".pyw")


def unscanned_modules(worktree: str) -> list[dict[str, str]]:
    """Modules this process imported from the worktree that are not a plain Python
    source file there: one reached through a symlink (Python runs the link's target;
    the production scan read the link), or a file of another kind (sourceless
    bytecode, a text file a custom loader executed). Compiled extensions pass: the
    scan names committed binaries, and generated ones are listed with their digests.
    Each: module, path (worktree-relative), target (where the link leads:
    worktree-relative, or absolute outside it) and why."""
    roots = list(dict.fromkeys([os.path.abspath(worktree), os.path.realpath(worktree)]))
    links: dict[str, bool] = {}
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not os.path.isabs(file):
            continue
        path = os.path.normpath(file)
        root = next((r for r in roots if _inside(path, r) and path != r), None)
        if root is None:
            continue
        why = _not_scanned_source(root, path, links)
        if why is not None:
            rel = os.path.relpath(path, root)
            real = os.path.realpath(path)
            inside = _inside(real, roots[-1])
            target = os.path.relpath(real, roots[-1]) if inside else real
            found.append({"module": name, "path": rel, "target": target, "why": why})
    return sorted(found, key=lambda f: (f["path"], f["module"]))


def _not_scanned_source(root: str, path: str, links: dict[str, bool]) -> str | None:
    current = root
    for part in os.path.relpath(path, root).split(os.sep):
        current = os.path.join(current, part)
        if current not in links:
            links[current] = os.path.islink(current)
        if links[current]:
            return f"reached through the symlink {os.path.relpath(current, root)}"
    if path.endswith(PYTHON_SOURCE) or path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        return None
    return f"not a Python source file ({os.path.splitext(path)[1] or 'no suffix'})"


def _from_checkout(name: str, module: Any, remap: Remap, audited: dict[str, Any]) -> bool:
    """Whether `module` was loaded from a file of the checkout that the worktree
    also has. A module found not to be is remembered, by identity and file: the
    bootstrap and the first conftest hook both audit every module before any test
    code ran, and most were there for the first. The check at the session's end
    resolves every file again: by then a test may have replaced a worktree file
    with a link into the checkout and reloaded the module under the same name."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return False
    if audited.get(name) == (id(module), file):
        return False
    if remap(file):
        return True
    audited[name] = (id(module), file)
    return False
