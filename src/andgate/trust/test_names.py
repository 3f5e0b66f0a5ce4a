"""The module names base's test side provides (contract section 4, step 4).

A trusted run must import every one of them from the test side. Python resolves a
name folder by folder along `sys.path`, and a module file or a regular package
beats a folder without `__init__.py`: a production `tests.py` holding a `__path__`,
or a production package `support/` at the root, would answer an oracle's
`import tests.support.approx` or (with `pythonpath = tests`) `import support.approx`
with the change's code. The names come from base's tree alone: each folder on which
a test module can be imported (the rootdir, base's `pythonpath` and `testpaths`, and
the folder pytest's default import mode puts first for each test-side file), and
below each, the first folder or file on the way down that is wholly test side.

`andgate.process.integrity.judge` confirms after each trusted run that every module
under these names came from the test side; the production scan can read the same
names to find a change's file that takes one before any test runs.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping


def test_side_names(
    paths: Iterable[str],
    holds: Callable[[str], bool],
    import_roots: Iterable[str] = (),
    collected: Callable[[str], bool] = lambda path: False,
) -> dict[str, str]:
    """Every module name (dotted) under which a test-side file of the tree is
    imported, mapped to the test-side folder or file that provides it. `paths`: the
    tree's files; `holds`: whether a path is the test side; `import_roots`: folders
    put on `sys.path` besides the rootdir and each collected file's own import root
    (base's `pythonpath` and `testpaths`); `collected`: files pytest imports by path
    besides `conftest.py`, `test_*.py` and `*_test.py` (the oracle and property
    globs' files)."""
    python = sorted(p for p in paths if p.endswith(".py"))
    wholly: dict[str, bool] = {}  # folder -> every Python file below it is the test side
    for path in python:
        test = holds(path)
        for folder in _parents(path):
            wholly[folder] = wholly.get(folder, True) and test
    roots = sys_path_roots(python, holds, import_roots, collected)
    names: dict[str, str] = {}
    for path in python:
        parts = path.split("/")
        for depth in range(len(parts)):
            if "/".join(parts[:depth]) in roots:
                _name_below(parts, depth, wholly, holds, names)
    return names


def _name_below(
    parts: list[str],
    depth: int,
    wholly: Mapping[str, bool],
    holds: Callable[[str], bool],
    names: dict[str, str],
) -> None:
    """The name the file `parts` is first test side under, importing from the
    folder `parts[:depth]`: the first folder down that holds only test-side files,
    or the file itself."""
    stems = []
    for i in range(depth, len(parts)):
        last = i == len(parts) - 1
        stem = parts[i][: -len(".py")] if last else parts[i]
        if not stem.isidentifier() or stem == "__init__":
            return
        stems.append(stem)
        here = "/".join(parts[: i + 1])
        if holds(here) if last else wholly.get(here, False):
            names.setdefault(".".join(stems), here)
            return


def sys_path_roots(
    paths: Iterable[str],
    holds: Callable[[str], bool],
    import_roots: Iterable[str] = (),
    collected: Callable[[str], bool] = lambda path: False,
) -> set[str]:
    """The folders of the tree a test run imports modules from (posix, "" for the
    rootdir): the rootdir, `import_roots` inside it, and the import root of each
    test-side file pytest imports by path (`import_root`)."""
    python = [p for p in paths if p.endswith(".py")]
    packages = {posixpath.dirname(p) for p in python if posixpath.basename(p) == "__init__.py"}
    roots = {""} | {r for r in map(_folder, import_roots) if r is not None}
    roots |= {
        import_root(p, packages)
        for p in python
        if holds(p) and (_collected_by_name(p) or collected(p))
    }
    return roots


def importable_as(path: str, roots: Iterable[str]) -> list[str]:
    """The module names a file or folder of the tree is imported under from these
    roots (`pkg/__init__.py` and `pkg` are `pkg`): what the production scan holds
    against `test_side_names` to find a file that takes a test-side name."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    names = []
    for root in roots:
        depth = len(root.split("/")) if root else 0
        if root and parts[:depth] != root.split("/"):
            continue
        below = parts[depth:]
        if below and all(part.isidentifier() for part in below):
            names.append(".".join(below))
    return sorted(set(names))


def _collected_by_name(path: str) -> bool:
    """Files pytest imports by path under its defaults: conftests and test modules."""
    name = posixpath.basename(path)
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


def import_root(path: str, packages: set[str]) -> str:
    """The folder pytest's default import mode (`prepend`) puts on `sys.path` to
    import a test file: its own folder, or, inside packages, the folder above the
    outermost one (pytest's `resolve_package_path`)."""
    folder = posixpath.dirname(path)
    if folder not in packages:
        return folder
    while posixpath.dirname(folder) in packages and posixpath.dirname(folder) != folder:
        folder = posixpath.dirname(folder)
    return posixpath.dirname(folder)


def _parents(path: str) -> Iterable[str]:
    folder = posixpath.dirname(path)
    while folder:
        yield folder
        folder = posixpath.dirname(folder)


def _folder(path: str) -> str | None:
    """A configured folder relative to the rootdir, or None when it is outside it."""
    normal = posixpath.normpath(path.replace("\\", "/"))
    if posixpath.isabs(normal) or normal == ".." or normal.startswith("../"):
        return None
    return "" if normal == "." else normal
