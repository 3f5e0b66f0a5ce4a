"""The scan's half of test-side integrity (issue 38, items 3 and 5): a production file
that takes a name base's test side provides, code that changes what an import loads,
and code that writes under the test side or into a bytecode cache, each found with its
file and line before any test runs; the near-misses honest projects have are not.
Pure: no git, no pytest processes."""

from __future__ import annotations

import pytest

from andgate.check.production.common import FileChange, ScanFinding
from andgate.check.production.scan import scan_production
from andgate.records import Construct
from andgate.trust import test_names
from andgate.trust.paths import is_test_file
from test_scan import assert_only, scan

C = Construct

# base's tree: a helper folder without __init__.py, on `pythonpath = tests`
BASE_TREE = [
    "minilib/__init__.py",
    "minilib/text.py",
    "tests/support/approx.py",
    "tests/oracles/test_text_oracle.py",
    "flatlib/__init__.py",
    "flatlib/tests/__init__.py",
    "flatlib/tests/test_itertoolz.py",
]
NAMES = test_names.test_side_names(BASE_TREE, is_test_file, import_roots=["tests"])
ROOTS = tuple(sorted(test_names.sys_path_roots(BASE_TREE, is_test_file, import_roots=["tests"])))


def scan_added(*paths: str, old_path: str | None = None) -> list[ScanFinding]:
    """Each path added by the change (or renamed to, from `old_path`)."""
    changes = [FileChange(p, b"X = 1\n" if old_path else None, b"X = 1\n", old_path) for p in paths]
    return scan_production(
        changes,
        shadowed=frozenset(),
        project_packages=frozenset({"minilib", "flatlib"}),
        test_names=NAMES,
        test_roots=ROOTS,
    )


def test_the_names_are_base_s_test_side_names() -> None:
    assert {"tests", "support", "flatlib.tests", "oracles"} <= set(NAMES)
    assert NAMES["support"] == "tests/support"


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("tests.py", "tests"),  # a module file beats the folder tests/
        ("support/__init__.py", "support"),  # a regular package beats tests/support
        ("support/approx.py", "support"),  # a folder of its own, first on sys.path
        ("flatlib/tests.py", "flatlib.tests"),
        ("oracles.py", "oracles"),  # the oracle folder's own import root is tests/
    ],
)
def test_a_production_file_taking_a_test_side_name_is_found(path: str, name: str) -> None:
    findings = scan_added(path)
    assert_only(findings, (None, C.SHADOWING_MODULE))
    assert findings[0].message == (
        f"{path}: module shadowing (takes the test-side name {name} ({NAMES[name]}))"
        " [shadowing_module]"
    )


def test_a_file_renamed_onto_a_test_side_name_is_found() -> None:
    assert_only(scan_added("tests.py", old_path="minilib/helpers.py"), (None, C.SHADOWING_MODULE))


@pytest.mark.parametrize(
    "path",
    [
        "minilib/support.py",  # inside the package: minilib.support
        "minilib/tests.py",  # minilib has no test folder
        "support_tools/__init__.py",
        "flatlib/testing_helpers.py",
        "support.txt",  # not a module
    ],
)
def test_a_file_beside_the_test_side_names_is_not_found(path: str) -> None:
    assert scan_added(path) == []


def test_a_production_file_base_already_had_is_not_found() -> None:
    change = FileChange("tests.py", b"X = 1\n", b"X = 2\n")
    found = scan_production(
        [change],
        shadowed=frozenset(),
        project_packages=frozenset(),
        test_names=NAMES,
        test_roots=ROOTS,
    )
    assert found == []


# -- code that changes what an import loads -------------------------------------------------


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("import os\n__path__ = [os.path.join(os.path.dirname(__file__), 'helpers')]\n", 2),
        ("__path__.append('/elsewhere')\n", 1),
        ("import sys\nsys.meta_path.insert(0, Finder())\n", 2),
        ("import sys\n\ndef install():\n    sys.path_hooks.append(hook)\n", 4),
        ("import sys\nsys.meta_path += [Finder()]\n", 2),
        ("import sys\nsys.modules['support.approx'] = LAX\n", 2),
        ("import sys\nsys.modules[f'tests.{name}'] = LAX\n", 2),
        ("import sys\nsys.modules.update({'json': fake})\n", 2),
        ("import sys\nsys.modules.setdefault('support', fake)\n", 2),
    ],
)
def test_a_change_to_what_an_import_loads_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.IMPORT_MACHINERY))


@pytest.mark.parametrize(
    "code",
    [
        "__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n",
        "from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n",
        "class _LazyModule:\n    __path__ = []  # six: marked a package\n",
        "__path__: list[str]\n",
        # a package filing its own names (requests.packages), a computed key (lazy loaders)
        "import sys\nsys.modules['pkg.compat'] = compat\n",
        "import sys\nsys.modules[f'pkg.packages.{mod}'] = sys.modules[mod]\n",
        "import sys\n\ndef load(fullname, mod):\n    sys.modules[fullname] = mod\n",
        "import sys\nsys.modules[__name__] = Wrapper(sys.modules[__name__])\n",
        "import sys\nfor finder in sys.meta_path:\n    print(finder)\n",
        "import sys\nsys.path.insert(0, 'vendor')\n",
    ],
)
def test_honest_import_machinery_is_not_found(code: str) -> None:
    assert scan(code) == []


def test_filing_a_test_module_is_one_finding_not_a_harness_reference_too() -> None:
    assert_only(
        scan("import sys\nsys.modules['tests.support.approx'] = LAX\n"), (2, C.IMPORT_MACHINERY)
    )


# -- writes under the test side or into bytecode caches -------------------------------------

ORACLE = "ORACLE = Path(__file__).resolve().parents[1] / 'tests' / 'oracles' / 'test_oracle.py'\n"


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("from pathlib import Path\n" + ORACLE + "ORACLE.write_text('')\n", 3),
        (
            "from pathlib import Path\n" + ORACLE + "CACHE = ORACLE.parent / '__pycache__'\n"
            "def plant(name, data):\n    (CACHE / name).write_bytes(data)\n",
            5,
        ),
        (
            "import os\nHERE = os.path.dirname(__file__)\n"
            "with open(os.path.join(HERE, '..', 'tests', 'conftest.py'), 'a') as f:\n"
            "    f.write('')\n",
            3,
        ),
        ("def f():\n    open('tests/test_api.py', 'w').close()\n", 2),
        ("import os\nos.utime('tests/oracles/test_core.py', (0, 0))\n", 2),
        ("import os\nos.replace('rewritten.py', 'tests/test_core.py')\n", 2),
        ("import shutil\nshutil.copy('lax.py', 'tests/support/approx.py')\n", 2),
        (
            "import glob\nfor pyc in glob.glob('**/__pycache__/*.pyc', recursive=True):\n"
            "    open(pyc, 'r+b').write(b'')\n",
            3,
        ),
        (
            "from pathlib import Path\n\ndef neuter(root: Path):\n"
            "    for path in root.rglob('*.py'):\n        path.write_text('')\n",
            5,
        ),
        ("import py_compile\npy_compile.compile('pkg/core.py')\n", 2),
        ("import compileall\ncompileall.compile_dir('.')\n", 2),
    ],
)
def test_a_write_under_the_test_side_or_into_a_cache_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.TEST_SIDE_WRITE))


def test_a_cache_written_with_marshal_is_found_at_the_open_and_the_dump() -> None:
    code = (
        "import marshal\n\ndef f(code):\n    with open('core.cpython-311.pyc', 'wb') as out:\n"
        "        marshal.dump(code, out)\n"
    )
    assert_only(scan(code), (4, C.TEST_SIDE_WRITE), (5, C.TEST_SIDE_WRITE))


@pytest.mark.parametrize(
    ("code", "line"),
    [
        ("import importlib.util as u\nMAGIC = u.MAGIC_NUMBER\n", 2),
        (
            "from importlib.util import cache_from_source\n\ndef f(p):\n"
            "    return cache_from_source(p)\n",
            4,
        ),
        ("import importlib.util\nH = importlib.util.source_hash(b'')\n", 2),
        ("import sys\nT = [getattr(m, 'PYC_TAIL', None) for m in list(sys.modules.values())]\n", 2),
        ("import subprocess\nsubprocess.run(['git', 'update-index', '--skip-worktree', 'f'])\n", 2),
    ],
)
def test_what_forges_a_cache_or_hides_a_file_from_git_is_found(code: str, line: int) -> None:
    assert_only(scan(code), (line, C.TEST_SIDE_WRITE))


def test_a_script_that_hides_a_file_from_git_is_found() -> None:
    findings = scan(
        "#!/bin/sh\ngit update-index --assume-unchanged tests/test_a.py\n", path="scripts/setup.sh"
    )
    assert_only(findings, (2, C.TEST_SIDE_WRITE))


@pytest.mark.parametrize(
    "code",
    [
        # caches in the user's home or a temporary folder
        "import tempfile, os\nd = tempfile.mkdtemp()\n"
        "open(os.path.join(d, '__pycache__', 'x.pyc'), 'wb').close()\n",
        "from pathlib import Path\n"
        "(Path.home() / '.cache' / 'pkg' / 'tests.json').write_text('')\n",
        "import os\nroot = os.environ.get('XDG_CACHE_HOME', '~/.cache')\n"
        "open(os.path.join(root, 'pkg', 'x.pyc'), 'wb')\n",
        "import platformdirs\nfrom pathlib import Path\n"
        "(Path(platformdirs.user_cache_dir('pkg')) / '__pycache__').mkdir()\n",
        "import os\nopen(os.path.expanduser('~/.pkg/tests.txt'), 'w')\n",
        # reads, other folders, strings that are not paths
        "open('tests/data.json').read()\n",
        "from pathlib import Path\nT = (Path(__file__).parent / 'tests' / 'x.txt').read_text()\n",
        "from pathlib import Path\n"
        "(Path(__file__).parent / 'data' / 'cache.json').write_text('')\n",
        "def f(text):\n    return text.replace('tests/', '')\n",
        "def f(z):\n    return z.open('tests/data.txt')\n",
        "import zipfile\nDATA = zipfile.ZipFile('tests/fixtures.zip').open('data.txt').read()\n",
        "EXCLUDE = ['__pycache__', '*.pyc', 'tests']\n",
        "import glob\nfor path in glob.glob('docs/*.rst'):\n    open(path + '.bak', 'w')\n",
        "import shutil\nshutil.copy('tests/fixture.json', 'build/fixture.json')\n",
    ],
)
def test_honest_writes_and_reads_are_not_found(code: str) -> None:
    assert scan(code) == []


# -- pytest's hook marker, made anew ---------------------------------------------------------


def test_a_module_whose_only_hook_marker_is_made_with_pluggy_is_found() -> None:
    """No `pytest_` and no `hook` in the text: the plain walk must still read it."""
    code = (
        "import pluggy\n\nmark = pluggy.HookimplMarker('pytest')\n\n\n"
        "@mark(tryfirst=True)\ndef runtest_makereport(item, call):\n    return None\n"
    )
    assert "pytest_" not in code and "hook" not in code
    assert_only(scan(code), (3, C.PYTEST_PLUGIN))
