"""Never harm the user's repository, machine or next run.

Each test builds a hostile state (symlinks, a worktree folder that is away,
poisoned caches, concurrent checks, a planted JUnit file), runs the gate, and
asserts the verdict and that nothing outside andgate's own folders changed: the
repository's tree, index, refs, `.git/worktrees` and the folders around it are
compared byte for byte before and after.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from andgate.check.cache import SCHEMA, KillerCache
from andgate.check.state import Captured, RunKey, RunName
from andgate.commands.cli import main
from andgate.commands.init import run_init
from andgate.commands.sample import SampleRepo
from andgate.errors import AndgateError, GateTimeout
from andgate.git import Git
from andgate.process import worktree as worktree_module
from andgate.process.results import RunResult
from andgate.process.worktree import worktree_pool
from andgate.records import Facts
from andgate.report.artifacts import Artifacts, write_artifacts
from andgate.report.context import ReportContext
from andgate.report.folder import MARKER, claim_artifacts
from andgate.trust.manifest import DEFAULT_MANIFEST, parse_manifest
from andgate.verdict import decide
from harness import BASE_FILES
from stories import honest_fix

PATCH = b"--- a/x.py\n+++ b/x.py\n"
DIGEST = "oracle-digest"
GOOD = ("tests/oracles/test_a.py::test_a",)


# -- the killer cache: anything kept between runs is read defensively -----------------------


def entry(cache_dir: Path) -> Path:
    path = KillerCache(cache_dir)._path(PATCH, DIGEST)
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def plant_text(text: str):
    return lambda path: path.write_text(text)


def plant_mode_000(path: Path) -> None:
    path.write_text("[]")
    path.chmod(0)


def plant_symlink(path: Path) -> None:
    """A symlink to a well-formed entry somewhere else: still not an entry andgate wrote."""
    target = path.parent.parent / "elsewhere.json"
    target.write_text(json.dumps({"schema": SCHEMA, "killers": ["tests/x.py::test_x"]}))
    path.symlink_to(target)


POISONS = {
    "list": plant_text("[]"),
    "null": plant_text("null"),
    "string": plant_text('"x"'),
    "killers not a list": plant_text(json.dumps({"schema": SCHEMA, "killers": 3})),
    "killers not strings": plant_text(json.dumps({"schema": SCHEMA, "killers": ["a", 7]})),
    "wrong schema": plant_text(json.dumps({"schema": "other/1", "killers": list(GOOD)})),
    "truncated": plant_text(json.dumps({"schema": SCHEMA, "killers": list(GOOD)})[:-5]),
    "deeply nested": plant_text("[" * 100_000),
    "huge": plant_text(json.dumps({"schema": SCHEMA, "killers": list(GOOD), "x": "y" * 10**6})),
    "not utf-8": lambda path: path.write_bytes(b'{"schema": "\xff"}'),
    "directory": lambda path: path.mkdir(),
    "symlink": plant_symlink,
    "fifo": lambda path: os.mkfifo(path),
    "mode 000": plant_mode_000,
}


@pytest.mark.parametrize("poison", sorted(POISONS))
def test_a_poisoned_cache_entry_is_ignored_and_overwritten(tmp_path, poison):
    cache = KillerCache(tmp_path / "cache")
    path = entry(tmp_path / "cache")
    POISONS[poison](path)
    assert cache.get(PATCH, DIGEST) == ()
    cache.put(PATCH, DIGEST, GOOD)
    assert not path.is_symlink()
    assert json.loads(path.read_text()) == {"schema": SCHEMA, "killers": list(GOOD)}
    assert cache.get(PATCH, DIGEST) == GOOD
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_a_symlinked_entry_is_replaced_never_written_through(tmp_path):
    cache = KillerCache(tmp_path / "cache")
    path = entry(tmp_path / "cache")
    plant_symlink(path)
    target = path.parent.parent / "elsewhere.json"
    before = target.read_bytes()
    cache.put(PATCH, DIGEST, GOOD)
    assert target.read_bytes() == before


def test_a_cache_that_cannot_be_written_never_raises(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "killers").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "outside").mkdir()
    cache = KillerCache(folder)
    cache.put(PATCH, DIGEST, GOOD)  # a symlinked killers folder is never written through
    assert list((tmp_path / "outside").iterdir()) == []
    assert cache.get(PATCH, DIGEST) == ()
    (folder / "killers").unlink()
    (folder / "killers").write_text("a file where the folder goes")
    cache.put(PATCH, DIGEST, GOOD)
    assert cache.get(PATCH, DIGEST) == ()


# -- snapshots: the repository and the folders around it, byte for byte --------------------


def _files(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Every entry under root: a file's sha256, a symlink's target, a folder's mark."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if rel.startswith(skip):
                continue
            if path.is_symlink():
                out[rel] = f"-> {os.readlink(path)}"
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def snapshot(repo: Path, skip: tuple[str, ...] = ()) -> dict[str, object]:
    """The working tree, index, refs, `.git/worktrees`, and the repository's
    neighbours (its parent folder: `outside/` and friends), apart from `skip`."""
    git = repo / ".git"
    refs = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname) %(objectname)"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    worktrees = git / "worktrees"
    return {
        "tree": _files(repo, (".git/", *skip)),
        "index": hashlib.sha256((git / "index").read_bytes()).hexdigest(),
        "refs": refs,
        "packed-refs": (git / "packed-refs").read_bytes()
        if (git / "packed-refs").exists()
        else b"",
        "loose refs": _files(git / "refs"),
        "worktrees": _files(worktrees) if worktrees.exists() else {},
        "neighbours": _files(repo.parent, (f"{repo.name}/", repo.name, *skip)),
    }


def registered_worktrees(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "worktree", "list", "--porcelain"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


# -- worktrees: only andgate's own, removed by path ----------------------------------------


def test_a_users_worktree_whose_folder_is_away_stays_registered(make_repo, tmp_path):
    repo = make_repo({"m.py": "X = 1\n"})
    away = tmp_path / "usb-disk" / "feature"
    repo.run("worktree", "add", "--detach", str(away), "HEAD")
    hidden = tmp_path / "usb-disk-unmounted"
    (tmp_path / "usb-disk").rename(hidden)  # the disk is unmounted during the check
    before = snapshot(repo.path, ("wts",))
    with worktree_pool(repo.git, tmp_path / "wts") as pool, pool.lease("HEAD"):
        pass
    assert snapshot(repo.path, ("wts",)) == before
    hidden.rename(tmp_path / "usb-disk")
    assert registered_worktrees(repo.path) == [str(repo.path), str(away)]
    repo.run("-C", str(away), "status")  # still a working worktree


def test_close_removes_every_worktree_even_when_one_removal_times_out(
    make_repo, tmp_path, monkeypatch
):
    repo = make_repo({"m.py": "X = 1\n"})
    before = snapshot(repo.path, ("wts",))
    real_run = Git.run
    timeouts: list[float | None] = []

    def first_remove_times_out(self, *args, **kwargs):
        if args[:2] == ("worktree", "remove"):
            timeouts.append(kwargs.get("timeout"))
            if len(timeouts) == 1:
                raise GateTimeout("git worktree remove --force ran past 30s")
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(Git, "run", first_remove_times_out)
    # Each admin folder is not where it was recorded: git must unregister every worktree.
    monkeypatch.setattr(worktree_module.Worktree, "_drop_admin_dir", lambda self: False)
    with (
        pytest.raises(RuntimeError, match="the original error"),
        worktree_pool(repo.git, tmp_path / "wts") as pool,
        pool.lease("HEAD"),
        pool.lease("HEAD"),
        pool.lease("HEAD"),
    ):
        raise RuntimeError("the original error")
    monkeypatch.undo()
    assert len(timeouts) == 3
    assert all(t is not None and t <= worktree_module.REMOVE_TIMEOUT for t in timeouts)
    # the one whose removal timed out stays registered, its folder gone (git prunes it)
    assert len(registered_worktrees(repo.path)) == 2
    assert not (tmp_path / "wts").exists() or list((tmp_path / "wts").iterdir()) == []
    repo.git.run("worktree", "prune")
    assert registered_worktrees(repo.path) == [str(repo.path)]
    assert snapshot(repo.path, ("wts",)) == before


def test_close_unregisters_its_worktrees_without_a_git_process_each(make_repo, tmp_path):
    """Removing a worktree is deleting its admin folder and its folder: done directly,
    the end of every check saves a git process per worktree."""
    repo = make_repo({"m.py": "X = 1\n"})
    before = snapshot(repo.path, ("wts",))
    with worktree_pool(repo.git, tmp_path / "wts") as pool:
        with pool.lease("HEAD"), pool.lease("HEAD"):
            pass
        with pytest.MonkeyPatch.context() as patched:
            patched.setattr(Git, "run", hanging_git)
            pool.close()
    assert registered_worktrees(repo.path) == [str(repo.path)]
    assert snapshot(repo.path, ("wts",)) == before


def test_cleanup_past_its_budget_removes_worktrees_without_git(make_repo, tmp_path, monkeypatch):
    repo = make_repo({"m.py": "X = 1\n"})
    before = snapshot(repo.path, ("wts",))
    with worktree_pool(repo.git, tmp_path / "wts") as pool, pool.lease("HEAD"), pool.lease("HEAD"):
        monkeypatch.setattr(worktree_module, "CLOSE_BUDGET", 0.0)
        monkeypatch.setattr(Git, "run", hanging_git)
    monkeypatch.undo()
    assert registered_worktrees(repo.path) == [str(repo.path)]
    assert snapshot(repo.path, ("wts",)) == before


def hanging_git(self, *args, **kwargs):
    raise AssertionError(f"git {args[:2]} ran after the cleanup budget was spent")


def test_worktree_admin_folders_have_names_unique_to_the_check(make_repo, tmp_path):
    repo = make_repo({"m.py": "X = 1\n"})
    with (
        worktree_pool(repo.git, tmp_path / "a") as one,
        worktree_pool(repo.git, tmp_path / "b") as two,
        one.lease("HEAD") as a,
        two.lease("HEAD") as b,
    ):
        names = {Path(a.admin_dir).name, Path(b.admin_dir).name}
    assert len(names) == 2 and all(n.startswith("andgate-") for n in names)


def test_dropping_bytecode_never_follows_a_folder_symlinked_out_of_the_worktree(
    make_repo, tmp_path
):
    """A production folder committed as a symlink to a folder outside: moving the
    worktree to a commit where it is a real folder drops its sources' bytecode,
    which must not delete the outside folder's."""
    outside = tmp_path / "outside" / "pkg"
    (outside / "__pycache__").mkdir(parents=True)
    pyc = outside / "__pycache__" / "mod.cpython-311.pyc"
    pyc.write_bytes(b"outside bytecode")
    (outside / "mod.py").write_text("X = 0\n")
    repo = make_repo()
    (repo.path / "pkg").symlink_to(outside, target_is_directory=True)
    linked = repo.commit("pkg is a symlink")
    (repo.path / "pkg").unlink()
    repo.write({"pkg/mod.py": "X = 1\n"})
    real = repo.commit("pkg is a folder")
    with worktree_pool(repo.git, tmp_path / "wts") as pool:
        with pool.lease(linked):
            pass
        with pool.lease(real) as worktree:
            assert (worktree.path / "pkg" / "mod.py").read_text() == "X = 1\n"
        with pool.lease(linked):
            pass
    assert pyc.read_bytes() == b"outside bytecode"


# -- the artifacts folder: a real folder andgate created or owns -----------------------------


def report_context(**files: bytes) -> ReportContext:
    verdict = decide(Facts(gate_errors=("a check of the artifacts folder",)))
    return ReportContext(
        verdict=verdict, base=None, head=None, today=dt.date(2026, 1, 1), files=files
    )


def write_once(path: Path, **claim) -> Artifacts:
    folder = claim_artifacts(path, **claim)
    try:
        return write_artifacts(folder, report_context(**{"oracle.log": b"log\n"}))
    finally:
        folder.close()


def marker_of(folder: Path) -> list[str]:
    return json.loads((folder / MARKER).read_text())["files"]


def test_a_new_folder_is_andgates_own_with_its_gitignore_and_marker(tmp_path):
    out = write_once(tmp_path / "artifacts")
    folder = tmp_path / "artifacts"
    assert (folder / ".gitignore").read_bytes() == b"# written by andgate check\n*\n"
    assert json.loads(out.verdict_json) == json.loads((folder / "verdict.json").read_bytes())
    listed = marker_of(folder)
    assert {".gitignore", "verdict.json", "summary.md", "logs/oracle.log", MARKER} <= set(listed)
    assert sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp")) == []
    write_once(folder)  # its own files are replaced on the next run
    assert marker_of(folder) == listed


def test_a_projects_own_folder_keeps_its_files_and_gets_no_gitignore(tmp_path):
    folder = tmp_path / "artifacts"
    (folder / "logs").mkdir(parents=True)
    (folder / ".gitignore").write_text("!keep-me\n")
    (folder / "README.md").write_text("the project's own\n")
    (folder / "logs" / "old.log").write_text("the project's log\n")
    before = _files(folder)
    write_once(folder)
    write_once(folder)  # again: the marker lets andgate replace only what it wrote
    after = _files(folder)
    assert {k: after[k] for k in before} == before
    assert ".gitignore" not in marker_of(folder)
    assert (folder / "verdict.json").exists()


def test_a_taken_file_name_in_a_projects_folder_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "artifacts"
    folder.mkdir()
    (folder / "summary.md").write_text("the project's summary\n")
    with pytest.raises(AndgateError) as caught:
        write_once(folder)
    message = str(caught.value)
    assert "\n" not in message and str(folder / "summary.md") in message
    assert "did not write it" in message and "--artifacts DIR" in message
    assert sorted(p.name for p in folder.iterdir()) == ["summary.md"]


def test_only_old_logs_the_marker_lists_are_deleted(tmp_path):
    folder = tmp_path / "artifacts"
    write_once(folder)
    victim = tmp_path / "victim"
    victim.write_text("not andgate's\n")
    (folder / "logs" / "mine.log").write_text("the user's own log\n")
    (folder / "logs" / "old.log").write_text("andgate's old log\n")
    forged = [*marker_of(folder), "logs/old.log", "../victim", "logs/../../victim", "/etc/x"]
    (folder / MARKER).write_text(json.dumps({"schema": "andgate.artifacts/1", "files": forged}))
    write_once(folder)
    assert victim.read_text() == "not andgate's\n"
    assert sorted(p.name for p in (folder / "logs").iterdir()) == ["mine.log", "oracle.log"]


def test_a_symlink_planted_in_andgates_own_folder_is_replaced_not_written_through(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "file").write_text("outside\n")
    path = tmp_path / "artifacts"
    folder = claim_artifacts(path)
    try:
        (path / "summary.md").symlink_to(outside / "file")  # a test plants it mid-run
        (path / "logs").symlink_to(outside, target_is_directory=True)
        write_artifacts(folder, report_context(**{"oracle.log": b"log\n"}))
    finally:
        folder.close()
    assert (outside / "file").read_text() == "outside\n"
    assert sorted(p.name for p in outside.iterdir()) == ["file"]
    assert not (path / "summary.md").is_symlink() and not (path / "logs").is_symlink()


def test_a_stale_verdict_never_survives_a_run_that_cannot_write_its_own(tmp_path):
    folder = tmp_path / "artifacts"
    write_once(folder)
    claimed = claim_artifacts(folder)
    claimed.close()
    assert not (folder / "verdict.json").exists()


@pytest.mark.parametrize(
    "where, why",
    [
        ("link", "is a symlink"),
        ("repo/sub/artifacts", "repo/sub is a symlink inside the repository"),
        ("repo/.git/artifacts", "inside the repository's git folder"),
    ],
)
def test_an_unsafe_artifacts_path_is_refused_before_anything_is_written(tmp_path, where, why):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    (repo / "sub").symlink_to(outside, target_is_directory=True)
    before = _files(tmp_path)
    with pytest.raises(AndgateError, match=why):
        claim_artifacts(tmp_path / where, repo=repo, git_dirs=(repo / ".git",))
    assert _files(tmp_path) == before


def test_a_folder_andgate_wrote_before_it_kept_a_marker_is_still_its_own(tmp_path):
    folder = tmp_path / "artifacts"
    write_once(folder)
    (folder / MARKER).unlink()
    write_once(folder)
    assert ".gitignore" in marker_of(folder)


# -- the artifacts folder, end to end -------------------------------------------------------


def gate_cli(sample, head: str, *extra: str) -> list[str]:
    return ["check", "--repo", str(sample.path), "--base", sample.base, "--head", head, *extra]


def outside_folder(sample) -> Path:
    """A folder next to the repository, with a log of the user's own."""
    outside = sample.tmp / "outside"
    (outside / "logs").mkdir(parents=True)
    (outside / "logs" / "x.log").write_text("the user's log\n")
    return outside


@pytest.mark.parametrize("target", [".", ".git/refs/heads", "../outside"])
def test_a_committed_artifacts_symlink_is_refused_and_nothing_is_written(sample, capsys, target):
    outside_folder(sample)
    head = sample.change(lambda r: (r.path / "artifacts").symlink_to(target))
    before = snapshot(sample.path)
    code = main(gate_cli(sample, head, "--jobs", "2"))
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{sample.path / 'artifacts'}: the artifacts folder is a symlink" in err
    assert snapshot(sample.path) == before
    assert (sample.path / ".gitignore").read_text() == BASE_FILES[".gitignore"]


def projects_artifacts(repo: SampleRepo) -> None:
    repo.write(
        {
            "artifacts/.gitignore": "!*\n",
            "artifacts/README.md": "our release artifacts\n",
            "artifacts/logs/build.log": "our build log\n",
        }
    )
    repo.run("add", "-f", "artifacts")


@pytest.mark.slow
@pytest.mark.both_known_bad
def test_a_projects_own_artifacts_folder_and_a_poisoned_killer_cache(sample):
    """Two checks of one head: the second replaces only what the first one wrote
    in the project's own artifacts folder, and the killer cache the first one
    wrote, poisoned in between, never ends it in GATE_ERROR."""
    head = sample.change(lambda r: (honest_fix(r), projects_artifacts(r)))
    cache = sample.tmp / "cache"
    cache.mkdir()
    before = snapshot(sample.path, ("artifacts/", "cache/"))
    folder = sample.path / "artifacts"
    ours = _files(folder)
    run = sample.gate(head, artifacts=None, cache_dir=cache)
    assert run.decision == "allow", run.payload["reasons"]
    entries = sorted((cache / "killers").glob("*.json"))
    assert len(entries) == 2
    for path, poison in zip(entries, ("list", "directory"), strict=True):
        path.unlink()
        POISONS[poison](path)
    run = sample.gate(head, artifacts=None, cache_dir=cache)
    assert run.decision == "allow", run.payload["reasons"]
    assert [f["bites"] for f in run.artifact("known_bad.json")["fixtures"]] == [True, True]
    for path in entries:
        assert json.loads(path.read_text())["schema"] == SCHEMA  # rewritten
    after = _files(folder)
    assert {k: after[k] for k in ours} == ours
    assert set(after) - set(ours) == set(marker_of(folder))
    assert snapshot(sample.path, ("artifacts/", "cache/")) == before
    assert sample.repo.run("diff", "--stat") == ""


@pytest.mark.slow
def test_artifacts_in_the_repository_root_leave_its_gitignore_alone(sample):
    head = sample.change(honest_fix)
    written = {"verdict.json", "summary.md", MARKER}
    before = snapshot(sample.path)
    run = sample.gate(head, artifacts=sample.path)
    assert run.decision == "allow", run.payload["reasons"]
    assert (sample.path / ".gitignore").read_text() == BASE_FILES[".gitignore"]
    listed = set(marker_of(sample.path))
    assert written <= listed and ".gitignore" not in listed
    after = snapshot(sample.path)
    tree = {k: v for k, v in after["tree"].items() if k not in listed and k != "logs"}
    assert {**after, "tree": tree} == before


# -- results read once, the verdict printed from memory -------------------------------------


def test_a_junit_file_skipped_as_broken_is_never_read_again(tmp_path):
    """The oracle's JUnit file was broken when its phase ended; an untrusted test
    that later writes a forged one in its place changes no artifact."""
    junit = tmp_path / "oracle.xml"
    junit.write_bytes(b"<testsuites><testsuite")  # pytest died while writing it
    log = tmp_path / "absent.log"
    captured = Captured()
    runs = {RunKey(RunName.ORACLE): RunResult("oracle", 0, 1.0, junit=junit, log=log)}
    captured.collect(runs)
    junit.write_bytes(b'<testsuites><testsuite name="forged" tests="1"/></testsuites>')
    log.write_bytes(b"forged log\n")
    captured.collect(runs)  # the end of a later, less trusted phase
    assert captured.files == {}


@pytest.mark.parametrize("value", ["nan", "inf", "NaN", "infinity"])
def test_a_timeout_that_never_expires_is_refused(capsys, value):
    with pytest.raises(SystemExit) as exited:
        main(["check", "--timeout", value])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert f"argument --timeout: '{value}' must be a number of seconds > 0" in err


def test_json_prints_the_verdict_from_memory_not_from_disk(sample, capsys, monkeypatch):
    import andgate.check.pipeline

    real = andgate.check.pipeline.write_artifacts

    def then_forged(folder, ctx):
        written = real(folder, ctx)
        forged = {"schema": "andgate.verdict/1", "verdict": "allow", "reasons": []}
        (written.folder / "verdict.json").write_text(json.dumps(forged))
        return written

    monkeypatch.setattr(andgate.check.pipeline, "write_artifacts", then_forged)
    artifacts = sample.tmp / "artifacts"
    code = main(gate_cli(sample, sample.base, "--artifacts", str(artifacts), "--json"))
    out = capsys.readouterr().out
    assert code == 2
    printed = json.loads(out)
    assert printed["verdict"] == "block" and printed["reasons"][0]["code"] == "GATE_ERROR"


# -- init: a folder name never breaks the manifest ------------------------------------------


def test_init_quotes_a_folder_name_with_a_double_quote(make_repo, capsys):
    repo = make_repo({'we"ird/test_a.py': "def test_a():\n    pass\n"})
    assert run_init(repo.path) == 0
    text = (repo.path / DEFAULT_MANIFEST).read_text(encoding="utf-8")
    manifest = parse_manifest(text, DEFAULT_MANIFEST)
    assert 'we"ird/**/*.py' in manifest.frozen_flake.globs
    uncommented = "\n".join(line.lstrip(" #") for line in text.splitlines())
    assert '"we\\"ird/**/*.py"' in uncommented


def test_init_with_a_non_utf8_folder_name_writes_a_valid_manifest(make_repo, capsys):
    repo = make_repo({"tests/test_b.py": "def test_b():\n    pass\n"})
    folder = os.fsencode(repo.path) + b"/caf\xe9"
    os.mkdir(folder)
    with open(folder + b"/test_a.py", "wb") as fh:
        fh.write(b"def test_a():\n    pass\n")
    repo.commit("a folder whose name is not UTF-8")
    assert run_init(repo.path) == 0
    data = (repo.path / DEFAULT_MANIFEST).read_bytes()
    assert data, "a 0-byte manifest"
    manifest = parse_manifest(data.decode("utf-8"), DEFAULT_MANIFEST)
    assert manifest.frozen_flake.globs == ("tests/**/*.py",)


# -- end to end: worktrees, caches and other processes --------------------------------------


@pytest.mark.slow
def test_a_check_keeps_a_users_worktree_whose_folder_is_away(sample):
    head = sample.change(honest_fix)
    disk = sample.tmp / "disk"
    sample.repo.run("worktree", "add", "--detach", str(disk / "feature"), sample.base)
    disk.rename(sample.tmp / "disk-away")  # unmounted while the check runs
    before = snapshot(sample.path, ("artifacts",))
    run = sample.gate(head)
    assert run.decision == "allow", run.payload["reasons"]
    assert snapshot(sample.path, ("artifacts",)) == before
    (sample.tmp / "disk-away").rename(disk)
    assert registered_worktrees(sample.path) == [str(sample.path), str(disk / "feature")]


@pytest.mark.slow
def test_two_checks_of_one_repository_at_once_both_finish_and_leave_nothing(sample):
    head = sample.change(honest_fix)
    before = snapshot(sample.path, ("artifacts",))
    argv = [sys.executable, "-m", "andgate", *gate_cli(sample, head, "--jobs", "1", "--json")]
    argv += ["--no-discrimination"]  # two checks' worktrees and caches at once are the point
    procs = [
        subprocess.Popen(
            [*argv, "--artifacts", str(sample.tmp / f"artifacts-{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(2)
    ]
    results = [proc.communicate(timeout=600) for proc in procs]
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err.decode()
        assert json.loads(out)["verdict"] == "allow"
    assert registered_worktrees(sample.path) == [str(sample.path)]
    assert snapshot(sample.path, ("artifacts",)) == before


def _gc_read_a_placeholder_head(message: str) -> bool:
    return any(
        f"{words} worktrees/andgate-" in message
        for words in ("bad object", "unable to parse object:")
    )


@pytest.mark.slow
def test_a_check_while_the_user_commits_and_runs_git_gc(sample):
    head = sample.change(honest_fix)
    done = threading.Event()
    errors: list[BaseException] = []

    def busy_user() -> None:
        try:
            for n in range(1000):
                if done.is_set():
                    break
                sample.repo.write({"notes.txt": f"note {n}\n"})
                sample.repo.commit(f"note {n}")
                sample.repo.run("gc", "--quiet")
        except BaseException as exc:  # asserted on below
            # git's own race, not andgate's: `git worktree add` writes a placeholder
            # HEAD (the null id) while it populates a worktree, and a gc that reads it
            # at that moment fails ("bad object" from reflog expire, "unable to parse
            # object" from prune); the gc after the check below must succeed.
            if not _gc_read_a_placeholder_head(str(exc)):
                errors.append(exc)

    user = threading.Thread(target=busy_user)
    user.start()
    try:
        run = sample.gate(head)
    finally:
        done.set()
        user.join(timeout=120)
    assert errors == []
    assert run.decision == "allow", run.payload["reasons"]
    sample.repo.run("gc", "--quiet")  # the repository is whole afterwards
    assert registered_worktrees(sample.path) == [str(sample.path)]
    worktrees = sample.path / ".git" / "worktrees"
    assert not worktrees.exists() or list(worktrees.iterdir()) == []
