"""Imports and shadowing: files and code that change what an `import` loads.

A new top-level module named like one the oracle imports (`json.py` at the root,
`src/yaml/`) is loaded in its place; a second top-level copy of the project's own
package may be the one a test imports; a production file that takes a name base's
test side provides (`tests.py` beside `tests/`, a package `support/` while tests
import `support.approx` from `tests/`) answers a test's import of its helpers; and
some files run without any import at all (`sitecustomize.py`, a `.pth` file, a
repository-root `__init__.py` that makes pytest import the root as a package). Each
is named with its file. A change that moves the project's package (`pkg/` to
`src/pkg/`) brings no second copy.

Code can do the same without a file of that name: it assigns a module's `__path__`
(its submodules then load from elsewhere), adds an import hook to `sys.meta_path`
or `sys.path_hooks`, or puts a module into `sys.modules` under another package's
name. Each is named with its line; the honest forms (`pkgutil.extend_path`, a
package filing its own submodules, `__path__ = []`) are not.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Container, Iterator, Sequence
from pathlib import PurePosixPath

from andgate.check.production.common import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    PYTHON_SUFFIXES,
    FileChange,
    Hit,
    Names,
    ScanContext,
    ScanFinding,
    node_lines,
    plain_hit,
    short,
)
from andgate.check.production.rules import Family
from andgate.records import Construct
from andgate.trust.test_names import importable_as

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


def test_side_name(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    """A production module the change adds (or renames to) under a name base's test
    side provides, or inside one: a module file or a regular package beats a folder
    without `__init__.py`, and sits first on `sys.path` when it is at the rootdir."""
    if not change.adds_bytes or not change.path_is_new or not context.test_names:
        return
    if PurePosixPath(change.path).suffix != ".py":
        return
    for name in importable_as(change.path, context.test_roots):
        parts = name.split(".")
        prefixes = (".".join(parts[:i]) for i in range(1, len(parts) + 1))
        taken = next((p for p in prefixes if p in context.test_names), None)
        if taken is not None:
            detail = f"takes the test-side name {taken} ({context.test_names[taken]})"
            yield ScanFinding(change.path, None, Construct.SHADOWING_MODULE, detail)
            return


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


# -- the plain walk: the import machinery changed in code ------------------------------------

HOOK_LISTS = frozenset({"sys.meta_path", "sys.path_hooks", "sys.path_importer_cache"})
ADDERS = frozenset(
    {"append", "insert", "extend", "__setitem__", "__iadd__", "update", "setdefault"}
)
MODULES = "sys.modules"


def machinery_assignment(
    names: Names, stmt: ast.Assign | ast.AugAssign | ast.AnnAssign, qualname: str
) -> Iterator[Hit]:
    """`__path__ = [...]`, `sys.meta_path = [...]`, `sys.meta_path[0:0] = [...]`,
    `sys.modules["support.approx"] = fake`."""
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        return  # an annotation binds nothing
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    for target in targets:
        why = assigned_machinery(names, target, stmt.value)
        if why is not None:
            lines = node_lines(stmt)
            yield plain_hit(Construct.IMPORT_MACHINERY, f"{short(stmt)}: {why}", lines, qualname)


def assigned_machinery(names: Names, target: ast.expr, value: ast.expr | None) -> str | None:
    name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
    if name == "__path__" and not is_honest_path(names, value):
        return "the module's submodules load from where it says"
    if isinstance(target, ast.Subscript):
        container = names.dotted(target.value)
        if container == MODULES:
            return foreign_module(names, target.slice)
        if container in HOOK_LISTS:
            return "an import hook"
    elif names.dotted(target) in HOOK_LISTS:
        return "an import hook"
    return None


def is_honest_path(names: Names, value: ast.expr | None) -> bool:
    """`pkgutil.extend_path(__path__, __name__)` (a namespace package's portions) and
    `__path__ = []` (marked a package, with nowhere to load submodules from)."""
    if isinstance(value, ast.List | ast.Tuple) and not value.elts:
        return True
    return isinstance(value, ast.Call) and (names.dotted(value.func) or "").endswith("extend_path")


def foreign_module(names: Names, key: ast.expr) -> str | None:
    """A `sys.modules` key spelt from a literal whose package is not the file's own
    (`requests` filing `requests.packages.urllib3` is its own; a key it computes is
    not judged: lazy loaders and compatibility shims file their own names that way)."""
    head = literal_head(key)
    if head is None:
        return None
    top = head.split(".", 1)[0]
    if not top or top == own_package(names.path):
        return None
    return f"a module filed under {head!r}, another package's name"


def literal_head(key: ast.expr) -> str | None:
    """The literal a key starts with: `"x.y"`, `f"x.{n}"`, `"x." + n`."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    if isinstance(key, ast.JoinedStr) and key.values:
        return literal_head(key.values[0])
    if isinstance(key, ast.BinOp) and isinstance(key.op, ast.Add):
        return literal_head(key.left)
    return None


def own_package(path: str) -> str:
    """The top-level name a file is imported under (`src/pkg/a.py`: `pkg`; `six.py`: `six`)."""
    parts = PurePosixPath(path).parts
    if len(parts) > 1 and parts[0] in PACKAGE_ROOTS:
        parts = parts[1:]
    return PurePosixPath(parts[0]).stem if parts else ""


def machinery_call(names: Names, node: ast.Call, qualname: str) -> Iterator[Hit]:
    """`sys.meta_path.insert(0, finder)`, `sys.path_hooks.append(hook)`,
    `__path__.append(folder)`, `sys.modules.update({"support.approx": fake})`."""
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in ADDERS:
        return
    receiver = names.dotted(func.value)
    why = None
    if receiver in HOOK_LISTS:
        why = "an import hook"
    elif receiver == "__path__":
        why = "the module's submodules load from where it says"
    elif receiver == MODULES:
        keys = [node.args[0]] if func.attr in ("setdefault", "__setitem__") and node.args else []
        if func.attr == "update" and node.args and isinstance(node.args[0], ast.Dict):
            keys = [k for k in node.args[0].keys if k is not None]
        why = next(filter(None, (foreign_module(names, k) for k in keys)), None)
    if why is not None:
        detail = f"{short(node)}: {why}"
        yield plain_hit(Construct.IMPORT_MACHINERY, detail, node_lines(node), qualname)


FAMILY = Family(
    name="imports and shadowing",
    constructs=frozenset(
        {Construct.SHADOWING_MODULE, Construct.IMPLICIT_IMPORT, Construct.IMPORT_MACHINERY}
    ),
    file_rules=(implicit_import, shadowing_module, test_side_name),
    plain_rules=(
        ((ast.Assign, ast.AugAssign, ast.AnnAssign), machinery_assignment),
        (ast.Call, machinery_call),
    ),
    plain_words="__path__|meta_path|path_hooks|path_importer_cache|modules",
)
