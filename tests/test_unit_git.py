"""The git wrapper's tree cache, and the parsers of git's machine-readable output
that the worktree reset relies on."""

from __future__ import annotations

import subprocess

from andgate.git import Git
from andgate.worktree import numstat_paths, status_paths

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
    assert [e.path for e in repo.ls_tree(sha, ["a.py"])] == ["a.py"]
    assert len(calls) == 4
