"""The tests mirror the package, so the mirror cannot drift.

Each test file sits in one folder under `tests/`: the folder of the stage it guards
(`check/`, `trust/`, ... : one per subpackage of `andgate`), `leaves/` (named after the
leaf module it guards: `test_verdict.py`, `test_verdict_properties.py`), `end_to_end/`
(the whole gate) or `meta/` (the repository itself). `tests/` itself holds only the
shared helpers and the data folders. There is no `__init__.py`: pytest imports each
test file by its basename, so basenames are unique, and a test module imports another
test module only from its own folder (the folder pytest puts on `sys.path` for it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import andgate

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = Path(andgate.__file__).parent
STAGES = frozenset(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
LEAVES = frozenset(p.stem for p in PACKAGE.glob("*.py") if not p.stem.startswith("__"))
FOLDERS = STAGES | {"leaves", "end_to_end", "meta"}
HELPERS = frozenset(
    {
        "conftest.py",
        "harness.py",
        "stories.py",
        "shapes.py",
        "fake_github.py",
        "verdict_facts.py",
        "flat.py",
    }
)
DATA = frozenset({"golden", "resources"})
SKIP = frozenset({"__pycache__"})


def in_folders() -> list[Path]:
    """Every entry of every folder of the mirror."""
    return sorted(
        p
        for folder in FOLDERS
        if (TESTS / folder).is_dir()
        for p in (TESTS / folder).iterdir()
        if p.name not in SKIP
    )


def test_the_tests_root_holds_only_helpers_data_and_the_mirrors_folders():
    strays = [
        p.name
        for p in TESTS.iterdir()
        if p.name not in SKIP
        and not (p.is_file() and p.name in HELPERS)
        and not (p.is_dir() and p.name in FOLDERS | DATA)
    ]
    assert not strays, (
        f"{strays} at tests/: a test file belongs in the folder of the stage it guards "
        f"({', '.join(sorted(FOLDERS))}); a helper shared by every folder is named in HELPERS"
    )


def test_every_stage_has_its_folder():
    assert STAGES, PACKAGE
    assert sorted(f for f in FOLDERS if not (TESTS / f).is_dir()) == []


def test_a_folder_holds_only_test_files():
    others = [
        str(p.relative_to(TESTS))
        for p in in_folders()
        if not (p.is_file() and p.name.startswith("test_") and p.suffix == ".py")
    ]
    assert not others, f"{others}: only test_*.py files (helpers live at tests/)"


def test_a_leaf_test_is_named_after_its_module():
    for path in (TESTS / "leaves").glob("test_*.py"):
        name = path.stem.removeprefix("test_")
        assert any(name == leaf or name.startswith(f"{leaf}_") for leaf in LEAVES), (
            f"leaves/{path.name} names no leaf module ({', '.join(sorted(LEAVES))})"
        )


def test_test_file_names_are_unique():
    seen: dict[str, str] = {name: "tests/" for name in HELPERS}
    for path in in_folders():
        assert path.name not in seen, f"{path.name} in {path.parent.name}/ and {seen[path.name]}"
        seen[path.name] = f"{path.parent.name}/"


def test_a_test_module_imports_test_modules_only_from_its_own_folder():
    for path in in_folders():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("test_"):
                    assert (path.parent / f"{name}.py").is_file(), (
                        f"{path.relative_to(TESTS)} imports {name} from another folder: "
                        f"move what both share to a helper at tests/"
                    )
