"""Trust roots of the revised contract: what a pull request runs the gate with
(workflows, local actions, CODEOWNERS), the project's pytest plugin declarations
and the files `trust_root_globs` names. Pure: no git, no pytest process."""

from __future__ import annotations

import pytest

from andgate.git import Change
from andgate.trust import paths
from andgate.trust.authorship import sort_changes
from andgate.trust.manifest import parse_manifest
from andgate.trust.plugin_declarations import change as plugin_change
from andgate.verdict import authorship_findings
from harness import MANIFEST

M = parse_manifest(
    MANIFEST + 'trust_root_globs: ["Makefile", "ci/**"]\n', "tests/trust_manifest.yaml"
)


def modified(*names: str) -> list[Change]:
    return [Change("M", p, p, "100644", "100644") for p in names]


def sorted_changes(*names: str, differs=lambda _p: False):  # type: ignore[no-untyped-def]
    return sort_changes(
        modified(*names),
        M,
        is_oracle_file=lambda _p: False,
        config_differs=differs,
        approved_by=(),
    )


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/andgate.yml",
        ".github/workflows/sub/other.yaml",
        ".github/actions/setup/action.yml",
        "CODEOWNERS",
        ".github/CODEOWNERS",
        "docs/CODEOWNERS",
        "Makefile",
        "ci/gate.sh",
    ],
)
def test_what_a_pull_request_runs_the_gate_with_is_a_trust_root(path):
    facts = sorted_changes(path)
    assert facts.trust_root_paths == (path,)
    codes = [f.code.value for f in authorship_findings(facts)]
    assert codes == ["TRUST_ROOT_CHANGED"]


def test_other_github_files_and_lookalikes_stay_production():
    facts = sorted_changes(".github/dependabot.yml", "src/CODEOWNERS", "cid/gate.sh")
    assert facts.trust_root_paths == ()
    assert facts.production_paths == (".github/dependabot.yml", "cid/gate.sh", "src/CODEOWNERS")


BASE_PYPROJECT = b"""[project]
name = "minilib"
version = "1.0"

[project.entry-points.pytest11]
helper = "minilib.plugin"
"""


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        (
            "pyproject.toml",
            BASE_PYPROJECT,
            BASE_PYPROJECT.replace(b"minilib.plugin", b"minilib.evil"),
        ),
        ("pyproject.toml", b'[project]\nname = "x"\n', BASE_PYPROJECT),
        ("pyproject.toml", b"", b'[tool.poetry.plugins."pytest11"]\nx = "pkg.plugin"\n'),
        ("pyproject.toml", b"", b'[tool.flit.entrypoints.pytest11]\nx = "pkg.plugin"\n'),
        ("pyproject.toml", b"", b"[project.entry-points.pytest11\n"),
        (
            "sub/setup.cfg",
            b"[metadata]\nname = x\n",
            b"[options.entry_points]\npytest11 =\n    x = pkg.p\n",
        ),
        ("setup.cfg", b"", b"[options]\nentry_points = file: ep.cfg\n"),
        (
            "setup.py",
            b"from setuptools import setup\nsetup(entry_points={'pytest11': EP})\n",
            b"from setuptools import setup\nsetup(name='x', entry_points={'pytest11': EP})\n",
        ),
    ],
)
def test_a_change_to_declared_pytest_plugins_is_a_trust_root(name, old, new):
    changes = paths.config_changes(modified(name), {name: old}.get, {name: new}.get)
    facts = sorted_changes(name, differs=changes)
    assert facts.trust_root_paths == (name,), changes.plugins
    assert "pytest11" in dict(facts.trust_root_why)[name]


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("pyproject.toml", BASE_PYPROJECT, BASE_PYPROJECT.replace(b'"1.0"', b'"1.1"')),
        (
            "pyproject.toml",
            BASE_PYPROJECT,
            BASE_PYPROJECT + b'\n[project.entry-points.console_scripts]\nx = "m:f"\n',
        ),
        ("setup.cfg", b"[metadata]\nversion = 1\n", b"[metadata]\nversion = 2\n"),
        (
            "setup.py",
            b"from setuptools import setup\nsetup()\n",
            b"# a comment\nfrom setuptools import setup\nsetup()\n",
        ),
    ],
)
def test_other_build_file_edits_stay_out_of_the_trust_root(name, old, new):
    assert plugin_change(name, old, new) is None
    changes = paths.config_changes(modified(name), {name: old}.get, {name: new}.get)
    assert sorted_changes(name, differs=changes).trust_root_paths == ()
