"""The module names base's test side provides (contract section 4, step 4): what a
trusted run must import from the test side, and what the production scan can read to
find a change's file that takes one."""

from __future__ import annotations

from andgate.trust import paths, test_names

SIDE = paths.TestSide(folders=("tests",))


def names(
    files: list[str], roots: tuple[str, ...] = (), side: paths.TestSide = SIDE
) -> dict[str, str]:
    return test_names.test_side_names(files, side.holds, import_roots=roots)


def test_a_test_folder_without_init_is_a_name_at_the_rootdir() -> None:
    found = names(["tests/support/approx.py", "tests/oracles/test_a.py", "pkg/__init__.py"])
    assert found["tests"] == "tests"
    assert "pkg" not in found


def test_the_folders_pytest_puts_first_provide_their_modules() -> None:
    """prepend mode inserts each test file's folder (no `__init__.py` in it): every
    module and folder there is importable by its own name."""
    found = names(["tests/conftest.py", "tests/support/approx.py", "tests/test_a.py"])
    assert found["support"] == "tests/support"
    assert found["conftest"] == "tests/conftest.py"
    assert found["test_a"] == "tests/test_a.py"


def test_a_helper_folder_is_no_import_root_by_itself() -> None:
    """pytest never puts a helper's folder on sys.path: `approx` alone is no name."""
    found = names(["tests/support/approx.py", "tests/oracles/test_a.py"])
    assert "approx" not in found
    assert "support" not in found  # tests/ holds no collected file: not a root either
    assert "oracles" not in found
    assert found["test_a"] == "tests/oracles/test_a.py"  # its folder is test_a.py's root


def test_pythonpath_folders_are_roots() -> None:
    found = names(["tests/support/approx.py", "tests/oracles/test_a.py"], roots=("tests",))
    assert found["support"] == "tests/support"


def test_tests_inside_packages_are_named_from_above_the_outermost_package() -> None:
    files = ["src/lib/__init__.py", "src/lib/core.py", "src/lib/tests/__init__.py"]
    files.append("src/lib/tests/test_core.py")
    found = names(files)
    assert found["lib.tests"] == "src/lib/tests"  # pytest imports it from src/
    assert "lib" not in found  # production's package: only its tests are the test side
    packages = {"src/lib", "src/lib/tests"}
    assert test_names.import_root("src/lib/tests/test_core.py", packages) == "src"


def test_root_files_of_the_test_side_and_outside_folders() -> None:
    found = names(["conftest.py", "test_root.py", "setup.py"], roots=("../elsewhere", "/abs"))
    assert found == {"conftest": "conftest.py", "test_root": "test_root.py"}


def test_a_folder_that_mixes_code_and_tests_names_only_its_test_files() -> None:
    side = paths.TestSide()  # test files by name only
    found = names(["pkg/__init__.py", "pkg/core.py", "pkg/test_core.py"], side=side)
    assert found == {"pkg.test_core": "pkg/test_core.py"}  # pytest imports it from the root


def test_folders_that_are_no_identifiers_cannot_be_imported_by_name() -> None:
    found = names(["my-tests/test_a.py", "tests/data-files/test_b.py"])
    assert "my-tests" not in found
    assert found["test_a"] == "my-tests/test_a.py"  # its own folder is a root
    assert found["tests"] == "tests"


def test_the_scan_finds_a_production_file_taking_a_test_side_name_by_its_import_names() -> None:
    """What the production scan's half of the check reads: the folders tests import
    from, and the names a production path has under them."""
    files = ["tests/support/approx.py", "tests/oracles/test_a.py", "tests/conftest.py"]
    roots = test_names.sys_path_roots(files, SIDE.holds, import_roots=("tests",))
    assert roots == {"", "tests", "tests/oracles"}
    assert test_names.importable_as("support/__init__.py", roots) == ["support"]
    assert test_names.importable_as("tests.py", roots) == ["tests"]
    assert test_names.importable_as("src/pkg/core.py", roots) == ["src.pkg.core"]
    taken = names(files, roots=("tests",))
    assert {n for n in test_names.importable_as("support/approx.py", roots) if n in taken} == set()
    assert "support" in taken  # its package is the name taken
