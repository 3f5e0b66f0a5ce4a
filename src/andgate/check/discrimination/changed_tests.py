"""Which test functions a change added or changed, read with `ast` (never imported).

The discrimination report covers the tests a change adds (not every test of a file it
edits: a test added to a module of fifty would otherwise keep every broken version
running for the forty-nine it did not write), and `known-bad harvest` takes the tests a
commit added or changed as the evidence that it fixed a bug. A test function is named
as its item is, without parameters: `test_x`, `TestY.test_x` (`item_name`).
"""

from __future__ import annotations

import ast


def test_functions(source: bytes | None) -> dict[str, str] | None:
    """`name` or `Class.name` of each test function, with its code (`ast.dump`);
    {} for no file, None for a file that does not parse."""
    if source is None:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, str] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("test"):
                    found[prefix + node.name] = ast.dump(node)
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return found


def changed_tests(before: bytes | None, after: bytes | None) -> frozenset[str] | None:
    """The test functions `after` adds or changes against `before`; None when either
    side does not parse (then no item can be told apart: all of them count)."""
    old, new = test_functions(before), test_functions(after)
    if old is None or new is None:
        return None
    return frozenset(name for name, code in new.items() if old.get(name) != code)


def item_name(nodeid: str) -> str:
    """`tests/t.py::TestX::test_y[3]` -> `TestX.test_y`, as `test_functions` names it."""
    return ".".join(nodeid.split("[", 1)[0].split("::")[1:])
