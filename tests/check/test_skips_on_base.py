"""Skips from code and oracle files base cannot collect, end to end (contract
section 4, outcome rules).

An oracle item skipped on head by `pytest.skip()` or a unittest skip runs again
on base: the same skip for the same reason there is ORACLE_SKIPPED (a warning),
anything else fails it with pytest's reason; a skip for a missing module always
fails it. An oracle file base cannot collect pins nothing (ORACLE_UNPINNED), a
warning unless its items are parametrised over production values.
"""

from __future__ import annotations

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
