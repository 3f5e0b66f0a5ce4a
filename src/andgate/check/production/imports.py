"""Imports and shadowing: files that change what an `import` loads.

A new top-level module named like one the oracle imports (`json.py` at the root,
`src/yaml/`) is loaded in its place; a second top-level copy of the project's own
package may be the one a test imports; and some files run without any import at
all (`sitecustomize.py`, a `.pth` file, a repository-root `__init__.py` that makes
pytest import the root as a package). Each is named with its file. A change that
moves the project's package (`pkg/` to `src/pkg/`) brings no second copy.
"""

from __future__ import annotations

import sys
from collections.abc import Container, Iterator, Sequence
from pathlib import PurePosixPath

from andgate.check.production.common import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    PYTHON_SUFFIXES,
    FileChange,
    ScanContext,
    ScanFinding,
)
from andgate.check.production.rules import Family
from andgate.records import Construct

PACKAGE_ROOTS = frozenset({"", "src", "lib"})
IMPLICIT_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})


def implicit_import(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    """A file Python or pytest runs without the code importing it."""
    if not change.adds_bytes:
        return
    path = change.path
    name = PurePosixPath(path).name
    if path == "__init__.py":
        yield ScanFinding(path, None, Construct.IMPLICIT_IMPORT, "a repository-root __init__.py")
    elif name in IMPLICIT_NAMES:
        yield ScanFinding(path, None, Construct.IMPLICIT_IMPORT, f"{name}, run at start-up")
    elif PurePosixPath(path).suffix == ".pth":
        yield ScanFinding(path, None, Construct.IMPLICIT_IMPORT, "a .pth file, run by site")


def shadowing_module(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    """A new top-level module or package named like one the environment or the project
    already has."""
    if not change.adds_bytes or not change.path_is_new:
        return
    module = module_name(change.path)
    why = shadow_reason(module, context.shadowed, context.project_packages, context.moved_packages)
    if why:
        yield ScanFinding(change.path, None, Construct.SHADOWING_MODULE, why)


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


FAMILY = Family(
    name="imports and shadowing",
    constructs=frozenset({Construct.SHADOWING_MODULE, Construct.IMPLICIT_IMPORT}),
    file_rules=(implicit_import, shadowing_module),
)
