"""Adopting andgate: the change that adds the manifest, generated files, and the
maintainer commands run as `check` runs pytest.

The last tests are the adoption end to end, on a src-layout project whose version
file setuptools-scm writes at install time (not in git), installed editable and
as a copy, every command through the installed environment's `python -m andgate`:
init, a known-bad fixture from `known-bad mutants`, replay-known-bad, lock update,
doctor, the adoption change (allowed, ADOPTING), then agent changes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from andgate.commands.common import snapshot_worktree
from andgate.commands.sample import AGENT, SampleRepo, init_repo
from andgate.errors import ManifestError
from andgate.git import Git
from andgate.process.generated import (
    Generated,
    GeneratedFile,
    copy_into,
    generated_warning,
    read_generated,
    suggested_glob,
    unnamed_generated,
)
from andgate.process.installed import InstalledProject
from andgate.records import ChangeFacts, Reason
from andgate.trust.adoption import config_source
from andgate.verdict import authorship_findings

MANIFEST = "tests/trust_manifest.yaml"
MINIMAL_MANIFEST = "version: 1\nclasses:\n  oracle:\n    globs: ['tests/**/*.py']\n"

# -- where the config comes from -------------------------------------------------------------


def commits(make_repo, base_files: dict[str, str], head_files: dict[str, str]):
    repo = make_repo({"README.md": "x\n", **base_files})
    base = repo.run("rev-parse", "HEAD").strip()
    repo.write(head_files)
    return repo, base, repo.commit("head")


def test_a_change_that_adds_the_manifest_to_a_base_without_one_adopts(make_repo):
    repo, base, head = commits(make_repo, {}, {MANIFEST: MINIMAL_MANIFEST})
    source = config_source(Git(repo.path), base, head, MANIFEST)
    assert (source.adopting, source.config_commit) == (True, head)
    warning = source.warning()
    assert warning is not None and warning.code.value == "ADOPTING"


@pytest.mark.parametrize(
    "base_files",
    [{MANIFEST: MINIMAL_MANIFEST}, {"pyproject.toml": "[tool.andgate]\nx = 1\n"}],
    ids=["manifest", "tool.andgate"],
)
def test_a_base_with_any_andgate_config_is_read_as_base(make_repo, base_files):
    repo, base, head = commits(make_repo, base_files, {"other.py": ""})
    source = config_source(Git(repo.path), base, head, MANIFEST)
    assert (source.adopting, source.config_commit) == (False, base)


def test_a_target_branch_with_config_means_no_adoption(make_repo):
    """base is behind the branch the change targets, which already adopted andgate."""
    repo, base, head = commits(make_repo, {}, {MANIFEST: MINIMAL_MANIFEST})
    repo.run("checkout", "-q", "-b", "main-upstream", base)
    repo.write({MANIFEST: MINIMAL_MANIFEST})
    target = repo.commit("adopted upstream")
    repo.run("update-ref", "refs/remotes/origin/main", target)
    repo.run("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    source = config_source(Git(repo.path), base, head, MANIFEST)
    assert (source.adopting, source.config_commit) == (False, base)


def test_neither_side_with_a_manifest_names_the_base_it_looked_at(make_repo):
    repo, base, head = commits(make_repo, {}, {"src.py": ""})
    with pytest.raises(ManifestError) as exc:
        config_source(Git(repo.path), base, head, MANIFEST)
    message = str(exc.value)
    assert f"at base {base[:12]}" in message and "andgate init" in message
    assert "\n" not in message


def test_an_adopting_change_may_add_trust_files_but_not_change_production_code():
    facts = ChangeFacts(
        oracle_paths=("tests/test_a.py",),
        trust_root_paths=(MANIFEST,),
        production_paths=("src/pkg/core.py", ".github/workflows/andgate.yml"),
        adopting=True,
    )
    found = authorship_findings(facts)
    assert [(f.code, f.detail.split(" ", 1)[0]) for f in found] == [
        (Reason.TRUST_ROOT_CHANGED, "src/pkg/core.py")
    ]
    assert "adopt first" in found[0].detail
    assert authorship_findings(ChangeFacts(trust_root_paths=(MANIFEST,), adopting=True)) == []


def test_the_working_tree_snapshot_holds_the_edits_and_no_virtualenv(make_repo, tmp_path):
    repo = make_repo({"a.py": "a = 1\n", "gone.py": ""})
    head = repo.run("rev-parse", "HEAD").strip()
    index = (repo.path / ".git/index").read_bytes()
    git = Git(repo.path)
    assert snapshot_worktree(git, tmp_path / "index") == head  # nothing to add
    repo.write({"a.py": "a = 2\n", "new.py": "", ".venv/pyvenv.cfg": "", ".venv/lib/m.py": ""})
    (repo.path / "gone.py").unlink()
    commit = snapshot_worktree(git, tmp_path / "index2")
    assert commit != head and git.resolve(f"{commit}^", what="parent") == head
    assert sorted(e.path for e in git.ls_tree(commit)) == ["a.py", "new.py"]
    assert git.read_blob(commit, "a.py") == b"a = 2\n"
    assert (repo.path / ".git/index").read_bytes() == index


# -- generated files -------------------------------------------------------------------------


def test_generated_files_are_read_only_when_the_checkout_is_the_gated_head(make_repo):
    repo = make_repo({".gitignore": "_version.py\n", "src/pkg/__init__.py": ""})
    head = repo.run("rev-parse", "HEAD").strip()
    (repo.path / "src/pkg/_version.py").write_text("version = '1.0'\n")
    git = Git(repo.path)
    found = read_generated(git, ("src/pkg/_version.py",), head)
    assert [(f.path, f.data) for f in found.files] == [
        ("src/pkg/_version.py", b"version = '1.0'\n")
    ]
    assert found.to_json() == [
        {"path": "src/pkg/_version.py", "sha256": hashlib.sha256(found.files[0].data).hexdigest()}
    ]
    assert read_generated(git, ("src/pkg/_version.py",), "0" * 40).files == ()
    assert read_generated(git, ("src/pkg/*.py",), head).paths == ("src/pkg/_version.py",)


def test_a_generated_file_that_is_a_symlink_is_refused(make_repo, tmp_path):
    from andgate.errors import AndgateError

    repo = make_repo({"src/pkg/__init__.py": ""})
    (tmp_path / "secret").write_text("x\n")
    (repo.path / "src/pkg/_v.py").symlink_to(tmp_path / "secret")
    head = repo.run("rev-parse", "HEAD").strip()
    with pytest.raises(AndgateError, match="is not a regular file"):
        read_generated(Git(repo.path), ("src/pkg/_v.py",), head)


def test_copy_into_writes_the_files_and_keeps_what_the_commit_holds(tmp_path):
    (tmp_path / "kept.py").write_text("committed\n")
    copy_into(
        tmp_path,
        Generated((GeneratedFile("a/b/_v.py", b"new\n"), GeneratedFile("kept.py", b"gen\n"))),
    )
    assert (tmp_path / "a/b/_v.py").read_bytes() == b"new\n"
    assert (tmp_path / "kept.py").read_text() == "committed\n"


def test_untracked_files_in_the_installed_package_that_no_glob_names_are_reported(make_repo):
    repo = make_repo({".gitignore": "_version.py\n*.egg-info/\n", "src/pkg/__init__.py": ""})
    for rel in ("src/pkg/_version.py", "src/pkg/__pycache__/x.pyc", "src/pkg.egg-info/PKG"):
        (repo.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo.path / rel).write_text("x\n")
    project = InstalledProject(("pkg",), ("pkg",), ("src",))
    unnamed = unnamed_generated(Git(repo.path), project, ())
    assert unnamed == ["src/pkg/_version.py"]
    warning = generated_warning(unnamed)
    assert warning is not None and warning.code.value == "GENERATED_FILES"
    assert 'generated_files: ["src/pkg/_version.py"]' in warning.detail
    assert unnamed_generated(Git(repo.path), project, ("src/pkg/_version.py",)) == []


def test_many_unnamed_files_are_suggested_as_one_glob():
    """humanize's catalogs: their deepest common folder and their shared suffix."""
    catalogs = [f"src/h/locale/{lang}/LC_MESSAGES/h.mo" for lang in ("de", "fr", "lv")]
    assert suggested_glob(catalogs) == '["src/h/locale/**/*.mo"]'
    assert suggested_glob(catalogs[:1]) == f'["{catalogs[0]}"]'
    assert suggested_glob(["src/h/a.mo", "src/h/sub/b.dat"]) == '["src/h/**/*"]'
    assert suggested_glob(["src/h/README", "src/h/x/LICENSE"]) == '["src/h/**/*"]'
    warning = generated_warning(catalogs)
    assert warning is not None
    assert 'generated_files: ["src/h/locale/**/*.mo"]' in warning.detail
    assert "fail to collect, fail or skip" in warning.detail


def test_known_bad_proposals_leave_the_artifacts_folder_self_ignored(make_repo):
    """Whichever command creates artifacts/ first, it ignores itself, and check
    takes it over as its own (no refusal, the ignore file kept)."""
    from andgate.commands import proposals
    from andgate.report.folder import claim_artifacts_for

    repo = make_repo({"README.md": "x\n"})
    folder = proposals.proposals_folder(repo.path, None, "tests/kb")
    proposals.claim(repo.path, folder).close()
    assert (repo.path / "artifacts/.gitignore").read_text().splitlines()[-1] == "*"
    assert repo.run("status", "--porcelain") == ""
    folder = claim_artifacts_for(repo.path, None)
    folder.close()
    assert ".gitignore" in folder.listed


def test_doctor_names_each_problem_with_its_fix_and_exits_1(make_repo, capsys):
    from andgate.commands.doctor import run_doctor

    repo = make_repo({"README.md": "x\n"})
    code = run_doctor(repo.path, manifest=MANIFEST, today=dt.date(2026, 12, 1), jobs=1)
    out = capsys.readouterr().out
    assert code == 1, out
    assert "1. MANIFEST_INVALID: " in out and "fix: run `andgate init`" in out
    assert "2. CI: no workflow under .github/workflows/ runs andgate" in out
    assert "note: no upstream default branch" in out
    # The missing workflow is a problem, not a block: the result line says which block.
    assert out.endswith(
        "result: 2 problems; the next check would block on 1 of them (CI: no block, but fix it)\n"
    )


def test_doctors_result_line_says_which_problems_block_the_next_check():
    """humanize: doctor named only the untracked catalogs (GENERATED_FILES, a warning)
    and said the next check would block; it allowed."""
    from andgate.commands.doctor import Findings

    found = Findings()
    found.problem("GENERATED_FILES", "untracked .mo files", "name them")
    assert found.result() == "1 problem; the next check would block on none of them " + (
        "(GENERATED_FILES: no block, but fix it)"
    )
    found.problem("NO_KNOWN_BAD", "no fixture", "write one")
    found.problem("NO_PROPERTY", "no property", "add one")
    assert found.result().startswith("3 problems; the next check would block on 2 of them")
    blocking = Findings()
    blocking.problem("NO_KNOWN_BAD", "no fixture", "write one")
    assert blocking.result() == "the next check would block: 1 problem"


# -- end to end: a src-layout project with a version file setuptools-scm writes ---------------


PYPROJECT = """\
[build-system]
requires = ["setuptools>=70", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "scmstats"
dynamic = ["version"]

[project.optional-dependencies]
test = ["pytest"]

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools_scm]
version_file = "src/scmstats/_version.py"

[tool.pytest.ini_options]
testpaths = ["tests"]
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
import os

import scmstats
from scmstats import clamp, mean


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
    assert clamp(2, 0, 3) == 2


def test_version_is_generated():
    assert scmstats.__version__ != "unknown"


def test_imported_from_this_worktree():
    here = os.path.realpath(os.getcwd()) + os.sep
    assert os.path.realpath(scmstats.__file__).startswith(here), scmstats.__file__
"""


# The usual guard, as many projects write it (base's runs get the data-only version
# file anyway: tests/end_to_end/test_generated_on_base.py imports it unguarded).
INIT = """\
try:
    from scmstats._version import version as __version__
except ImportError:  # not installed: no version file
    __version__ = "unknown"
from scmstats.stats import clamp, mean
"""


@pytest.fixture(scope="session")
def project_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv that sees andgate's test environment (pytest, setuptools-scm),
    where each test installs its project the way CI does."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    purelib = sysconfig.get_paths(vars={"base": str(root), "platbase": str(root)})["purelib"]
    outer = sysconfig.get_paths()["purelib"]
    Path(purelib, "_andgate_tests_outer.pth").write_text(
        f"import site; site.addsitedir({outer!r})\n"
    )
    return root


class Project:
    def __init__(self, venv: Path, repo: SampleRepo, tmp: Path) -> None:
        self.venv, self.repo, self.tmp = venv, repo, tmp

    def andgate(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        return subprocess.run(
            [str(self.venv / "bin" / "python"), "-m", "andgate", *args],
            cwd=self.repo.path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    def check(self, base: str, *more: str) -> dict[str, Any]:
        out = self.tmp / "check"
        shutil.rmtree(out, ignore_errors=True)
        done = self.andgate(
            "check", "--base", base, "--json", "--jobs", "2", "--no-discrimination",
            "--artifacts", str(out), "--today", "2026-12-01", *more,
        )  # fmt: skip
        assert done.stdout, done.stderr
        payload = json.loads(done.stdout)
        payload["known_bad.json"] = json.loads((out / "known_bad.json").read_text())
        return payload


def _install(venv: Path, repo: SampleRepo, editable: bool) -> None:
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps"]
    target = ["-e", str(repo.path)] if editable else [str(repo.path)]
    done = subprocess.run(
        [*pip, "--no-build-isolation", *target], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr


def _upstream(root: Path) -> tuple[SampleRepo, str]:
    repo = init_repo(root)
    repo.write(
        {
            ".gitignore": "__pycache__/\n*.egg-info/\nbuild/\nsrc/scmstats/_version.py\n",
            "pyproject.toml": PYPROJECT,
            "src/scmstats/__init__.py": INIT,
            "src/scmstats/stats.py": STATS,
            "tests/test_stats.py": TESTS,
        }
    )
    return repo, repo.commit("upstream: scmstats 0.1")


@pytest.mark.parametrize("editable", [True, False], ids=["editable", "copy"])
def test_adopting_andgate_on_a_src_layout_project_with_a_generated_version_file(
    project_venv, tmp_path, editable
):
    repo, upstream = _upstream(tmp_path / "repo")
    repo.run("checkout", "-q", "-b", "adopt")
    _install(project_venv, repo, editable)
    try:
        project = Project(project_venv, repo, tmp_path)
        _adopt(project, upstream)
    finally:
        pip = [str(project_venv / "bin" / "python"), "-m", "pip", "uninstall", "-q", "-y"]
        subprocess.run([*pip, "scmstats"], capture_output=True, timeout=300)


def _adopt(project: Project, upstream: str) -> None:
    repo = project.repo
    version_file = repo.path / "src/scmstats/_version.py"
    assert version_file.is_file() and not repo.run("ls-files", "src/scmstats/_version.py")

    # 1. init: the existing tests proposed as oracles, the version file as generated.
    done = project.andgate("init")
    assert done.returncode == 0, done.stderr
    manifest = (repo.path / MANIFEST).read_text()
    assert 'globs: ["tests/oracles/**/*.py", "tests/test_stats.py"]' in manifest
    assert 'generated_files: ["src/scmstats/_version.py"]' in manifest
    repo.edit(MANIFEST, "owners: []", "owners: [alice]")
    repo.edit(MANIFEST, "require_property_class: true", "require_property_class: false")

    # 2. classify, on the working tree with its uncommitted edits.
    done = project.andgate("classify")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "uncommitted edits included" in done.stdout.splitlines()[0]
    assert "NO_KNOWN_BAD" in done.stdout and "GENERATED_FILES" not in done.stdout

    # 3. mutants kill the obvious ones; one proposal becomes the known-bad fixture.
    done = project.andgate("known-bad", "mutants", "--write", "2", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((repo.path / "artifacts/known_bad_proposals/mutants.json").read_text())
    fates = {(m["function"], m["kind"]): m["status"] for m in report["mutants"]}
    assert fates[("mean", "return")] == "killed", report["mutants"]
    assert report["counts"]["killed"] >= 4 and report["counts"]["error"] == 0, report["counts"]
    proposal = report["written"][0]
    shutil.copy(
        repo.path / "artifacts/known_bad_proposals" / proposal,
        repo.path / "tests/oracles/known_bad" / proposal,
    )
    fixture = proposal.removesuffix(".patch")

    # 4. replay-known-bad and lock update, on the working tree.
    done = project.andgate("replay-known-bad", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"  {fixture}  bites" in done.stdout
    assert project.andgate("lock", "update").returncode == 0

    # 5. doctor: only the CI workflow is missing; init --github adds it, with the
    # project's test extra installed.
    done = project.andgate("doctor", "--jobs", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    problems = [line for line in done.stdout.splitlines() if line[:4].strip().startswith("1.")]
    assert len(problems) == 1 and "fix: andgate init --github" in problems[0], done.stdout
    assert project.andgate("init", "--github").returncode == 0
    workflow = (repo.path / ".github/workflows/andgate.yml").read_text()
    assert '        run: python -m pip install -e ".[test]"\n' in workflow
    done = project.andgate("doctor", "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.endswith("result: nothing the next check would trip on\n")

    # 6. The artifacts folder ignores itself: `git add -A` commits the trust files only.
    repo.run("add", "-A")
    assert not [p for p in repo.run("diff", "--cached", "--name-only").split() if "artifact" in p]
    adoption = repo.commit("adopt andgate")

    # 7. The adoption change, against a base without andgate: allowed, ADOPTING.
    verdict = project.check(upstream, "--approved-by", "alice")
    assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict
    assert [w["code"] for w in verdict["warnings"]] == ["ADOPTING", "APPROVAL_IGNORED"]
    assert verdict["approvals"] == []
    digest = hashlib.sha256(version_file.read_bytes()).hexdigest()
    assert verdict["generated_files"] == [{"path": "src/scmstats/_version.py", "sha256": digest}]
    # check and replay-known-bad agree: the fixture bites.
    assert [(f["name"], f["bites"]) for f in verdict["known_bad.json"]["fixtures"]] == [
        (fixture, True)
    ]

    # 8. An adoption that also changes production code is not allowed.
    repo.edit("src/scmstats/stats.py", "return x\n", "return x  # tweak\n")
    repo.run("commit", "-q", "--amend", "-a", "--no-edit")
    verdict = project.check(upstream)
    assert verdict["verdict"] == "block"
    assert [r["code"] for r in verdict["reasons"]] == ["TRUST_ROOT_CHANGED"], verdict["reasons"]
    assert "src/scmstats/stats.py" in verdict["reasons"][0]["detail"]
    repo.run("reset", "-q", "--hard", adoption)

    # 9. The first agent changes, gated by the adoption commit as base.
    repo.edit("src/scmstats/stats.py", "        return lo\n", "        return x\n")
    repo.write({"tests/test_agent.py": "def test_agent():\n    assert True\n"})
    repo.commit("agent: simpler clamp", who=AGENT)
    verdict = project.check(adoption)
    assert verdict["verdict"] == "block"
    assert [r["code"] for r in verdict["reasons"]] == ["ORACLE_FAILED"], verdict["reasons"]
    assert "tests/test_stats.py::test_clamp" in verdict["reasons"][0]["detail"]
    assert "ADOPTING" not in [w["code"] for w in verdict["warnings"]]

    repo.run("reset", "-q", "--hard", adoption)
    repo.write(
        {
            "src/scmstats/extra.py": "def double(x):\n    return 2 * x\n",
            "tests/test_extra.py": "from scmstats.extra import double\n\n\n"
            "def test_double():\n    assert double(2) == 4\n",
        }
    )
    repo.commit("agent: double", who=AGENT)
    verdict = project.check(adoption)
    assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict
    assert [w["code"] for w in verdict["warnings"]] == []


# -- what the project's own install may put into the environment ---------------------------


def _fake_install(site: Path, checkout: Path, name: str, pth: str, text: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text(f"{pth},,\n{name}-1.0.dist-info/METADATA,,\n")
    (info / "direct_url.json").write_text(json.dumps({"url": checkout.as_uri(), "dir_info": {}}))
    (site / pth).write_text(text)


def test_a_startup_hook_other_than_the_editable_one_is_suspicious(tmp_path, monkeypatch):
    from andgate.trust.project_plugins import startup_hooks

    checkout, site = tmp_path / "repo", tmp_path / "site"
    checkout.mkdir()
    hook = "import __editable___good_1_0_finder; __editable___good_1_0_finder.install()\n"
    _fake_install(site, checkout, "good", "__editable__.good-1.0.pth", hook)
    _fake_install(site, checkout, "paths", "_paths.pth", f"{checkout}/src\n")
    _fake_install(site, checkout, "evil", "evil.pth", "import os; os.environ['CI'] = ''\n")
    _fake_install(
        site, checkout, "sly", "__editable__.sly.pth", "import __editable___sly; import os\n"
    )
    monkeypatch.syspath_prepend(str(site))
    found = startup_hooks(["good", "paths", "evil", "sly"])
    assert [f.split(":")[0] for f in found] == ["evil", "sly"]
    assert "evil.pth" in found[0] and "runs code at start-up" in found[0]
    assert startup_hooks(["not-installed-anywhere"]) == []
