"""Skips from code and oracle files base cannot collect, end to end (contract
section 4, outcome rules).

An oracle item skipped on head by `pytest.skip()` or a unittest skip runs again
on base: the same skip for the same reason there is ORACLE_SKIPPED (a warning),
anything else fails it with pytest's reason; a skip for a missing module always
fails it, unless the module is a standard-library one this Python was built
without and base skips the same way (six's `requires gdbm`). An oracle file base
cannot collect pins nothing (ORACLE_UNPINNED), a warning unless its items are
parametrised over production values.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from andgate.commands.sample import SampleRepo
from conftest import Sample
from harness import BASE_FILES, ONE_KNOWN_BAD
from harness import build_test_sample as build_sample
from stories import honest_fix

pytestmark = pytest.mark.slow

# Skips that hold on base too, for the same reason. The first names its own file's
# absolute path: each run's worktree differs, and the reason is compared normalised.
SAME_ON_BASE = """\
import sys
import unittest

import pytest

from minilib import mean


def test_needs_python_4():
    if sys.version_info < (4,):
        pytest.skip(f"requires Python 4 (see {__file__})")
    assert mean([2, 4]) == 3


class TestOnPython4(unittest.TestCase):
    @unittest.skipIf(sys.version_info < (4,), "unittest: requires Python 4")
    def test_mean(self):
        self.assertEqual(mean([2, 4]), 3)

    @unittest.skipUnless(sys.version_info >= (4,), "unittest: only on Python 4")
    def test_mean_again(self):
        self.assertEqual(mean([1, 3]), 2)
"""

# An oracle of a module the change is about to add: base cannot import it.
NEW_MODULE_ORACLE = """\
from minilib.newmod import double


def test_double():
    assert double(21) == 42
"""
NEW_MODULE = "def double(x):\n    return 2 * x\n"

# Skips head's production code turns on, and one for a missing module.
ONLY_ON_HEAD = """\
import unittest

import pytest

import minilib.mathx
from minilib import mean


def _head_says_skip():
    return getattr(minilib.mathx, "SKIP_ME", False)


def test_skipped_by_production():
    if _head_says_skip():
        pytest.skip("production asked for a skip")
    assert mean([1, 3]) == 2


def test_needs_a_missing_module():
    pytest.importorskip("andgate_test_no_such_module")


class TestSkipTest(unittest.TestCase):
    def test_skipped_by_production(self):
        if _head_says_skip():
            raise unittest.SkipTest("unittest: production asked for a skip")
        self.assertEqual(mean([2, 4]), 3)

    def test_needs_a_missing_module(self):
        try:
            import andgate_test_no_such_module  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("unittest: no such module") from None
"""

# An oracle parametrised over values production code computes, which base cannot
# import yet: head alone would decide its items.
FROM_PRODUCTION_ORACLE = """\
import pytest

from minilib.cases import CASES
from minilib import mean


@pytest.mark.parametrize("xs", CASES)
def test_mean_is_within_range(xs):
    assert min(xs) <= mean(xs) <= max(xs)
"""
CASES_MODULE = "CASES = [[1], [1, 2, 3]]\n"


def sample_with(tmp_path: Path, files: dict[str, str]) -> Sample:
    repo, base = build_sample(tmp_path / "sample", {**BASE_FILES, **files}, ONE_KNOWN_BAD)
    return Sample(repo, base, tmp_path)


def test_skips_that_hold_on_base_and_a_file_base_cannot_import_allow(tmp_path):
    """`pytest.skip()`, `skipIf` and `skipUnless` skipping on base too (the reason
    naming each worktree's own path) are warnings, and an oracle of a module the
    change adds pins nothing on base but runs and passes on head: allow."""
    sample = sample_with(
        tmp_path,
        {
            "tests/oracles/test_same_on_base.py": SAME_ON_BASE,
            "tests/oracles/test_new_module.py": NEW_MODULE_ORACLE,
        },
    )

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({"minilib/newmod.py": NEW_MODULE})

    run = sample.gate(sample.change(change))
    assert run.decision == "allow", run.payload["reasons"]
    warnings = {(w["code"], w["detail"].split(" ", 1)[0]) for w in run.payload["warnings"]}
    assert warnings == {
        ("ORACLE_SKIPPED", "tests/oracles/test_same_on_base.py::test_needs_python_4"),
        ("ORACLE_SKIPPED", "tests/oracles/test_same_on_base.py::TestOnPython4::test_mean"),
        ("ORACLE_SKIPPED", "tests/oracles/test_same_on_base.py::TestOnPython4::test_mean_again"),
        ("ORACLE_UNPINNED", "tests/oracles/test_new_module.py:"),
    }
    skipped = [w["detail"] for w in run.payload["warnings"] if w["code"] == "ORACLE_SKIPPED"]
    assert any("unittest: requires Python 4 (skipped on base too)" in d for d in skipped)
    (unpinned,) = [w["detail"] for w in run.payload["warnings"] if w["code"] == "ORACLE_UNPINNED"]
    assert "No module named 'minilib.newmod'" in unpinned, unpinned
    outcomes = {i["nodeid"]: i["outcome"] for i in run.artifact("trust_inventory.json")["items"]}
    assert outcomes["tests/oracles/test_new_module.py::test_double"] == "passed"


def test_skips_only_on_head_a_missing_module_and_an_unpinned_oracle_from_production_block(
    tmp_path,
):
    """A `pytest.skip()` and a `SkipTest` that only head's production code turns on
    fail with pytest's reason, an `importorskip` and a `SkipTest` raised for an
    ImportError fail although base skips them too,
    and an oracle file base cannot import whose parameters come from production
    code blocks as ORACLE_UNPINNED."""
    sample = sample_with(
        tmp_path,
        {
            "tests/oracles/test_only_on_head.py": ONLY_ON_HEAD,
            "tests/oracles/test_from_production.py": FROM_PRODUCTION_ORACLE,
        },
    )

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({"minilib/cases.py": CASES_MODULE})
        target = repo.path / "minilib/mathx.py"
        target.write_text(target.read_text() + "\nSKIP_ME = True\n")

    run = sample.gate(sample.change(change))
    assert run.decision == "block"
    assert set(run.codes) == {"ORACLE_FAILED", "ORACLE_UNPINNED"}, run.payload["reasons"]
    assert sorted(run.details("ORACLE_FAILED")) == [
        "tests/oracles/test_only_on_head.py::TestSkipTest::test_needs_a_missing_module skipped: "
        "unittest: no such module (a skip for a missing module always fails an oracle)",
        "tests/oracles/test_only_on_head.py::TestSkipTest::test_skipped_by_production skipped: "
        "unittest: production asked for a skip (not skipped on base: passed)",
        "tests/oracles/test_only_on_head.py::test_needs_a_missing_module skipped: "
        "could not import 'andgate_test_no_such_module': No module named "
        "'andgate_test_no_such_module' (a skip for a missing module always fails an oracle)",
        "tests/oracles/test_only_on_head.py::test_skipped_by_production skipped: "
        "production asked for a skip (not skipped on base: passed)",
    ]
    (unpinned,) = run.details("ORACLE_UNPINNED")
    assert unpinned.startswith("tests/oracles/test_from_production.py: base could not collect")
    assert "No module named 'minilib.cases'" in unpinned
    assert "ORACLE_FROM_PRODUCTION" in unpinned
    assert not [w for w in run.payload["warnings"] if w["code"] == "ORACLE_SKIPPED"]
    assert run.payload["bits"]["oracle_ok"] is False


# -- humanize's shape: a file base cannot collect, skips for files the build did not make -------


# Like humanize's i18n tests: translation catalogs that only a build step makes, on no
# side of this check, so the same items skip with the same reason on base and head. The
# catalog's name comes from production code: the control changes it on head alone.
CATALOG_ORACLE = """\
import pathlib

import pytest

import minilib.mathx
from minilib import mean

CATALOG = getattr(minilib.mathx, "CATALOG", "lv.mo")


def _translations():
    path = pathlib.Path(minilib.mathx.__file__).parent / "locale" / CATALOG
    if not path.exists():
        pytest.skip(f"Generate {CATALOG} with scripts/generate-translation-binaries.sh")
    return path


@pytest.mark.parametrize("xs", [[1, 3], [2, 4]])
def test_mean_in_latvian(xs):
    assert _translations() and mean(xs) == sum(xs) / 2


def test_mean_in_russian():
    _translations()
"""

# An oracle of a module the change adds (base cannot collect the file), one of whose
# items skips on head: the rerun on base must not ask pytest for it.
NEW_MODULE_SKIPPING = (
    NEW_MODULE_ORACLE
    + """

def test_double_in_latvian():
    import pytest

    pytest.skip("Generate lv.mo with scripts/generate-translation-binaries.sh")
"""
)

CATALOG_IDS = (
    "tests/oracles/test_catalogs.py::test_mean_in_latvian[xs0]",
    "tests/oracles/test_catalogs.py::test_mean_in_latvian[xs1]",
    "tests/oracles/test_catalogs.py::test_mean_in_russian",
)


def humanize_shaped(tmp_path: Path) -> Sample:
    return sample_with(
        tmp_path,
        {
            "tests/oracles/test_catalogs.py": CATALOG_ORACLE,
            "tests/oracles/test_new_module.py": NEW_MODULE_SKIPPING,
        },
    )


def test_a_file_base_cannot_collect_is_no_gate_error_and_the_same_skips_are_skipped(tmp_path):
    """humanize (issue 44): the rerun on base asked pytest for ids in a file base could
    not collect ("found no collectors", GATE_ERROR) and every skip failed. Now the rerun
    asks only for what base collected: the skips that hold on base are ORACLE_SKIPPED,
    and the item base could not collect fails as not compared, saying why."""
    sample = humanize_shaped(tmp_path)

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({"minilib/newmod.py": NEW_MODULE})

    run = sample.gate(sample.change(change))
    assert run.codes == ["ORACLE_FAILED"], run.payload["reasons"]
    assert run.details("ORACLE_FAILED") == [
        "tests/oracles/test_new_module.py::test_double_in_latvian skipped: Generate lv.mo with "
        "scripts/generate-translation-binaries.sh (could not compare: base could not collect "
        "tests/oracles/test_new_module.py: ModuleNotFoundError: No module named 'minilib.newmod')"
    ]
    skipped = sorted(w["detail"] for w in run.payload["warnings"] if w["code"] == "ORACLE_SKIPPED")
    assert skipped == [
        f"{nodeid} skipped: Generate lv.mo with scripts/generate-translation-binaries.sh "
        "(skipped on base too)"
        for nodeid in CATALOG_IDS
    ]
    assert {w["code"] for w in run.payload["warnings"]} == {"ORACLE_SKIPPED", "ORACLE_UNPINNED"}
    outcomes = {i["nodeid"]: i["outcome"] for i in run.artifact("trust_inventory.json")["items"]}
    assert outcomes["tests/oracles/test_new_module.py::test_double"] == "passed"


def test_a_skip_whose_reason_production_changed_on_head_fails(tmp_path):
    """The control: head's production code names another catalog, so the same items
    skip on head for another reason than on base: not the same skip, a failure."""
    sample = humanize_shaped(tmp_path)

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({"minilib/newmod.py": NEW_MODULE})
        target = repo.path / "minilib/mathx.py"
        target.write_text(target.read_text() + '\nCATALOG = "ru.mo"\n')

    run = sample.gate(sample.change(change))
    assert set(run.codes) == {"ORACLE_FAILED"}, run.payload["reasons"]
    failed = sorted(run.details("ORACLE_FAILED"))
    assert failed[:3] == [
        f"{nodeid} skipped: Generate ru.mo with scripts/generate-translation-binaries.sh (on "
        "base it skipped for another reason: Generate lv.mo with "
        "scripts/generate-translation-binaries.sh)"
        for nodeid in CATALOG_IDS
    ]
    assert "could not compare" in failed[3]


# -- a standard-library module this Python was built without ---------------------------


def stdlib_module_missing_here() -> str:
    """A module of the standard library that this interpreter lacks: a C extension
    left out of its build (gdbm, ndbm, tkinter), or another platform's (winreg)."""
    candidates = ("_gdbm", "_dbm", "_tkinter", "_lzma", "_bz2", "_curses", "winreg", "msvcrt")
    for name in candidates:
        if name in sys.stdlib_module_names and importlib.util.find_spec(name) is None:
            return name
    raise AssertionError(f"this Python has every one of {candidates}")


# six's shape: production code imports a standard-library module lazily, and the
# oracle skips when that raises ImportError (six.moves.dbm_gnu, "requires gdbm").
COMPAT = """\
import importlib

OPTIONAL = {"dbm": "json", "gdbm": "{missing}"}


def load(what):
    return importlib.import_module(OPTIONAL[what])
"""

COMPAT_ORACLE = """\
import pytest

from minilib import compat


@pytest.mark.parametrize("what", ["dbm", "gdbm"])
def test_optional_module_loads(what):
    try:
        module = compat.load(what)
    except ImportError:
        pytest.skip(f"requires {what}")
    assert module.__name__
"""


def test_a_standard_library_module_missing_on_base_too_is_a_platform_skip(tmp_path):
    """A `pytest.skip()` raised for an ImportError of a standard-library module this
    Python lacks, the same on base: ORACLE_SKIPPED, and the change is allowed."""
    missing = stdlib_module_missing_here()
    sample = sample_with(
        tmp_path,
        {
            "minilib/compat.py": COMPAT.replace("{missing}", missing),
            "tests/oracles/test_compat.py": COMPAT_ORACLE,
        },
    )
    run = sample.gate(sample.change(honest_fix))
    assert run.decision == "allow", run.payload["reasons"]
    assert [w["detail"] for w in run.payload["warnings"]] == [
        "tests/oracles/test_compat.py::test_optional_module_loads[gdbm] skipped: requires gdbm "
        f"(the standard-library module {missing} is missing from this Python; skipped on base "
        "too)"
    ]


def test_a_missing_module_the_change_controls_still_fails(tmp_path):
    """The same skip for a module the change chose: a standard-library one this Python
    lacks that base did not import (the change makes the oracle skip), and an
    uninstalled third-party one that base imports too."""
    missing = stdlib_module_missing_here()
    sample = sample_with(
        tmp_path,
        {
            "minilib/compat.py": COMPAT.replace("{missing}", "andgate_test_no_such_module"),
            "tests/oracles/test_compat.py": COMPAT_ORACLE,
        },
    )

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.edit("minilib/compat.py", '"dbm": "json"', f'"dbm": "{missing}"')

    run = sample.gate(sample.change(change))
    assert run.decision == "block"
    assert sorted(run.details("ORACLE_FAILED")) == [
        "tests/oracles/test_compat.py::test_optional_module_loads[dbm] skipped: requires dbm "
        "(not skipped on base: passed)",
        "tests/oracles/test_compat.py::test_optional_module_loads[gdbm] skipped: requires gdbm "
        "(a skip for a missing module always fails an oracle)",
    ]
    assert not [w for w in run.payload["warnings"] if w["code"] == "ORACLE_SKIPPED"]
