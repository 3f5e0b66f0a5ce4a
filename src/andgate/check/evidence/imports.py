"""Which files of the tree a test module imports, and which names it uses, read with
`ast` (never imported).

A module name is resolved by its path, not by `sys.path`: `import pkg.mod` names the
files `pkg/mod.py` and `pkg/mod/__init__.py` (and `pkg/__init__.py` on the way) under
any folder of the tree, which covers a src layout, a flat one and tests inside the
package alike; a relative import names them below the importing file's own folder.
A package's `__init__.py` usually re-exports its modules (`from toolz import
groupby`), so the modules directly in a package it imports count too. What this
finds is a superset to narrow down by name, never a list of what pytest imports.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """A module an import names, as a path without `.py`: `pkg/mod`. `anchored`: only
    that path from the repository's root (a relative import); otherwise that path
    under any folder."""

    stem: str
    anchored: bool = False

    def files(self, paths: Collection[str]) -> list[str]:
        """The files of `paths` that are this module: `<stem>.py`, `<stem>/__init__.py`."""
        wanted = (f"{self.stem}.py", f"{self.stem}/__init__.py")
        if self.anchored:
            return [w for w in wanted if w in paths]
        return sorted(p for p in paths if p in wanted or p.endswith(tuple(f"/{w}" for w in wanted)))


def parse(source: bytes | str | None) -> ast.Module | None:
    if source is None:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def import_targets(path: str, tree: ast.Module) -> list[Target]:
    """Every module the file's imports name, anywhere in it (imports inside test
    functions included), in order."""
    found: list[Target] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found += _dotted(alias.name)
        elif isinstance(node, ast.ImportFrom):
            found += _from(path, node)
    return list(dict.fromkeys(found))


def _dotted(module: str, under: str = "", anchored: bool = False) -> list[Target]:
    """`a.b.c` -> a, a/b, a/b/c (each package's `__init__` runs on the way)."""
    parts = [p for p in module.split(".") if p]
    return [Target(posixpath.join(under, *parts[: i + 1]), anchored) for i in range(len(parts))]


def _from(path: str, node: ast.ImportFrom) -> list[Target]:
    """`from a.b import c` names a/b and, when c is a module, a/b/c."""
    if node.level:
        folder = posixpath.dirname(path)
        for _ in range(node.level - 1):
            folder = posixpath.dirname(folder)
        base = _dotted(node.module, folder, anchored=True) if node.module else []
        package = posixpath.join(folder, *(node.module or "").split(".")).rstrip("/")
        here = [Target(package, anchored=True)] if package else []
        names = [Target(posixpath.join(package, a.name), anchored=True) for a in node.names]
        return [*here, *base, *names]
    module = node.module or ""
    stem = module.replace(".", "/")
    return [*_dotted(module), *(Target(f"{stem}/{a.name}") for a in node.names if a.name != "*")]


def imported_files(path: str, tree: ast.Module, paths: Collection[str]) -> list[str]:
    """The files of `paths` the module's imports name, and the modules directly in
    each package whose `__init__.py` they name (what it may re-export)."""
    found: list[str] = []
    for target in import_targets(path, tree):
        for file in target.files(paths):
            found.append(file)
            if file.endswith("/__init__.py"):
                found += package_modules(posixpath.dirname(file), paths)
    return list(dict.fromkeys(found))


def package_modules(folder: str, paths: Iterable[str]) -> list[str]:
    """The Python files directly in `folder`."""
    return sorted(p for p in paths if posixpath.dirname(p) == folder and p.endswith(".py"))


def names_used(nodes: Iterable[ast.AST]) -> tuple[set[str], set[str]]:
    """(names, attributes) the nodes read: `f(x)` reads the name `f`, `mod.f` and
    `obj.method()` the attributes `f` and `method`."""
    names: set[str] = set()
    attributes: set[str] = set()
    for node in nodes:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name):
                names.add(inner.id)
            elif isinstance(inner, ast.Attribute):
                attributes.add(inner.attr)
    return names, attributes


def names_called(nodes: Iterable[ast.AST]) -> set[str]:
    """The names and attributes the nodes call: `f(x)`, `self.g()`."""
    found: set[str] = set()
    for node in nodes:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                if isinstance(inner.func, ast.Name):
                    found.add(inner.func.id)
                elif isinstance(inner.func, ast.Attribute):
                    found.add(inner.func.attr)
    return found


def imported_names(tree: ast.Module) -> set[str] | None:
    """The names the module's imports bind, anywhere in it (None: a `*` import, after
    which any name may be an imported one)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    return None
                found.add((alias.asname or alias.name).split(".")[0])
    return found


def test_functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """(`name` or `Class.name`, node) of each test function, as `changed_tests`
    names them."""

    def walk(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.AST]]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("test"):
                    yield prefix + node.name, node
            elif isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.")

    yield from walk(tree.body, "")
