"""The production-diff scan (`andgate.check.production.scan`): each construct is found
with its file and line, the near-misses real projects have are not, and base's
allow-list is honoured. Pure: no git, no pytest processes."""

from __future__ import annotations

import ast
import textwrap

import pytest

from andgate.check.production.common import FileChange, ScanFinding
from andgate.check.production.scan import scan_production
from andgate.errors import ManifestError
from andgate.records import Construct
from andgate.trust.manifest import parse_manifest
from andgate.trust.paths import is_gitattributes
from harness import MANIFEST

C = Construct
STDLIB_AND_INSTALLED = frozenset({"statistics", "json", "os", "yaml"})
CORE = "src/pkg/core.py"


def src(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def scan(
    new: str | bytes | None,
    old: str | bytes | None = None,
    *,
    path: str = CORE,
    old_path: str | None = None,
    packages: frozenset[str] = frozenset({"pkg"}),
    allow: dict[str, frozenset[Construct]] | None = None,
) -> list[ScanFinding]:
    new_bytes = src(new) if isinstance(new, str) else new
    old_bytes = src(old) if isinstance(old, str) else old
    change = FileChange(path, old_bytes, new_bytes, old_path)
    return scan_production(
        [change], shadowed=STDLIB_AND_INSTALLED, project_packages=packages, allow=allow or {}
    )


def found(findings: list[ScanFinding]) -> set[tuple[str, int | None, Construct]]:
    return {(f.path, f.line, f.construct) for f in findings}


def assert_only(findings: list[ScanFinding], *expected: tuple[int | None, Construct]) -> None:
    assert {(f.line, f.construct) for f in findings} == set(expected), [f.message for f in findings]


# -- found: one per construct -------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("import os\nimport pytest\n", 2),
        ("import os\nimport _pytest.reports\n_pytest.reports.TestReport.passed = True\n", 2),
        ("from andgate import plugin\n", 1),
        ("from unittest import TestCase\n", 1),
        ("import unittest.case\n", 1),
        ("import sys\nif 'pytest' in sys.modules:\n    MODE = 1\n", 2),
        ("import sys\nHIT = sys.modules.get('tests.test_core') is not None\n", 2),
        ("import sys\nUNDER_TEST = sys.argv[0].endswith('pytest')\n", 2),
        ("import sys\ndef f():\n    return any('py.test' in a for a in sys.argv)\n", 3),
        ("import os\nif 'test' in os.getcwd():\n    pass\n", 2),
        ("from pathlib import Path\nT = Path.cwd().name.startswith('pytest-of')\n", 2),
        ("import importlib\nr = importlib.import_module('_pytest.runner')\n", 2),
        ("x = __import__('pytest')\n", 1),
    ],
)
def test_harness_reference_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.HARNESS_REFERENCE))


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("import os\n\ndef f():\n    return os.environ.get('PYTEST_CURRENT_TEST')\n", 4),
        ("import os\nGATED = 'ANDGATE_RUN' in os.environ\n", 2),
        ("import os\nX = [k for k in os.environ if k.startswith('PYTEST_')]\n", 2),
        ("import os\nX = any('pytest' in k.lower() for k in os.environ)\n", 2),
        ("from os import getenv\nX = getenv('_PYTEST_RAISE')\n", 2),
        ("import os\nENV = os.environ\ndef f():\n    return ENV.get('PYTEST_XDIST_WORKER')\n", 4),
    ],
)
def test_harness_environment_check_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.HARNESS_ENV))


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("import sys\n\ndef caller():\n    return sys._getframe(1).f_code.co_name\n", 4),
        ("import inspect\nS = inspect.stack()\n", 2),
        ("import inspect\ndef f():\n    return inspect.currentframe().f_back.f_locals\n", 3),
        ("import traceback\ndef f():\n    return traceback.extract_stack()\n", 3),
        ("def f(frame):\n    return frame.f_back\n", 2),
    ],
)
def test_stack_inspection_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.STACK_INSPECTION))


def test_stack_inspection_through_an_alias_is_found_at_the_import_and_the_use() -> None:
    code = "from sys import _getframe as gf\n\ndef f():\n    return gf(2)\n"
    assert_only(scan(code), (1, C.STACK_INSPECTION), (4, C.STACK_INSPECTION))


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("class A:\n    def __eq__(self, other):\n        return True\n", 2),
        ("class A:\n    def __ne__(self, other) -> bool:\n        return False\n", 2),
        ("class A:\n    def __hash__(self):\n        return 0\n", 2),
        ("class A:\n    def __bool__(self):\n        '''Always.'''\n        return True\n", 2),
        ("class A:\n    __eq__ = lambda self, other: True\n", 2),
        ("import pkg\npkg.Money.__eq__ = lambda self, other: True\n", 2),
    ],
)
def test_constant_comparison_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.CONSTANT_COMPARISON))


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("import sys\nsys.exit(0)\n", 2),
        ("import os\n\ndef bail():\n    os._exit(0)\n", 4),
        ("import atexit\n\ndef f():\n    pass\n\natexit.register(f)\n", 6),
        ("import atexit\n\n@atexit.register\ndef f():\n    pass\n", 3),
        ("try:\n    import missing\nexcept ImportError:\n    raise SystemExit(3)\n", 4),
        ("from atexit import register\n", 1),
    ],
)
def test_exit_at_import_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.EXIT_AT_IMPORT))


@pytest.mark.parametrize(
    ("path", "packages"),
    [
        ("statistics.py", frozenset()),  # the standard library's
        ("src/json/__init__.py", frozenset()),
        ("yaml.py", frozenset()),  # an installed distribution's
        ("pkg/__init__.py", frozenset({"pkg"})),  # a second copy of src/pkg
        ("pkg.py", frozenset({"pkg"})),
    ],
)
def test_new_shadowing_module_is_found(path: str, packages: frozenset[str]) -> None:
    findings = scan("X = 1\n", path=path, packages=packages)
    assert_only(findings, (None, C.SHADOWING_MODULE))
    assert findings[0].path == path


def test_a_file_renamed_to_a_shadowing_name_is_found() -> None:
    code = "def mean(xs):\n    return 0\n"
    findings = scan(code, code, path="statistics.py", old_path="src/pkg/stats.py")
    assert_only(findings, (None, C.SHADOWING_MODULE))


@pytest.mark.parametrize(
    "path", ["__init__.py", "sitecustomize.py", "src/usercustomize.py", "src/extra.pth"]
)
def test_implicitly_imported_file_is_found(path: str) -> None:
    assert_only(scan("import os\n", path=path), (None, C.IMPLICIT_IMPORT))


@pytest.mark.parametrize(
    ("path", "data"),
    [
        ("src/pkg/__pycache__/core.cpython-311.pyc", b"\xa7\r\r\n\x03\x00\x00\x00"),
        ("src/pkg/core.pyc", b"\xa7\r\r\n\x03\x00\x00\x00"),
        ("src/pkg/_speedups.cpython-311-x86_64-linux-gnu.so", b"\x7fELF"),
        ("src/pkg/data.bin", b"abc\x00def"),
    ],
)
def test_binary_file_is_found(path: str, data: bytes) -> None:
    assert_only(scan(data, path=path), (None, C.BINARY_FILE))


def test_images_are_not_binary_findings_unless_their_bytes_lie() -> None:
    # click's examples/imagepipe/*.jpg
    jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
    assert scan(jpeg, path="examples/imagepipe/example01.jpg") == []
    assert scan(b"\x89PNG\r\n\x1a\n\x00\x00", path="assets/logo.png") == []
    disguised = b"\xa7\r\r\n\x00\x00\x00\x00"  # bytecode named .png
    assert_only(scan(disguised, path="assets/logo.png"), (None, C.BINARY_FILE))


def test_gettext_catalogs_are_not_binary_findings_unless_their_bytes_lie() -> None:
    # humanize's locale/*/LC_MESSAGES/humanize.mo, compiled at install (generated_files)
    path = "src/humanize/locale/fr_FR/LC_MESSAGES/humanize.mo"
    assert scan(b"\xde\x12\x04\x95\x00\x00\x00\x00\x02\x00", path=path) == []
    assert scan(b"\x95\x04\x12\xde\x00\x00\x00\x00\x00\x02", path=path) == []  # big-endian
    pickled = b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}"  # a pickle named .mo
    assert_only(scan(pickled, path=path), (None, C.BINARY_FILE))
    catalog = b"\xde\x12\x04\x95\x00\x00\x00\x00"
    assert_only(scan(catalog, path="src/pkg/table.bin"), (None, C.BINARY_FILE))


@pytest.mark.parametrize(
    ("old", "new"), [(None, "* text eol=lf\n"), ("* text\n", "*.py filter=x\n"), ("* text\n", None)]
)
def test_gitattributes_change_is_found(old: str | None, new: str | None) -> None:
    assert_only(scan(new, old, path="src/.gitattributes"), (None, C.GITATTRIBUTES))


def test_is_gitattributes_at_any_depth() -> None:
    assert is_gitattributes(".gitattributes")
    assert is_gitattributes("tests/oracles/.gitattributes")
    assert not is_gitattributes("docs/gitattributes.md")
    assert not is_gitattributes(".gitattributes.bak")


def test_the_message_names_file_line_construct_and_code() -> None:
    (finding,) = scan("import sys\n\n\ndef f():\n    return sys._getframe(1)\n")
    assert finding.message == (
        "src/pkg/core.py:5: stack inspection (sys._getframe) in added code [stack_inspection]"
    )
    (whole_file,) = scan(b"\x00", path="src/pkg/x.pyc")
    assert whole_file.message == "src/pkg/x.pyc: binary file (bytecode (.pyc)) [binary_file]"


# -- not found: near-misses from real projects --------------------------------------------


NEAR_MISSES = {
    "docstring and comment mentioning the harness": '''
        """Run with pytest; PYTEST_CURRENT_TEST names the test. import pytest"""
        # import pytest
        def f():
            """Like sys._getframe() in inspect.stack() terms."""
            return 1
        ''',
    "TYPE_CHECKING imports": """
        from typing import TYPE_CHECKING
        import typing
        if TYPE_CHECKING:
            import pytest
        if typing.TYPE_CHECKING:
            from _pytest.fixtures import FixtureRequest
        """,
    "__main__ guard": """
        import sys
        def main():
            return 0
        if __name__ == "__main__":
            sys.exit(main())
        """,
    "exit inside a CLI function": """
        import sys
        def main(args):
            if not args:
                sys.exit(2)
            raise SystemExit(0)
        """,
    "unittest.mock is a library": """
        from unittest import mock
        import unittest.mock
        from unittest.mock import patch
        """,
    "sys.modules, argv and environ without the harness": """
        import os, sys
        this = sys.modules[__name__]
        ARGS = sys.argv[1:]
        HOME = os.environ.get("HOME", "")
        prog = os.path.basename(sys.argv[0])
        here = os.path.relpath("src", os.getcwd())
        """,
    "comparison dunders that compare": """
        class Money:
            def __eq__(self, other):
                if not isinstance(other, Money):
                    return NotImplemented
                return self.cents == other.cents
            def __ne__(self, other):
                return not self == other
            def __hash__(self):
                return hash(self.cents)
            def __bool__(self):
                return bool(self.cents)
            def __lt__(self, other):
                if self.cents < other.cents:
                    return True
                return False
        class Unhashable:
            __hash__ = None
            __eq__ = object.__eq__
        """,
    "harness-looking words in ordinary strings": """
        import subprocess
        def run_tests(session):
            session.run("pytest", "-x", env={"COVERAGE": "1"})
            return subprocess.run(["python", "-m", "unittest"])
        """,
}


@pytest.mark.parametrize("code", NEAR_MISSES.values(), ids=NEAR_MISSES.keys())
def test_near_miss_is_not_found(code: str) -> None:
    assert scan(code) == []


def test_the_main_module_may_exit_at_module_level() -> None:
    code = "import sys\nfrom pkg.cli import main\nsys.exit(main())\n"
    assert scan(code, path="src/pkg/__main__.py") == []
    assert_only(scan(code, path="src/pkg/cli2.py"), (3, C.EXIT_AT_IMPORT))


BASE_WITH_GETFRAME = """
    import sys

    def caller():
        frame = sys._getframe(1)
        return frame.f_code.co_name

    class Sentinel:
        def __bool__(self):
            return False
    """


def test_a_construct_already_in_base_is_not_found_when_other_lines_change() -> None:
    head = BASE_WITH_GETFRAME.replace("co_name", "co_qualname") + "\n    X = 1\n"
    assert scan(head, BASE_WITH_GETFRAME) == []


def test_a_construct_already_in_base_is_not_found_when_its_function_moves() -> None:
    first, second = BASE_WITH_GETFRAME.split("\n    class Sentinel")
    head = "\n    import sys\n\n    class Sentinel" + second + first.replace("import sys", "")
    assert scan(head, BASE_WITH_GETFRAME) == []


def test_a_construct_from_base_copied_into_another_function_is_found() -> None:
    head = BASE_WITH_GETFRAME + "\n    def other():\n        return sys._getframe(2)\n"
    assert_only(scan(head, BASE_WITH_GETFRAME), (12, C.STACK_INSPECTION))


def test_a_construct_repeated_in_the_function_that_had_it_is_not_found() -> None:
    # click 8.0's `assert frame.f_back is not None` in a version_option that already read it
    base = "def f(frame):\n    return frame.f_back.f_globals\n"
    head = "def f(frame):\n    assert frame.f_back is not None\n    return frame.f_back.f_globals\n"
    assert scan(head, base) == []


def test_a_guard_removed_around_an_old_exit_is_found() -> None:
    base = "import sys\nif __name__ == '__main__':\n    sys.exit(1)\n"
    head = "import sys\nsys.exit(1)\n"
    assert_only(scan(head, base), (2, C.EXIT_AT_IMPORT))


@pytest.mark.parametrize(
    "guard", ["if __name__ == '__main__' or True:", "if not TYPE_CHECKING:", "if True:"]
)
def test_an_edited_guard_around_an_unchanged_line_is_found(guard: str) -> None:
    base = "import sys\nif __name__ == '__main__':\n    sys.exit(1)\n"
    head = f"import sys\n{guard}\n    sys.exit(1)\n"
    assert_only(scan(head, base), (3, C.EXIT_AT_IMPORT))
    base = "import sys\nif TYPE_CHECKING:\n    import pytest\n"
    head = f"import sys\n{guard}\n    import pytest\n"
    assert_only(scan(head, base), (3, C.HARNESS_REFERENCE))


def test_a_file_renamed_unchanged_is_not_found() -> None:
    code = "import sys\nFRAME = sys._getframe(0)\n"
    assert scan(code, code, path="src/pkg/new_name.py", old_path="src/pkg/old_name.py") == []


@pytest.mark.parametrize(
    ("path", "old_path"),
    [
        ("src/pkg/statistics.py", None),  # inside the package: no shadowing
        ("src/pkg/testing.py", None),  # click.testing: a test-helper name, production code
        ("src/pkg/conftest_utils.py", None),
        ("src/pkg/sitecustomize_docs.py", None),
        ("src/pkg/sub/__init__.py", None),  # not the repository root
        ("noxfile.py", None),
        ("src/pkg/__init__.py", "pkg/__init__.py"),  # moving to a src layout
    ],
)
def test_new_files_that_are_not_shadowing_or_implicit(path: str, old_path: str | None) -> None:
    old = "X = 1\n" if old_path else None
    assert scan("X = 1\n", old, path=path, old_path=old_path) == []


def test_a_package_moved_to_src_is_not_a_second_copy() -> None:
    moves = [
        FileChange("src/pkg/__init__.py", None, b"X = 1\n"),
        FileChange("pkg/__init__.py", b"X = 1\n", None),
    ]
    kwargs = {"shadowed": frozenset(), "project_packages": frozenset({"pkg"})}
    assert scan_production(moves, **kwargs) == []
    assert found(scan_production(moves[:1], **kwargs)) == {
        ("src/pkg/__init__.py", None, C.SHADOWING_MODULE)
    }


def test_text_files_mentioning_the_harness_are_not_scanned_as_code() -> None:
    workflow = "env:\n  PYTEST_ADDOPTS: -x\nrun: python -m pytest\n"
    assert scan(workflow, path=".github/workflows/ci.yml") == []
    assert scan("[tool.ruff]\nsrc = ['pytest']\n", path="pyproject.toml") == []


def test_deleted_files_are_not_found() -> None:
    assert scan(None, "import pytest\n") == []
    assert scan(None, b"\x00", path="src/pkg/x.pyc") == []


# -- the allow-list -------------------------------------------------------------------------


def test_an_allowed_construct_is_not_found_under_its_glob_but_is_elsewhere() -> None:
    code = "import pytest\nimport sys\nF = sys._getframe(0)\n"
    allow = {"src/myplugin/**": frozenset({C.HARNESS_REFERENCE})}
    assert_only(scan(code, path="src/myplugin/plugin.py", allow=allow), (3, C.STACK_INSPECTION))
    assert_only(
        scan(code, path=CORE, allow=allow), (1, C.HARNESS_REFERENCE), (3, C.STACK_INSPECTION)
    )


def test_the_allow_list_uses_gitignore_globs() -> None:
    allow = {"*.pyc": frozenset({C.BINARY_FILE})}
    assert scan(b"\x00", path="src/pkg/deep/x.pyc", allow=allow) == []


# -- a file that does not parse: patterns over its added lines -------------------------------


def test_bytes_fallback_finds_constructs_in_a_file_that_does_not_parse() -> None:
    code = """
        import pytest
        def f(:
            return sys._getframe(1)
        # sys._getframe(1) and os._exit(0) used to be here
        def __eq__(self, other): return True
        if os.environ.get("ANDGATE_RUN"): os._exit(0)
        """
    assert_only(
        scan(code),
        (1, C.HARNESS_REFERENCE),
        (3, C.STACK_INSPECTION),
        (5, C.CONSTANT_COMPARISON),
        (6, C.HARNESS_ENV),
        (6, C.EXIT_AT_IMPORT),
    )


def test_bytes_fallback_counts_only_added_lines() -> None:
    base = "import pytest\ndef f(:\n    pass\n"
    head = base + "x = 1\nclass A:\n    def __hash__(self):\n        return 1\n"
    assert_only(scan(head, base), (6, C.CONSTANT_COMPARISON))


# -- the manifest's production_scan ---------------------------------------------------------


def manifest_with(extra: str):  # type: ignore[no-untyped-def]
    return parse_manifest(MANIFEST + "\n" + extra + "\n", "tests/trust_manifest.yaml")


def test_manifest_production_scan_defaults_to_an_empty_allow_list() -> None:
    assert dict(manifest_with("").production_scan_allow) == {}
    assert dict(manifest_with("production_scan: {}").production_scan_allow) == {}


def test_manifest_production_scan_allow_is_read() -> None:
    manifest = manifest_with(
        'production_scan:\n  allow:\n    "src/myplugin/**": [harness_reference, stack_inspection]'
    )
    assert dict(manifest.production_scan_allow) == {
        "src/myplugin/**": frozenset({C.HARNESS_REFERENCE, C.STACK_INSPECTION})
    }


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "production_scan: {allow: {'src/**': [harness]}}",
            r"production_scan\.allow\['src/\*\*'\]: unknown construct 'harness'; "
            r"valid names: harness_reference, harness_env, stack_inspection, ",
        ),
        ("production_scan: {alow: {}}", r"unknown key 'alow' under production_scan"),
        ("production_scan: {allow: [x]}", r"production_scan\.allow must map path globs"),
        (
            "production_scan: {allow: {'src/**': harness_reference}}",
            r"production_scan\.allow\['src/\*\*'\] must be a list",
        ),
        ("production_scan: {allow: {'/abs/**': []}}", r"must be relative to the repository root"),
        ("production_scan: [allow]", r"production_scan must be a mapping"),
    ],
)
def test_manifest_production_scan_is_validated_strictly(extra: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message) as info:
        manifest_with(extra)
    assert "\n" not in str(info.value)


def test_installed_names_are_read_only_when_a_change_adds_a_top_level_module(monkeypatch):
    """Reading every distribution's metadata costs time before any test runs: an
    edit of an existing file never asks; a new top-level module asks once."""
    from importlib import metadata

    from andgate.check.production.phase import ShadowableNames

    calls = []

    def packages_distributions():
        calls.append(1)
        return {"requests": ["requests"]}

    monkeypatch.setattr(metadata, "packages_distributions", packages_distributions)
    names = ShadowableNames()
    edit = FileChange("pkg/core.py", b"X = 1\n", b"X = 2\n")
    assert list(scan_production([edit], shadowed=names, project_packages=frozenset())) == []
    assert calls == []
    added = [FileChange("requests.py", None, b"X = 1\n"), FileChange("json.py", None, b"")]
    found = scan_production(added, shadowed=names, project_packages=frozenset())
    assert [f.construct for f in found] == [Construct.SHADOWING_MODULE] * 2
    assert calls == [1]


NESTED_DEFINITIONS = """
import pytest
if True:
    def in_if(): pass
else:
    class InElse: pass
try:
    def in_try(): pass
except ImportError:
    def in_handler(): pass
else:
    def in_try_else(): pass
finally:
    def in_finally(): pass
with open(__file__):
    async def in_with(): pass
for _ in ():
    def in_for(): pass
while False:
    def in_while(): pass
match 1:
    case 1:
        def in_case(): pass
class Outer:
    @pytest.mark.parametrize("x", [1])
    def method(self, x):
        def inner(): pass
        lam = lambda: None
"""


def test_the_definition_walk_finds_what_ast_walk_finds_in_the_same_order() -> None:
    from andgate.check.production.hardcoded import Definition, _definitions

    tree = ast.parse(NESTED_DEFINITIONS)
    everything = [n.name for n in ast.walk(tree) if isinstance(n, Definition)]
    assert [n.name for n in _definitions(tree)] == everything
    assert len(everything) == 13
