"""Real projects: the gate decides on head's code in the environment CI really has.

Each test is one defence of "Real projects I" (the installed project redirected
to the worktree, pytest-xdist and pytest-rerunfailures in the user's config,
sub-tests, CI credentials, the test side beyond `tests/`, config files planted
above the worktrees, platform skips) on a small sample project, and each was
checked the hard way: the defence removed, the test red, the defence restored.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from andgate.commands.sample import AGENT, SampleRepo
from conftest import Sample
from harness import BASE_FILES, VenvProject, pip_install, pip_uninstall
from harness import build_test_sample as build_sample
from stories import honest_fix

pytestmark = pytest.mark.slow

BROKEN_MEAN = ("return sum(xs) / len(xs)", "return sum(xs) / (len(xs) + 1)")
RERUNS_INI = "[pytest]\ntestpaths = tests\naddopts = --reruns 2\n"


def sample_with(tmp_path: Path, files: dict[str, str]) -> Sample:
    """The sample project with some base files replaced or added."""
    repo, base = build_sample(tmp_path / "sample", {**BASE_FILES, **files})
    return Sample(repo, base, tmp_path)


def break_mean(repo: SampleRepo) -> None:
    repo.edit("minilib/mathx.py", *BROKEN_MEAN)


# -- pytest-xdist ----------------------------------------------------------------------


XDIST_INI = "[pytest]\ntestpaths = tests\naddopts = -n 2\n"


# Rebinds clamp's code, so the oracles' own `clamp` is broken too, whenever this
# module is imported: clamp stops clamping (tests/test_misc.py's case still holds).
POISON = (
    "import minilib.mathx\n"
    "minilib.mathx.clamp.__code__ = (lambda x, lo, hi: x).__code__\n"
    "def test_poison():\n    assert True\n"
)


def test_xdist_in_the_users_config_gives_the_same_verdict(tmp_path, honest_run):
    """With `-n 2` in the user's config, a broken mean fails its oracle item alone
    and everything else decides as without xdist (the shared honest run): an
    untrusted module that breaks every clamp oracle at import time stays in the
    untrusted process, and both known-bad fixtures still bite."""
    xdist = sample_with(tmp_path, {"pytest.ini": XDIST_INI})

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        break_mean(repo)
        repo.write({"tests/test_poison.py": POISON})

    got = xdist.gate(xdist.change(change))
    assert got.codes == ["ORACLE_FAILED"], got.payload["reasons"]
    assert [d.split(" ", 1)[0] for d in got.details("ORACLE_FAILED")] == [
        "tests/oracles/test_math_oracle.py::test_mean"
    ]
    assert got.payload["bits"] == {**honest_run.payload["bits"], "oracle_ok": False}
    untrusted = honest_run.payload["counts"]["untrusted"] + 1
    assert got.payload["counts"] == {**honest_run.payload["counts"], "untrusted": untrusted}
    outcomes = {i["nodeid"]: i["outcome"] for i in got.artifact("trust_inventory.json")["items"]}
    assert outcomes["tests/test_poison.py::test_poison"] == "passed"


# -- pytest-rerunfailures ----------------------------------------------------------------


FIRST_CALL_BUG = (
    "def clamp(x, lo, hi):\n",
    "_CALLS = []\n\n\ndef clamp(x, lo, hi):\n    _CALLS.append(1)\n"
    "    if len(_CALLS) == 1:\n        return x + 1000\n",
)


FLAKY_AGENT_TEST = (
    "import pathlib\n\n"
    "def test_flaky(tmp_path_factory):\n"
    # The marker lives in this pytest session's own temp folder: it fails the first
    # attempt on every machine, never only where no earlier run left it behind.
    "    marker = tmp_path_factory.getbasetemp() / 'andgate-flaky-marker'\n"
    "    first = not marker.exists()\n"
    "    marker.touch()\n"
    "    assert not first\n"
)


def test_an_oracle_that_passes_only_on_rerun_did_not_pass_but_an_untrusted_one_did(tmp_path):
    """With `--reruns 2` in the user's config: an oracle item that fails first and
    passes on rerun is a failure; an untrusted test that does the same is a pass."""
    sample = sample_with(tmp_path, {"pytest.ini": RERUNS_INI})

    def change(repo: SampleRepo) -> None:
        repo.edit("minilib/mathx.py", *FIRST_CALL_BUG)
        repo.write({"tests/test_agent_flaky.py": FLAKY_AGENT_TEST})

    run = sample.gate(sample.change(change))
    assert run.decision == "block"
    details = run.details("ORACLE_FAILED")
    assert any("passed only on rerun" in d for d in details), details
    assert "ORACLE_NEUTRALIZED" not in run.codes
    assert "UNTRUSTED_FAILED" not in run.codes, run.details("UNTRUSTED_FAILED")
    assert "<flakyFailure" in run.artifact("oracle.xml")  # the failed attempt, for CI viewers
    items = {i["nodeid"]: i for i in run.artifact("trust_inventory.json")["items"]}
    flaky = items["tests/test_agent_flaky.py::test_flaky"]
    assert (flaky["class"], flaky["outcome"]) == ("untrusted", "passed only on rerun")


# -- sub-tests -------------------------------------------------------------------------------


SUBTEST_ORACLE = '''\
"""Human-owned oracle in unittest style: cases checked with subTest."""

import unittest

from minilib import mean


class MeanCases(unittest.TestCase):
    def test_means(self):
        for xs, want in (([1, 2, 3, 6], 3), ([1, 2], 1.5), ([5], 5)):
            with self.subTest(xs=xs):
                self.assertEqual(mean(xs), want)
'''


AGENT_SUBTESTS = (
    "import unittest\n\n"
    "class AgentCases(unittest.TestCase):\n"
    "    def test_cases(self):\n"
    "        for n in (1, 2):\n"
    "            with self.subTest(n=n):\n"
    "                self.assertEqual(n, 0)\n"
)


def test_a_failing_unittest_subtest_fails_its_item_oracle_or_untrusted(tmp_path):
    sample = sample_with(tmp_path, {"tests/oracles/test_subtests.py": SUBTEST_ORACLE})

    def change(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.write({"tests/test_agent_subtests.py": AGENT_SUBTESTS})

    run = sample.gate(sample.change(change))
    details = run.details("ORACLE_FAILED")
    assert any("test_subtests.py::MeanCases::test_means failed" in d for d in details), details
    untrusted = run.details("UNTRUSTED_FAILED")
    assert [d.split(" ", 1)[0] for d in untrusted] == [
        "tests/test_agent_subtests.py::AgentCases::test_cases"
    ]
    assert "failed" in untrusted[0]


def test_a_subtest_failure_under_a_known_bad_fixture_is_a_kill(tmp_path):
    """The only oracle is the subTest one: the fixture that breaks mean must bite."""
    files = {k: v for k, v in BASE_FILES.items() if not k.startswith("tests/oracles/test_")}
    files["tests/oracles/test_subtests.py"] = SUBTEST_ORACLE
    repo, base = build_sample(tmp_path / "sample", files)
    repo.run("checkout", "-q", "--detach", base)
    patch = repo.diff_of([("minilib/mathx.py", *BROKEN_MEAN)])
    repo.write({"tests/oracles/known_bad/kb_chunk_drops_tail.patch": patch})
    repo.delete("tests/oracles/known_bad/kb_clamp_ignores_lo.patch")
    base = repo.commit("oracle by subTest only")
    sample = Sample(repo, base, tmp_path)
    run = sample.gate(sample.change(honest_fix))
    assert run.decision == "allow", run.payload["reasons"]


# -- CI credentials --------------------------------------------------------------------------


GATE_PROBE = (
    "import os\nimport sys\n\n"
    "def test_the_gate_is_not_visible():\n"
    "    assert not [n for n in os.environ if n.startswith('ANDGATE_')]\n"
    "    assert not [a for a in sys.argv if 'andgate' in a]\n"
    "    if os.path.exists('/proc/self/cmdline'):\n"
    "        with open('/proc/self/cmdline', 'rb') as fh:\n"
    "            assert b'--andgate-run' not in fh.read()\n"
)


def test_ci_credentials_scrub_env_names_and_the_gate_never_reach_test_code(tmp_path, monkeypatch):
    """No CI credential or scrub_env name, no ANDGATE_* variable, no andgate flag
    in sys.argv or /proc/self/cmdline."""
    secrets = {
        "GITHUB_TOKEN": "ghs_fake",
        "GH_TOKEN": "ghs_fake2",
        "ACTIONS_RUNTIME_TOKEN": "x",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "http://127.0.0.1:9/",
        "INPUT_TOKEN": "y",
        "ANDGATE_APPROVED_BY": "mallory",
        "DEPLOY_KEY_PROD": "z",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    manifest = BASE_FILES["tests/trust_manifest.yaml"] + 'scrub_env: ["DEPLOY_KEY_*"]\n'
    sample = sample_with(tmp_path, {"tests/trust_manifest.yaml": manifest})
    probe = (
        "import os\n\n"
        "def test_no_credentials():\n"
        f"    assert not [n for n in {sorted(secrets)!r} if n in os.environ]\n"
    )

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({"tests/test_agent_env.py": probe, "tests/test_agent_probe.py": GATE_PROBE})

    run = sample.gate(sample.change(change))
    assert run.decision == "allow", run.payload["reasons"]
    assert run.payload["counts"]["untrusted"] == 4  # both probes ran, and passed


# -- the test side beyond tests/ ---------------------------------------------------------------


HELPER_ORACLE = """\
from minilib import mean
from testing.cases import MEAN_CASES


def test_mean_cases():
    for xs, want in MEAN_CASES:
        assert mean(xs) == want
"""

DATA_ORACLE = """\
import json
import pathlib

from minilib import mean

CASES = json.loads((pathlib.Path(__file__).parents[2] / "checks" / "cases.json").read_text())


def test_mean_cases():
    for xs, want in CASES:
        assert mean(xs) == want
"""


def test_the_test_side_beyond_tests_comes_from_base_and_code_stays_production(tmp_path):
    """Oracle helpers in `testing/` (by name) and in `support/` (test_support_globs),
    and `checks/` (in base's testpaths, holding only tests and data) come from base:
    emptying their cases does not empty the oracles. `minilib` is in testpaths too
    (doctests), and must not make head's code base's: the broken mean fails."""
    manifest = BASE_FILES["tests/trust_manifest.yaml"] + 'test_support_globs: ["support/**"]\n'
    sample = sample_with(
        tmp_path,
        {
            "tests/trust_manifest.yaml": manifest,
            "pytest.ini": "[pytest]\ntestpaths = tests checks minilib\n",
            "testing/__init__.py": "",
            "testing/cases.py": "MEAN_CASES = [([1, 2, 3, 6], 3), ([1, 2], 1.5)]\n",
            "support/__init__.py": "",
            "support/cases.py": "MEAN_CASES = [([1, 2, 3, 6], 3), ([1, 2], 1.5)]\n",
            "tests/oracles/test_helper_oracle.py": HELPER_ORACLE,
            "tests/oracles/test_support_oracle.py": HELPER_ORACLE.replace("testing", "support"),
            "checks/test_more.py": "def test_more():\n    assert True\n",
            "checks/cases.json": "[[[1, 2, 3, 6], 3]]\n",
            "tests/oracles/test_data_oracle.py": DATA_ORACLE,
        },
    )

    def weaken(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.write(
            {
                "testing/cases.py": "MEAN_CASES = []\n",
                "support/cases.py": "MEAN_CASES = []\n",
                "checks/cases.json": "[]\n",
            }
        )

    run = sample.gate(sample.change(weaken))
    failed = {d.split(" ", 1)[0] for d in run.details("ORACLE_FAILED") if " failed" in d}
    assert {
        "tests/oracles/test_helper_oracle.py::test_mean_cases",
        "tests/oracles/test_support_oracle.py::test_mean_cases",
        "tests/oracles/test_data_oracle.py::test_mean_cases",
        "tests/oracles/test_math_oracle.py::test_mean",
    } <= failed, run.payload["reasons"]


# -- nothing outside the worktree configures a run ------------------------------------------------


PLANTED_CONFTEST = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""


def test_config_and_conftest_planted_above_the_worktrees_are_ignored(tmp_path, monkeypatch):
    """A test of an earlier check left `$TMPDIR/pytest.ini` and a conftest.py that
    turns every report into a pass; the sample has no root config of its own,
    so pytest would walk up to them."""
    files = {k: v for k, v in BASE_FILES.items() if k != "pytest.ini"}
    repo, base = build_sample(tmp_path / "sample", files)
    sample = Sample(repo, base, tmp_path)
    planted = tmp_path / "shared-tmp"
    planted.mkdir()
    (planted / "pytest.ini").write_text("[pytest]\n")
    (planted / "conftest.py").write_text(PLANTED_CONFTEST)
    monkeypatch.setattr(tempfile, "tempdir", str(planted))
    run = sample.gate(sample.change(break_mean))
    assert "tests/oracles/test_math_oracle.py::test_mean failed" in " ".join(
        run.details("ORACLE_FAILED")
    ), run.payload["reasons"]


# -- platform skips --------------------------------------------------------------------------------


SKIP_ORACLE = """\
import sys

import pytest

import minilib.mathx
from minilib import mean


@pytest.mark.skipif(sys.version_info < (4, 0), reason="requires Python 4")
def test_mean_on_python_4():
    assert mean([2, 4]) == 3


@pytest.mark.skipif(getattr(minilib.mathx, "FAST", False), reason="fast path has its own test")
def test_mean_slow_path():
    assert mean([1, 2, 3, 6]) == 3
"""
LATER_ORACLE = "import pytest\n\ndef test_later():\n    pytest.skip('not ready')\n"
MANY_ORACLE = "\n".join(f"def test_case_{i}():\n    assert False, 'case {i}'\n" for i in range(12))


def test_skips_of_oracles_and_a_summary_of_many_reasons(tmp_path):
    """A platform skip that holds on base is a warning, and so is an imperative skip
    that base skips too for the same reason (tests/check/test_skips_on_base.py has the
    rest of those); a skip mark that production code turns on fails the oracle with
    its reason; the summary groups more than ten reasons of one code."""
    sample = sample_with(
        tmp_path,
        {
            "tests/oracles/test_skips.py": SKIP_ORACLE,
            "tests/oracles/test_later.py": LATER_ORACLE,
            "tests/oracles/test_many.py": MANY_ORACLE,
        },
    )

    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        target = repo.path / "minilib/mathx.py"
        target.write_text(target.read_text() + "\nFAST = True\n")

    run = sample.gate(sample.change(change))
    assert run.decision == "block"
    assert set(run.codes) == {"ORACLE_FAILED"}, run.payload["reasons"]
    failed = run.details("ORACLE_FAILED")
    many = [d for d in failed if d.startswith("tests/oracles/test_many.py::test_case_")]
    assert len(many) == 12
    assert sorted(set(failed) - set(many)) == [
        "tests/oracles/test_skips.py::test_mean_slow_path skipped: fast path has its own test",
    ]
    warnings = [w["detail"] for w in run.payload["warnings"] if w["code"] == "ORACLE_SKIPPED"]
    assert warnings == [
        "tests/oracles/test_skips.py::test_mean_on_python_4 skipped: requires Python 4 "
        "(skipped on base too)",
        "tests/oracles/test_later.py::test_later skipped: not ready (skipped on base too)",
    ]
    summary = run.artifact("summary.md")
    assert "- **ORACLE_FAILED**: 13 findings; the first 10:" in summary
    assert "  - … and 3 more in verdict.json" in summary


# -- installed projects -----------------------------------------------------------------


SRC_CORE = """\
def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)
"""

INSTALLED_ORACLE = """\
import os

import samplepkg


def test_mean():
    assert samplepkg.mean([1, 2, 3, 6]) == 3


def test_the_project_is_imported_from_this_worktree():
    here = os.path.realpath(os.getcwd()) + os.sep
    assert os.path.realpath(samplepkg.__file__).startswith(here), samplepkg.__file__
"""

INSTALLED_MANIFEST = """\
version: 1
classes:
  oracle:
    globs: ["tests/oracles/**/*.py"]
fail_closed_untrusted: true
oracle_must_fail_known_bad: true
known_bad_dir: tests/oracles/known_bad
owners: [alice]
require_property_class: false
"""

BUILD = {
    "setuptools": '[build-system]\nrequires = ["setuptools>=70"]\n'
    'build-backend = "setuptools.build_meta"\n',
    "hatchling": '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
}

FIND_SRC = '[tool.setuptools.packages.find]\nwhere = ["src"]\n'
FLAT_PACKAGES = '[tool.setuptools]\npackages = ["samplepkg"]\n'
# (layout, backend, editable, extra pyproject text)
INSTALL_KINDS = {
    "src-editable-pth": (
        "src",
        "setuptools",
        True,
        '[tool.setuptools.packages.find]\nwhere = ["src"]\n',
    ),
    "flat-editable-finder": (
        "flat",
        "setuptools",
        True,
        '[tool.setuptools]\npackages = ["samplepkg"]\n',
    ),
    "src-editable-hatch-exact": (
        "src",
        "hatchling",
        True,
        '[tool.hatch.build.targets.wheel]\npackages = ["src/samplepkg"]\n'
        "[tool.hatch.build]\ndev-mode-exact = true\n",
    ),
    "src-copy": ("src", "setuptools", False, FIND_SRC),
}


def _src_layout_repo(root: Path, kind: str) -> tuple[SampleRepo, str]:
    layout, backend, _, extra = INSTALL_KINDS[kind]
    package = "src/samplepkg" if layout == "src" else "samplepkg"
    from andgate.commands.sample import init_repo

    repo = init_repo(root)
    repo.write(
        {
            ".gitignore": "__pycache__/\nartifacts/\n*.egg-info/\nbuild/\n",
            "pyproject.toml": BUILD[backend]
            + f'[project]\nname = "samplepkg"\nversion = "0.1"\n{extra}'
            + '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            f"{package}/__init__.py": "from samplepkg.core import mean\n",
            f"{package}/core.py": SRC_CORE,
        }
    )
    repo.commit("upstream")
    patch = repo.diff_of([(f"{package}/core.py", "/ len(xs)", "/ (len(xs) + 1)")])
    repo.write(
        {
            "tests/trust_manifest.yaml": INSTALLED_MANIFEST,
            "tests/oracles/test_core.py": INSTALLED_ORACLE,
            "tests/oracles/known_bad/kb_mean_floors.patch": patch,
        }
    )
    return repo, repo.commit("trust overlay")


def _gate_in(
    venv: Path, repo: SampleRepo, base: str, tmp: Path, extra_env: dict[str, str] | None = None
) -> dict:
    return VenvProject(venv, repo, tmp).check(base, artifacts=tmp, env=extra_env)


@pytest.mark.parametrize("kind", sorted(INSTALL_KINDS))
def test_installed_project_is_imported_from_each_worktree(project_venv, tmp_path, kind):
    repo, base = _src_layout_repo(tmp_path / "repo", kind)
    editable = INSTALL_KINDS[kind][2]
    pip_install(project_venv, *(["-e", str(repo.path)] if editable else [str(repo.path)]))
    try:
        package = "src/samplepkg" if INSTALL_KINDS[kind][0] == "src" else "samplepkg"
        repo.write({"tests/test_agent.py": "def test_agent():\n    assert True\n"})
        repo.commit("honest change", who=AGENT)
        # head is honest; the user's checkout (what is installed) breaks mean, uncommitted:
        # every process must import head's code from its own worktree
        repo.edit(f"{package}/core.py", "/ len(xs)", "/ (len(xs) + 1)")
        verdict = _gate_in(project_venv, repo, base, tmp_path / "artifacts")
        assert verdict["verdict"] == "allow", verdict["reasons"]
        assert [w["code"] for w in verdict["warnings"]] == ["UNCOMMITTED_CHANGES"]
        bites = verdict["bits"]["known_bad_ok"]
        assert bites and verdict["counts"]["oracle"] == 2, verdict
    finally:
        pip_uninstall(project_venv, "samplepkg")


# -- a single module that files standard-library modules under its name (six) ----------


# six's shape: one module, `__path__ = []` so that it can hold submodules, and a
# meta-path importer that files standard-library modules under `sixlike.moves`.
SIXLIKE = """\
import importlib
import sys
import types
from importlib.util import spec_from_loader

__path__ = []  # a module that holds submodules, as six.py does

MOVES = {
    "sixlike.moves": None,
    "sixlike.moves.http_server": "http.server",
    "sixlike.moves.configparser": "configparser",
}


class _MovesImporter:
    def find_spec(self, fullname, path=None, target=None):
        return spec_from_loader(fullname, self) if fullname in MOVES else None

    def create_module(self, spec):
        if MOVES[spec.name] is None:
            module = types.ModuleType(spec.name)
            module.__path__ = []
            return module
        return importlib.import_module(MOVES[spec.name])

    def exec_module(self, module):
        pass


sys.meta_path.append(_MovesImporter())


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)
"""

SIXLIKE_ORACLE = """\
import configparser
import http.server
import os

import sixlike
import sixlike.moves.configparser
from sixlike.moves import http_server


def test_mean():
    assert sixlike.mean([1, 2, 3, 6]) == 3


def test_moves_are_the_standard_library():
    assert http_server is http.server
    assert sixlike.moves.configparser is configparser


def test_the_project_is_imported_from_this_worktree():
    here = os.path.realpath(os.getcwd()) + os.sep
    assert os.path.realpath(sixlike.__file__).startswith(here), sixlike.__file__
"""


def _single_module_repo(root: Path) -> tuple[SampleRepo, str]:
    from andgate.commands.sample import init_repo

    repo = init_repo(root)
    repo.write(
        {
            ".gitignore": "__pycache__/\nartifacts/\n*.egg-info/\nbuild/\n",
            "pyproject.toml": BUILD["setuptools"]
            + '[project]\nname = "sixlike"\nversion = "0.1"\n'
            + '[tool.setuptools]\npy-modules = ["sixlike"]\n'
            + '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            "sixlike.py": SIXLIKE,
        }
    )
    repo.commit("upstream")
    patch = repo.diff_of([("sixlike.py", "/ len(xs)", "/ (len(xs) + 1)")])
    repo.write(
        {
            "tests/trust_manifest.yaml": INSTALLED_MANIFEST,
            "tests/oracles/test_sixlike.py": SIXLIKE_ORACLE,
            "tests/oracles/known_bad/kb_mean_floors.patch": patch,
        }
    )
    return repo, repo.commit("trust overlay")


def test_standard_library_modules_filed_under_the_projects_name_are_no_foreign_import(
    project_venv, tmp_path
):
    """six.moves: the project's importer registers `sixlike.moves.http_server` (whose
    file is the standard library's) under the project's name. The import audit
    compares files, not names: the honest change is allowed, its fixture bites."""
    repo, base = _single_module_repo(tmp_path / "repo")
    pip_install(project_venv, "-e", str(repo.path))
    try:
        repo.write({"tests/test_agent.py": "def test_agent():\n    assert True\n"})
        repo.commit("honest change", who=AGENT)
        verdict = _gate_in(project_venv, repo, base, tmp_path / "artifacts")
        assert verdict["verdict"] == "allow", verdict["reasons"]
        assert verdict["bits"]["known_bad_ok"] and verdict["counts"]["oracle"] == 3, verdict
    finally:
        pip_uninstall(project_venv, "sixlike")


def test_the_project_itself_loaded_from_the_installed_copy_still_blocks(project_venv, tmp_path):
    """The control: the same project installed as a copy, and imported from that copy
    before andgate's redirect could act (a `sitecustomize` on the user's PYTHONPATH
    imports it at start-up): no run tested head, and each GATE_ERROR names the copy,
    never a standard-library module filed under the project's name."""
    repo, base = _single_module_repo(tmp_path / "repo")
    pip_install(project_venv, str(repo.path))
    startup = tmp_path / "startup"
    startup.mkdir()
    (startup / "sitecustomize.py").write_text("import sixlike\n")
    try:
        repo.write({"tests/test_agent.py": "def test_agent():\n    assert True\n"})
        repo.commit("honest change", who=AGENT)
        env = {"PYTHONPATH": str(startup)}
        verdict = _gate_in(project_venv, repo, base, tmp_path / "artifacts", env)
        assert verdict["verdict"] == "block"
        errors = [r["detail"] for r in verdict["reasons"] if r["code"] == "GATE_ERROR"]
        assert len(errors) == 3, verdict["reasons"]  # oracle + base pin, the replay, untrusted
        copy = os.path.join("site-packages", "sixlike.py")
        assert all("process imported sixlike from " in e and copy in e for e in errors), errors
        assert not [e for e in errors if "moves" in e], errors
    finally:
        pip_uninstall(project_venv, "sixlike")


def test_each_phase_shows_progress_on_stderr_and_quiet_silences_it(sample, capsys):
    from andgate.commands.cli import main

    head = sample.change(honest_fix)
    common = ["check", "--repo", str(sample.path), "--base", sample.base, "--head", head]
    common += ["--today", "2026-11-25", "--artifacts", str(sample.tmp / "art")]
    common += ["--no-discrimination"]
    assert main(common) == 0
    err = capsys.readouterr().err
    for phase in ("oracle", "property", "untrusted"):
        assert f"andgate: {phase} phase, {phase} items:" in err
    assert "andgate: untrusted phase, untrusted items: 2 of 2 (100%)" in err
    assert main([*common, "--quiet"]) == 0
    assert "phase" not in capsys.readouterr().err
