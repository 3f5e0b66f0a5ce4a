"""Generated files in base's runs, end to end (contract section 4, "Generated files").

humanize (issue 37) imports its hatch-vcs version file unguarded: `_version.py` exists
only after install, so base, run without it, could collect no oracle file and every
pull request was blocked. Base's runs now get the generated files that are data only.
Each project here is built by a real build backend (hatch-vcs, setuptools-scm),
installed editable, adopted with the README's commands, then given an honest and a
broken change; the control's build writes a version file that holds code: it stays out
of base's runs, named in GENERATED_FILES, and base pins nothing.
"""

from __future__ import annotations

import pickle
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from andgate.commands.sample import AGENT, SampleRepo, init_repo
from harness import VenvProject, pip_install, pip_uninstall

pytestmark = pytest.mark.slow

MANIFEST = "tests/trust_manifest.yaml"

HATCH_VCS = """\
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "{name}"
dynamic = ["version"]

[tool.hatch.version]
source = "vcs"

[tool.hatch.build.hooks.vcs]
version-file = "src/{name}/_version.py"

[tool.hatch.build.targets.wheel]
packages = ["src/{name}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

SETUPTOOLS_SCM = """\
[build-system]
requires = ["setuptools>=70", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
dynamic = ["version"]

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools_scm]
version_file = "src/{name}/_version.py"
{template}
[tool.pytest.ini_options]
testpaths = ["tests"]
"""

# The control's build writes code into the version file.
CODE_TEMPLATE = (
    'version_file_template = "import os\\n__version__ = version = {version!r}\\n'
    'BUILT_IN = os.getcwd()\\n"\n'
)

# As humanize writes it: no fallback when the version file is missing.
INIT = """\
from {name}._version import __version__
from {name}.stats import clamp, mean
"""

STATS = """\
def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)


def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
"""

TESTS = """\
import {name}
from {name} import clamp, mean


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0


def test_version_is_generated():
    assert {name}.__version__
"""

# humanize's i18n tests: catalogs only a build script makes, missing on both sides.
I18N_TESTS = """\
import pathlib

import pytest

import {name}


def test_mean_in_latvian():
    if not (pathlib.Path({name}.__file__).parent / "locale").is_dir():
        pytest.skip("Generate .mo with scripts/generate-translation-binaries.sh")
"""

BROKEN_CLAMP = ("        return lo\n", "        return x\n")


class Project(VenvProject):
    """A src-layout project named `name`, installed editable into the venv."""

    def __init__(self, venv: Path, repo: SampleRepo, name: str, tmp: Path) -> None:
        super().__init__(venv, repo, tmp)
        self.name = name

    @property
    def package(self) -> str:
        return f"src/{self.name}"


def codes(found: list[dict[str, str]]) -> list[str]:
    return sorted({f["code"] for f in found})


@pytest.fixture
def installed(project_venv: Path, tmp_path: Path) -> Iterator[Any]:
    """Build (upstream commit), install editable, yield; uninstall afterwards."""
    made: list[Project] = []

    def make(name: str, pyproject: str) -> tuple[Project, str]:
        repo = init_repo(tmp_path / "repo")
        repo.write(
            {
                ".gitignore": f"__pycache__/\n*.egg-info/\nbuild/\nsrc/{name}/_version.py\n",
                "pyproject.toml": pyproject,
                f"src/{name}/__init__.py": INIT.format(name=name),
                f"src/{name}/stats.py": STATS,
                "tests/test_stats.py": TESTS.format(name=name),
                "tests/test_i18n.py": I18N_TESTS.format(name=name),
            }
        )
        upstream = repo.commit(f"upstream: {name}")
        repo.run("checkout", "-q", "-b", "adopt")
        pip_install(project_venv, "-e", str(repo.path))
        project = Project(project_venv, repo, name, tmp_path)
        made.append(project)
        assert (repo.path / project.package / "_version.py").is_file()
        return project, upstream

    yield make
    for project in made:
        pip_uninstall(project_venv, project.name)


def adopt(project: Project) -> str:
    """The README's steps: init, owners, one known-bad fixture (a real bug put back,
    its diff saved, the code restored), no property class yet, lock update; commit."""
    repo = project.repo
    done = project.andgate("init")
    assert done.returncode == 0, done.stderr
    manifest = (repo.path / MANIFEST).read_text()
    generated = f'generated_files: ["{project.package}/_version.py"]'
    assert generated in manifest, manifest
    repo.edit(MANIFEST, "owners: []", "owners: [alice]")
    repo.edit(MANIFEST, "require_property_class: true", "require_property_class: false")
    patch = repo.diff_of([(f"{project.package}/stats.py", *BROKEN_CLAMP)])
    repo.write({"tests/oracles/known_bad/kb_clamp_ignores_lo.patch": patch})
    assert project.andgate("lock", "update").returncode == 0
    # It bites. (The command exits 1 all the same: on the working tree, with no base to
    # compare with, it counts the i18n skip as an oracle that does not pass.)
    done = project.andgate("replay-known-bad", "--jobs", "2")
    assert "  kb_clamp_ignores_lo  bites" in done.stdout, done.stdout + done.stderr
    repo.run("add", "-A")
    return repo.commit("adopt andgate")


def honest(project: Project) -> None:
    project.repo.write(
        {
            f"{project.package}/extra.py": "def double(x):\n    return 2 * x\n",
            "tests/test_extra.py": f"from {project.name}.extra import double\n\n\n"
            "def test_double():\n    assert double(2) == 4\n",
        }
    )
    project.repo.commit("agent: double", who=AGENT)


SKIPPED_I18N = (
    "tests/test_i18n.py::test_mean_in_latvian skipped: Generate .mo with "
    "scripts/generate-translation-binaries.sh (skipped on base too)"
)


@pytest.mark.parametrize(
    ("name", "pyproject"),
    [
        ("vcsstats", HATCH_VCS.format(name="vcsstats")),
        ("scmstats", SETUPTOOLS_SCM.format(name="scmstats", template="")),
    ],
    ids=["hatch-vcs", "setuptools-scm"],
)
def test_an_unguarded_version_file_pins_the_oracles_on_base_as_on_head(installed, name, pyproject):
    project, upstream = installed(name, pyproject)
    repo = project.repo
    adoption = adopt(project)

    # The adoption change: base (upstream, no andgate) collects every oracle file,
    # with the data-only version file its run got; the i18n skip holds on base too.
    verdict = project.check(upstream)
    assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict
    assert codes(verdict["warnings"]) == ["ADOPTING", "ORACLE_SKIPPED"], verdict["warnings"]
    assert [w["detail"] for w in verdict["warnings"] if w["code"] == "ORACLE_SKIPPED"] == [
        SKIPPED_I18N
    ]
    assert [f["path"] for f in verdict["generated_files"]] == [f"{project.package}/_version.py"]

    # An honest change: allowed, nothing unpinned.
    honest(project)
    verdict = project.check(adoption)
    assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict
    assert codes(verdict["warnings"]) == ["ORACLE_SKIPPED"], verdict["warnings"]

    # `andgate dispute` finds the oracle item on base, collected as check collects it.
    done = project.andgate(
        "dispute", "tests/test_stats.py::test_mean", "--reason", "spec 2.1", "--base", adoption
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(repo.path / ".andgate")  # the disputes file it wrote

    # A broken change: the oracle that pins mean fails.
    repo.run("reset", "-q", "--hard", adoption)
    repo.edit(f"{project.package}/stats.py", "/ len(xs)", "/ (len(xs) + 1)")
    repo.commit("agent: mean", who=AGENT)
    verdict = project.check(adoption)
    assert codes(verdict["reasons"]) == ["ORACLE_FAILED"], verdict["reasons"]
    assert [r["detail"].split(" ", 1)[0] for r in verdict["reasons"]] == [
        "tests/test_stats.py::test_mean"
    ]


def test_a_version_file_that_holds_code_stays_out_of_base_and_is_named(installed):
    """The control: setuptools-scm writes the project's own template, which imports os
    and calls it. Base's runs do not get it, so base cannot import the package: its
    oracle files pin nothing (ORACLE_UNPINNED), and a skip there cannot be compared."""
    template = CODE_TEMPLATE
    project, upstream = installed(
        "codestats", SETUPTOOLS_SCM.format(name="codestats", template=template)
    )
    adopt(project)
    verdict = project.check(upstream)
    assert codes(verdict["warnings"]) == ["ADOPTING", "GENERATED_FILES", "ORACLE_UNPINNED"]
    (generated,) = [w["detail"] for w in verdict["warnings"] if w["code"] == "GENERATED_FILES"]
    assert generated.startswith(
        "kept out of base's runs (the collection that pins the oracle set, the rerun that "
        "judges a skip): src/codestats/_version.py (line 1: an import of os). "
    ), generated
    unpinned = sorted(w["detail"] for w in verdict["warnings"] if w["code"] == "ORACLE_UNPINNED")
    assert [u.split(":", 1)[0] for u in unpinned] == ["tests/test_i18n.py", "tests/test_stats.py"]
    assert all("No module named 'codestats._version'" in u for u in unpinned), unpinned
    # head still runs with the file, and the skip base could not judge fails, stated
    assert codes(verdict["reasons"]) == ["ORACLE_FAILED"], verdict["reasons"]
    (failed,) = [r["detail"] for r in verdict["reasons"]]
    assert failed.startswith("tests/test_i18n.py::test_mean_in_latvian skipped: Generate .mo")
    assert "(could not compare: base could not collect tests/test_i18n.py: " in failed


# humanize's catalogs: a build script compiles the committed .po files into .mo files
# beside the package's code, untracked (*.mo in .gitignore), and the i18n oracle reads
# them. The project is installed editable by hatchling: one `.pth` path entry, no
# module named in its RECORD.
CATALOG_TEST = """\
import gettext
import pathlib

import pytest

import {name}


def test_mean_is_translated():
    path = pathlib.Path({name}.__file__).parent / "{catalog}"
    if not path.is_file():
        pytest.skip("Generate .mo with scripts/generate-translation-binaries.sh")
    with path.open("rb") as fh:
        assert gettext.GNUTranslations(fh).gettext("mean") == "vid\\u0113jais"
"""
CATALOG = "locale/lv/LC_MESSAGES/{name}.mo"


def gettext_catalog(messages: dict[str, str]) -> bytes:
    """A GNU gettext catalog as msgfmt writes it (little-endian, no hash table)."""
    entries = {"": "Content-Type: text/plain; charset=UTF-8\n", **messages}
    keys = sorted(entries)
    ids, strs = [k.encode() for k in keys], [entries[k].encode() for k in keys]
    start = 7 * 4 + 2 * len(keys) * 8
    tables, blob = [], b""
    for texts in (ids, strs):
        table = []
        for text in texts:
            table.append(struct.pack("<2I", len(text), start + len(blob)))
            blob += text + b"\0"
        tables.append(b"".join(table))
    orig, trans = 7 * 4, 7 * 4 + len(keys) * 8
    head = struct.pack("<7I", 0x950412DE, 0, len(keys), orig, trans, 0, 0)
    return head + b"".join(tables) + blob


@pytest.mark.parametrize(
    ("name", "pyproject"),
    [
        ("catstats", HATCH_VCS.format(name="catstats")),
        ("scmcats", SETUPTOOLS_SCM.format(name="scmcats", template="")),
    ],
    ids=["hatch-vcs", "setuptools-scm (the control: a finder naming its package)"],
)
def test_untracked_catalogs_of_an_editable_project_are_named_then_carried(
    installed, name, pyproject
):
    """A hatchling editable install names no module in its RECORD, so the gate did not
    know the project's package: the untracked catalogs went unnamed (no
    GENERATED_FILES), and the i18n oracle skipped on head and on base alike, a
    warning where plain pytest runs it. Now they are named, with one glob for them;
    once named in generated_files they are carried into head's worktrees (the oracle
    runs), kept out of base's runs (not Python), and the production scan reads a
    catalog as the data it is. The control: a `.mo` whose bytes are no catalog (a
    pickle) is still binary content, PRODUCTION_SUSPICIOUS. setuptools' editable finder
    names its package, so that install was named before: the same warnings."""
    project, _ = installed(name, pyproject)
    relative = CATALOG.format(name=name)
    repo, catalog = project.repo, f"{project.package}/{relative}"
    repo.edit(".gitignore", "build/\n", "build/\n*.mo\n")
    repo.write({"tests/test_catalog.py": CATALOG_TEST.format(name=name, catalog=relative)})
    upstream = repo.commit("upstream: translations")
    repo.write({catalog: gettext_catalog({"mean": "vid\u0113jais"})})
    adopt(project)

    verdict = project.check(upstream)
    assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict
    generated = [w["detail"] for w in verdict["warnings"] if w["code"] == "GENERATED_FILES"]
    assert generated == [
        "the installed project's package holds files git does not track: "
        f"{catalog}; worktrees lack them, so tests that need them fail to collect, fail "
        "or skip: name them in the manifest's generated_files (e.g. generated_files: "
        f'["{catalog}"])'
    ], verdict["warnings"]
    skipped = [w["detail"] for w in verdict["warnings"] if w["code"] == "ORACLE_SKIPPED"]
    assert "tests/test_catalog.py::test_mean_is_translated skipped" in " ".join(skipped)

    # Named: carried into head's worktrees, the oracle runs, nothing suspicious.
    repo.edit(
        MANIFEST,
        f'generated_files: ["{project.package}/_version.py"]',
        f'generated_files: ["{project.package}/_version.py", "{project.package}/locale/**/*.mo"]',
    )
    repo.run("commit", "-q", "-a", "--amend", "--no-edit")
    verdict = project.check(upstream)
    assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict
    assert codes(verdict["warnings"]) == ["ADOPTING", "GENERATED_FILES"], verdict["warnings"]
    (generated,) = [w["detail"] for w in verdict["warnings"] if w["code"] == "GENERATED_FILES"]
    assert generated.startswith(
        "kept out of base's runs (the collection that pins the oracle set, the rerun that "
        f"judges a skip): 1 not Python source ({catalog}). "
    ), generated
    assert "Head's runs have them" in generated and "version file" not in generated
    assert sorted(f["path"] for f in verdict["generated_files"]) == [
        f"{project.package}/_version.py",
        catalog,
    ]

    # The control: a pickle under a catalog's name is binary content, named.
    (repo.path / catalog).write_bytes(pickle.dumps({"mean": "vid\u0113jais"}, protocol=4))
    verdict = project.check(upstream)
    # (the oracle, reading it as a catalog, fails too)
    assert codes(verdict["reasons"]) == ["ORACLE_FAILED", "PRODUCTION_SUSPICIOUS"], verdict
    (suspicious,) = [r["detail"] for r in verdict["reasons"] if r["code"] != "ORACLE_FAILED"]
    assert suspicious.startswith(f"{catalog}: binary file (binary content"), suspicious
