"""Which oracle items a change edits or deletes, read with `ast` (never imported).

An oracle file of base's that the change modified, renamed or deleted holds edited
items: the test functions whose code changed (their decorators, so their
parametrisations, included) or that head no longer has. Every item of the file counts
when anything else in it changed (a helper, a fixture, a constant, an import that
binds a name again), since any item may use it; and so do the items of an oracle file
under a `conftest.py` the change touched, or that imports a test-side module the
change touched (a shared helper). A file whose change only adds tests, and imports or
helpers under new names, edits nothing: new checks give up none.
"""

from __future__ import annotations

import ast
import builtins
import copy
import posixpath
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from andgate.check.discrimination.changed_tests import item_name
from andgate.check.evidence.imports import imported_files, parse, test_functions
from andgate.git import Change

# Statements a change may add to an oracle module without editing its old items,
# when every name they bind is new: they cannot change what an old test runs.
ADDABLE = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class EditedFile:
    """A base oracle file whose items the change edits or deletes."""

    path: str  # on base
    head_path: str | None  # where head has it; None: deleted
    # the test functions edited or deleted, named as `item_name` names them; None: all
    functions: frozenset[str] | None = None

    def holds(self, nodeid: str) -> bool:
        """Whether `nodeid` (one of base's items) is edited or deleted."""
        path = nodeid.split("::", 1)[0]
        if path != self.path:
            return False
        return self.functions is None or item_name(nodeid) in self.functions


def edited_functions(before: bytes | None, after: bytes | None) -> frozenset[str] | None:
    """The test functions of `before` that `after` changes or drops; None: every item
    (the file is gone, either side does not parse, or code besides new tests changed)."""
    old, new = parse(before), parse(after)
    if old is None or new is None:
        return None
    if not _only_additions(_rest(old), _rest(new), _bound(old)):
        return None
    old_tests = {name: ast.dump(node) for name, node in test_functions(old)}
    new_tests = {name: ast.dump(node) for name, node in test_functions(new)}
    return frozenset(name for name, code in old_tests.items() if new_tests.get(name) != code)


def _rest(tree: ast.Module) -> list[ast.stmt]:
    """The module without its test functions (classes keep everything else)."""
    out: list[ast.stmt] = []
    for node in tree.body:
        if _is_test_function(node):
            continue
        if isinstance(node, ast.ClassDef):
            node = copy.copy(node)  # the class without its tests: a shallow copy
            node.body = [s for s in node.body if not _is_test_function(s)]
            if not node.body and not node.bases and not node.decorator_list:
                continue  # a plain class of tests: nothing but its tests, compared alone
        out.append(node)
    return out


def _is_test_function(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")


def _bound(tree: ast.Module) -> set[str]:
    """Names the module binds at its top level, and the builtins (a new `def len`
    would change what an old test calls)."""
    names = set(dir(builtins))
    for node in tree.body:
        names |= _binds(node)
        if not isinstance(node, ADDABLE):
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return names


def _binds(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    return set()


def _only_additions(old: Sequence[ast.stmt], new: Sequence[ast.stmt], bound: set[str]) -> bool:
    """Whether `new` is `old` with statements added that cannot change an old test:
    imports, functions and classes binding only new names (no `*` import)."""
    wanted = [ast.dump(s) for s in old]
    at = 0
    for node in new:
        if at < len(wanted) and ast.dump(node) == wanted[at]:
            at += 1
            continue
        if not isinstance(node, ADDABLE) or _binds(node) & bound:
            return False
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return False
    return at == len(wanted)


def edited_files(
    changes: Sequence[Change],
    base_oracle: Collection[str],
    sides: Mapping[Change, tuple[bytes | None, bytes | None]],
    reached: Callable[[str], bool] = lambda path: False,
) -> tuple[EditedFile, ...]:
    """Base's oracle files whose items the change edits or deletes. `sides`: both
    sides of each change to an oracle file; `reached`: whether an oracle file (that
    the change did not edit itself) uses a `conftest.py` or helper the change touched."""
    found: dict[str, EditedFile] = {}
    for change in changes:
        path = change.old_path
        if path is None or path not in base_oracle:
            continue
        if change.status == "D" or change.new_path is None:
            found[path] = EditedFile(path, None)
            continue
        before, after = sides.get(change, (None, None))
        functions = None if reached(path) else edited_functions(before, after)
        if functions is None or functions:
            found[path] = EditedFile(path, change.new_path, functions)
    for path in sorted(base_oracle):
        if path not in found and reached(path) and not _changed(path, changes):
            found[path] = EditedFile(path, path)
    return tuple(found[p] for p in sorted(found))


def _changed(path: str, changes: Iterable[Change]) -> bool:
    return any(c.old_path == path for c in changes)


def conftest_reach(changes: Iterable[Change]) -> Callable[[str], bool]:
    """Whether a file lies under a `conftest.py` the change added, edited or deleted."""
    folders = {
        posixpath.dirname(p)
        for c in changes
        for p in c.paths
        if posixpath.basename(p) == "conftest.py"
    }

    def reached(path: str) -> bool:
        return any(not f or path.startswith(f"{f}/") for f in folders)

    return reached


def helper_reach(
    oracle_sources: Mapping[str, bytes],
    helpers: Collection[str],
    paths: Collection[str],
) -> Callable[[str], bool]:
    """Whether a base oracle file imports one of `helpers` (test-side modules the
    change touched that are not oracle files themselves). `paths`: base's files."""
    reaching = set()
    for path, source in oracle_sources.items():
        tree = parse(source)
        if tree is not None and set(imported_files(path, tree, paths)) & set(helpers):
            reaching.add(path)
    return reaching.__contains__
