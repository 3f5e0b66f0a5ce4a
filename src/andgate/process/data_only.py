"""Whether a generated file is data only, so that base's runs may have it.

A run of base (the base collection that pins the oracle set, the base rerun that
judges a skip) sees base as committed, plus the checkout's generated files that hold
no code (contract section 4, "Generated files"). What setuptools-scm, vcs-versioning
and hatch-vcs write is such a file:

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import Tuple, Union
        VERSION_TUPLE = Tuple[Union[int, str], ...]
    else:
        VERSION_TUPLE = object
    __version__ = version = '1.2.3'
    __version_tuple__ = version_tuple = (1, 2, 3)

The forms read as data: docstrings, `__future__` and `typing` imports, `TYPE_CHECKING`
blocks (the branch that runs holds data only; the other never runs), and plain or
annotated assignments of literals, of names the file bound before, and of builtin
types (`VERSION_TUPLE = object`). Annotations are type expressions over those names,
`typing` and builtin types. Anything else (a call, a function or class, an import of
another module, attribute access other than `typing.X`, a comprehension, a loop) is
code the change's build produced, and stays out of base's runs. Names Python's import
system or pytest read from a module (`__path__`, `__getattr__`, `pytest_plugins`,
`collect_ignore`...) are refused too: a literal there steers what base imports or
collects.

The file is parsed, never imported: no code of the project runs in the gate.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable
from pathlib import PurePosixPath

# Builtin types a version file names as a value or in an annotation (`object`,
# `tuple[int | str, ...]`, `str | None`): naming or subscripting one runs no code of
# the project.
BUILTIN_TYPES = frozenset(
    {"object", "str", "int", "float", "bool", "bytes", "tuple", "list", "dict", "set", "frozenset"}
)
# The dunder names a version file may bind: metadata, never a name the interpreter
# reads (`__path__` would make the module a package importing from anywhere).
METADATA_DUNDERS = frozenset(
    {
        "__all__",
        "__version__",
        "__version_tuple__",
        "__version_info__",
        "__commit_id__",
        "__date__",
        "__author__",
        "__email__",
        "__license__",
        "__copyright__",
    }
)
# Module names pytest reads: a literal list there loads plugins or skips files.
PYTEST_NAMES = frozenset({"pytest_plugins", "collect_ignore", "collect_ignore_glob", "pytestmark"})
UTF8 = frozenset({"utf-8", "utf-8-sig"})
SHOWN = 40  # characters of an expression a message quotes


def why_not_data(path: str, data: bytes) -> str | None:
    """None when the file is data only; else what is not, with its line."""
    if PurePosixPath(path).suffix != ".py":
        return "it is not a Python source file"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        if encoding not in UTF8:
            return f"it declares the source encoding {encoding}"
        tree = ast.parse(data, filename=path)
    except (SyntaxError, ValueError) as exc:
        return f"it does not parse as Python ({exc.__class__.__name__})"
    return _Reader().block(tree.body)


def _what(node: ast.AST) -> str:
    """A statement or expression named as a reader would say it."""
    names = {
        ast.FunctionDef: "a function definition",
        ast.AsyncFunctionDef: "a function definition",
        ast.ClassDef: "a class definition",
        ast.Call: "a call",
        ast.Attribute: "attribute access",
        ast.Import: "an import",
        ast.ImportFrom: "an import",
        ast.AugAssign: "an augmented assignment",
        ast.Try: "a try statement",
        ast.If: "an if statement",
        ast.For: "a loop",
        ast.While: "a loop",
        ast.With: "a with statement",
        ast.Expr: "an expression statement",
        ast.Lambda: "a lambda",
        ast.NamedExpr: "an assignment expression",
    }
    if isinstance(node, ast.Name):
        return f"{node.id}, a name the file did not bind"
    what = next((n for k, n in names.items() if isinstance(node, k)), None)
    if what is None:
        what = type(node).__name__.lower()
    if isinstance(node, ast.expr):
        text = ast.unparse(node)
        what += f" ({text[:SHOWN]}{'...' if len(text) > SHOWN else ''})"
    return what


def _at(node: ast.AST, what: str) -> str:
    return f"line {getattr(node, 'lineno', 0)}: {what}"


class _Reader:
    """Reads statements in order, keeping the names each binds at run time."""

    def __init__(self) -> None:
        self.bound: set[str] = set()  # names bound at run time so far
        self.typing_modules: set[str] = set()  # names bound to the typing module
        self.false: set[str] = set()  # names false at run time (TYPE_CHECKING)
        self.declared: set[str] = set()  # names bound only for a type checker

    def block(self, body: Iterable[ast.stmt]) -> str | None:
        for statement in body:
            if (problem := self.statement(statement)) is not None:
                return problem
        return None

    def statement(self, node: ast.stmt) -> str | None:
        if isinstance(node, ast.Expr) and _is_string(node.value):
            return None  # a docstring
        if isinstance(node, ast.Pass):
            return None
        if isinstance(node, ast.ImportFrom | ast.Import):
            return self._import(node)
        if isinstance(node, ast.Assign):
            return self._assign(node, node.targets, node.value, None)
        if isinstance(node, ast.AnnAssign):
            return self._assign(node, [node.target], node.value, node.annotation)
        if isinstance(node, ast.If) and self._is_type_checking(node.test):
            return self._type_checking(node)
        return _at(node, _what(node.value if isinstance(node, ast.Expr) else node))

    def _import(self, node: ast.Import | ast.ImportFrom) -> str | None:
        if isinstance(node, ast.ImportFrom):
            if node.level or node.module not in ("__future__", "typing"):
                return _at(node, f"an import of {'.' * node.level}{node.module or ''}")
            if any(alias.name == "*" for alias in node.names):
                return _at(node, "a star import")
            for alias in node.names:
                name = alias.asname or alias.name
                self._bind(name)
                if node.module == "typing" and alias.name == "TYPE_CHECKING":
                    self.false.add(name)
            return None
        for alias in node.names:
            if alias.name != "typing":
                return _at(node, f"an import of {alias.name}")
            name = alias.asname or alias.name
            self._bind(name)
            self.typing_modules.add(name)
        return None

    def _assign(
        self,
        node: ast.stmt,
        targets: list[ast.expr],
        value: ast.expr | None,
        annotation: ast.expr | None,
    ) -> str | None:
        names = []
        for target in targets:
            if not isinstance(target, ast.Name):
                return _at(node, f"an assignment to {_what(target)}")
            if (refused := _refused_name(target.id)) is not None:
                return _at(node, refused)
            names.append(target.id)
        if annotation is not None and (bad := self._type(annotation)) is not None:
            return _at(node, f"{_what(bad)} in an annotation")
        if value is None:
            return None  # `version: str` binds nothing
        if (bad := self._value(value)) is not None:
            return _at(node, f"an assignment of {_what(bad)}")
        is_false = isinstance(value, ast.Constant) and value.value is False
        for name in names:
            self._bind(name)
            if is_false:
                self.false.add(name)
        return None

    def _bind(self, name: str) -> None:
        """A rebinding forgets what the name was (a TYPE_CHECKING set to True)."""
        self.bound.add(name)
        self.false.discard(name)
        self.typing_modules.discard(name)

    def _is_type_checking(self, test: ast.expr) -> bool:
        if isinstance(test, ast.Name):
            return test.id in self.false
        return (
            isinstance(test, ast.Attribute)
            and test.attr == "TYPE_CHECKING"
            and isinstance(test.value, ast.Name)
            and test.value.id in self.typing_modules
        )

    def _type_checking(self, node: ast.If) -> str | None:
        """`if TYPE_CHECKING:` never runs: it may import anything and declare type
        aliases, for a type checker. Its `else:` runs, and holds data only."""
        for statement in node.body:
            if (problem := self._declaration(statement)) is not None:
                return problem
        return self.block(node.orelse)

    def _declaration(self, node: ast.stmt) -> str | None:
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and _is_string(node.value)):
            return None
        if isinstance(node, ast.Import | ast.ImportFrom):
            self.declared.update(_imported_names(node))
            return None
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                return _at(node, "an assignment to something other than a name")
            exprs = [node.value] if node.value is not None else []
            if isinstance(node, ast.AnnAssign):
                exprs.append(node.annotation)
            for expr in exprs:
                if (bad := self._type(expr, declaring=True)) is not None:
                    return _at(node, f"{_what(bad)} in a TYPE_CHECKING block")
            self.declared.update(t.id for t in targets if isinstance(t, ast.Name))
            return None
        return _at(node, f"{_what(node)} in a TYPE_CHECKING block")

    def _value(self, node: ast.expr) -> ast.expr | None:
        """The first part of a value that is not a literal or a bound name."""
        if isinstance(node, ast.Constant):
            return None
        if isinstance(node, ast.Name):
            return None if node.id in self.bound or node.id in BUILTIN_TYPES else node
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            number = isinstance(node.operand, ast.Constant) and _is_number(node.operand.value)
            return None if number else node
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return _first(self._value(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                return node  # `{**other}`
            parts = [k for k in node.keys if k is not None] + node.values
            return _first(self._value(e) for e in parts)
        return node

    def _type(self, node: ast.expr, *, declaring: bool = False) -> ast.expr | None:
        """The first part of a type expression that is not one: names the file
        bound, `typing.X`, builtin types, strings, None and `...`, combined by
        subscripts and `|`. A declaration may also name what a TYPE_CHECKING
        block imported (it never runs)."""
        if isinstance(node, ast.Constant):
            return None
        if isinstance(node, ast.Name):
            known = self.bound | BUILTIN_TYPES | self.declared
            return None if node.id in known else node
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in self.typing_modules:
                return None
            if declaring and self._type(node.value, declaring=True) is None:
                return None  # `os.PathLike` of a module only a type checker imports
            return node
        if isinstance(node, ast.Subscript):
            return self._type(node.value, declaring=declaring) or self._type(
                node.slice, declaring=declaring
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self._type(node.left, declaring=declaring) or self._type(
                node.right, declaring=declaring
            )
        if isinstance(node, ast.Tuple | ast.List):
            return _first(self._type(e, declaring=declaring) for e in node.elts)
        return node


def _refused_name(name: str) -> str | None:
    if name in PYTEST_NAMES:
        return f"an assignment to {name}, which pytest reads"
    if name.startswith("__") and name.endswith("__") and name not in METADATA_DUNDERS:
        return f"an assignment to {name}, which Python itself reads"
    return None


def _imported_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [a.asname or a.name for a in node.names]
    return [a.asname or a.name.partition(".")[0] for a in node.names]


def _first(parts: Iterable[ast.expr | None]) -> ast.expr | None:
    return next((p for p in parts if p is not None), None)


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | complex) and not isinstance(value, bool)
