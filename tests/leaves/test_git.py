"""The git wrapper's tree cache, its long-lived cat-file process, and the parsers
of git's machine-readable output that the worktree reset relies on."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from andgate.errors import GateTimeout, GitError
from andgate.git import LONG_LIVED_BATCH, Git, blob_id
from andgate.process.worktree import numstat_paths, status_paths

HEAD = "ab" * 20


def test_status_paths_name_every_kind_of_entry_and_head():
    raw = b"\0".join(
        [
            f"# branch.oid {HEAD}".encode(),
            b"# branch.head (detached)",
            b"1 .M N... 100644 100644 100644 aaaa aaaa src/a file.py",
            b"u UU N... 100644 100644 100644 100644 bbbb cccc dddd both.py",
            b"? new dir/n.py",
            b"! pkg/__pycache__/m.cpython-311.pyc",
            b"",
        ]
    )
    head, paths = status_paths(raw)
    assert head == HEAD
    assert paths == [
        "src/a file.py",
        "both.py",
        "new dir/n.py",
        "pkg/__pycache__/m.cpython-311.pyc",
    ]


def test_status_of_an_unborn_head_names_no_commit():
    assert status_paths(b"# branch.oid (initial)\0? a.py\0") == (None, ["a.py"])


def test_numstat_paths_keep_tabs_and_binary_files():
    raw = b"1\t0\tx.py\0-\t-\tlogo.png\x000\t0\td/with\ttab.py\0"
    assert numstat_paths(raw) == ["x.py", "logo.png", "d/with\ttab.py"]


def test_a_commits_whole_tree_is_listed_once_and_anything_else_every_time(tmp_path, monkeypatch):
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, check=True)
        return done.stdout.decode().strip()

    def commit(name: str) -> str:
        (tmp_path / name).write_text("X = 1\n")
        git("add", name)
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name)
        return git("rev-parse", "HEAD")

    git("init", "-q")
    sha = commit("a.py")
    repo = Git(tmp_path)
    calls = []
    run = repo.run
    monkeypatch.setattr(repo, "run", lambda *a, **k: calls.append(a) or run(*a, **k))
    assert [e.path for e in repo.ls_tree("HEAD")] == ["a.py"]
    for _ in range(2):
        listed = repo.ls_tree(sha)
        assert [e.path for e in listed] == ["a.py"]
        listed.clear()  # a caller's list is its own
    assert len(calls) == 2
    commit("b.py")
    assert [e.path for e in repo.ls_tree("HEAD")] == ["a.py", "b.py"]  # a ref moves
    assert [e.path for e in repo.ls_tree(sha, ["a.py"])] == ["a.py"]  # from the listing
    assert len(calls) == 3


def test_paths_under_a_listed_tree_are_what_git_lists_for_them(tmp_path):
    files = {
        name: b"x\n"
        for name in [
            "tests.py",
            "tests/a.py",
            "tests/sub/b.py",
            "tests2/c.py",
            "t/d.py",
            "e",
            ":x/y.py",
            "*.py",
        ]
    }
    repo, head = _repo_with_files(tmp_path, files)
    repo.ls_tree(head)  # the whole tree, listed once
    for paths in (
        ["tests"],
        ["tests/"],
        ["tests/sub"],
        ["tests.py", "e"],
        ["missing"],
        ["t"],
        [":x"],  # pathspec magic is read literally
        ["*.py"],
        ["./t"],  # normalised by git: asked of git
        ["tests//sub"],
        ["."],
    ):
        assert repo.ls_tree(head, paths) == Git(tmp_path).ls_tree(head, paths), paths


# -- the long-lived cat-file process ---------------------------------------------------


def _repo_with_files(path: Path, files: dict[str, bytes]) -> tuple[Git, str]:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=path, capture_output=True, check=True)
        return done.stdout.decode().strip()

    git("init", "-q")
    for name, data in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "files")
    return Git(path), git("rev-parse", "HEAD")


FILES = {
    "a.py": b"X = 1\n",
    "empty.txt": b"",
    "no newline": b"last line",
    "blank lines.txt": b"\n\n\n",
    "bin.dat": bytes(range(256)) * 300,  # larger than one pipe read, with newlines inside
    "pkg/b.py": b"Y = 2\n",
}


def _everything_read(repo: Git, head: str) -> tuple[object, ...]:
    shas = {e.path: e.sha for e in repo.ls_tree(head)}
    return (
        {name: repo.read_blob(head, name) for name in [*FILES, "pkg", "missing.py"]},
        repo.read_blobs([*shas.values(), "0" * 40]),
        repo.blob_sizes([*shas.values(), "0" * 40]),
    )


def test_reads_in_the_block_answer_as_a_git_process_each_does_with_no_git_process(
    tmp_path, monkeypatch
):
    repo, head = _repo_with_files(tmp_path, FILES)
    alone = _everything_read(repo, head)
    assert alone[0]["bin.dat"] == FILES["bin.dat"] and alone[0]["pkg"] is None
    assert alone[0]["missing.py"] is None and alone[0]["empty.txt"] == b""
    cat_files = []
    run = repo.run
    monkeypatch.setattr(repo, "run", lambda *a, **k: cat_files.append(a) or run(*a, **k))
    with repo.reading():
        assert _everything_read(repo, head) == alone
        batches = list(repo._batches.values())
    assert cat_files == []
    assert len(batches) == 2 and all(not b.alive() for b in batches)  # ended with the block


def test_a_batch_larger_than_the_long_lived_limit_is_a_git_process_of_its_own(tmp_path):
    files = {f"f{i}.py": f"N = {i}\n".encode() for i in range(LONG_LIVED_BATCH + 1)}
    repo, head = _repo_with_files(tmp_path, files)
    shas = [e.sha for e in repo.ls_tree(head)]
    with repo.reading():
        got = repo.read_blobs(shas)
        assert repo._batches == {}
    assert sorted(got.values()) == sorted(files.values())


def test_threads_share_the_process_and_each_gets_its_own_blob(tmp_path):
    files = {f"f{i}.py": (f"N = {i}\n" * (i * 500 + 1)).encode() for i in range(8)}
    repo, head = _repo_with_files(tmp_path, files)
    with repo.reading(), ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda n: repo.read_blob(head, n), [*files] * 8))
    assert got == [*files.values()] * 8


def _fake_git(tmp_path: Path, monkeypatch, body: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "git"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_a_cat_file_that_never_answers_times_out_and_is_killed(tmp_path, monkeypatch):
    _fake_git(tmp_path, monkeypatch, "exec sleep 60")
    repo = Git(tmp_path, timeout=0.5)
    with repo.reading():
        with pytest.raises(GateTimeout, match=r"cat-file ran past 0\.5s"):
            repo.read_blob("HEAD", "a.py")
        [batch] = repo._batches.values()
        assert not batch.alive()


def test_the_timeout_holds_when_a_process_git_started_keeps_its_stderr(tmp_path, monkeypatch):
    """A lazy fetch of a partial clone, say: killing git leaves it holding the pipe,
    and reading what git wrote must not wait for it to end."""
    pid_file = tmp_path / "child.pid"
    _fake_git(tmp_path, monkeypatch, f"sleep 30 & echo $! > {pid_file}; wait")
    repo = Git(tmp_path, timeout=0.5)
    started = time.monotonic()
    try:
        with repo.reading(), pytest.raises(GateTimeout):
            repo.read_blob("HEAD", "a.py")
        assert time.monotonic() - started < 15  # not the 30 s of the child
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.mark.parametrize(
    "script, ends",
    [
        ("echo 'fatal: bad object' >&2; exit 3", "before it is asked"),
        ("read request; echo 'fatal: bad object' >&2; exit 3", "while it answers"),
    ],
)
def test_a_cat_file_that_dies_is_a_git_error_and_the_next_read_starts_another(
    tmp_path, monkeypatch, script, ends
):
    _fake_git(tmp_path, monkeypatch, script)
    repo = Git(tmp_path)
    with repo.reading():
        if ends == "before it is asked":
            repo._long_lived("--batch").proc.wait()  # type: ignore[union-attr]
        with pytest.raises(GitError, match=r"cat-file ended early \(exit 3\): fatal: bad object"):
            repo.read_blob("HEAD", "a.py")
        first = repo._batches["--batch"]
        with pytest.raises(GitError):
            repo.read_blob("HEAD", "a.py")
        assert repo._batches["--batch"] is not first


def test_an_interrupt_halfway_through_an_answer_ends_the_process(tmp_path, monkeypatch):
    """The next read must not take the rest of this answer for its own."""
    _fake_git(tmp_path, monkeypatch, "read request; printf 'abc blob 10\\n12345'; exec sleep 60")
    repo = Git(tmp_path, timeout=30)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with repo.reading():
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            with pytest.raises(KeyboardInterrupt):
                repo.read_blob("HEAD", "a.py")
            assert not repo._batches["--batch"].alive()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_path_with_a_newline_is_refused_not_read_as_two(tmp_path):
    repo, head = _repo_with_files(tmp_path, {"a": b"A\n"})
    for reading in (contextlib.nullcontext(), repo.reading()):
        with reading, pytest.raises(GitError, match="a path with a newline"):
            repo.read_blob(head, "a\nb")


def _rewrite_loose_object(repo: Path, sha: str, data: bytes) -> None:
    """What code under test can do to a repository: replace an object file's bytes
    (git's cat-file does not check them against the object's id)."""
    import zlib

    path = repo / ".git" / "objects" / sha[:2] / sha[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(data) + data))


@pytest.mark.parametrize("long_lived", [True, False])
def test_a_verified_read_refuses_an_object_whose_bytes_were_rewritten(tmp_path, long_lived):
    repo, head = _repo_with_files(tmp_path, {"given.py": b"X = 1\n", "other.py": b"Y = 2\n"})
    shas = {e.path: e.sha for e in repo.ls_tree(head)}
    _rewrite_loose_object(tmp_path, shas["given.py"], b"X = 1  # Hello World\n")
    with repo.reading() if long_lived else contextlib.nullcontext():
        assert repo.read_blobs([shas["given.py"]])[shas["given.py"]].endswith(b"World\n")
        assert repo.read_blobs([shas["other.py"]], verify=True) == {shas["other.py"]: b"Y = 2\n"}
        with pytest.raises(GitError, match=f"object {shas['given.py']} no longer holds"):
            repo.read_blobs(shas.values(), verify=True)


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_a_blobs_id_is_the_one_git_gives_it(tmp_path, object_format):
    data = b"line\n\0binary\xff"
    (tmp_path / "blob").write_bytes(data)
    subprocess.run(
        ["git", "init", "-q", f"--object-format={object_format}"], cwd=tmp_path, check=True
    )
    given = subprocess.run(
        ["git", "hash-object", "blob"], cwd=tmp_path, capture_output=True, check=True, text=True
    ).stdout.strip()
    assert blob_id(data, given) == given
    assert blob_id(data + b"!", given) != given


def test_no_git_call_runs_a_program_the_repositorys_config_names(tmp_path):
    """Code under test can write the repository's config while a check runs: the
    gate's later git calls must not run its fsmonitor hook or its git hooks."""
    (tmp_path / "repo").mkdir()
    repo, _ = _repo_with_files(tmp_path / "repo", {"a.py": b"x = 1\n"})
    marker = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "post-checkout").symlink_to(hook)
    for key, value in (("core.fsmonitor", str(hook)), ("core.hooksPath", str(hooks))):
        subprocess.run(["git", "config", key, value], cwd=repo.repo, check=True)
    (repo.repo / "a.py").write_text("x = 2\n")
    repo.run("status", "--porcelain")
    repo.run("checkout", "--", "a.py")
    with repo.reading():
        repo.read_blob("HEAD", "a.py")
    assert not marker.exists()
