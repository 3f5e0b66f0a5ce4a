"""Verified worktree switches (contract section 4, step 4): a pool worktree reused for a
trusted run is its commit byte for byte (hashed, never git's stat data), with no file
git does not track, bytecode caches included; anything else rebuilds it, and the
check's log says so."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from andgate.commands.sample import SampleRepo
from andgate.git import TreeEntry, blob_id
from andgate.process.worktree import Worktree, same_files, worktree_pool

ORACLE = "tests/test_x.py"
SOURCE = "def test_x():\n    assert chunk(1) == [1]\n"


def two_commits(make_repo: Callable[..., SampleRepo]) -> tuple[SampleRepo, str, str]:
    repo = make_repo({ORACLE: SOURCE, "m.py": "X = 1\n"})
    one = repo.run("rev-parse", "HEAD")
    repo.write({"m.py": "X = 2\n"})
    return repo, one, repo.commit("two")


def hide_a_rewrite(worktree: Worktree) -> None:
    """What code that ran in the worktree can do: neuter a test file keeping its size,
    then tell git not to look at it (`checkout --force` skips a skip-worktree entry)."""
    path = worktree.path / ORACLE
    path.write_text(SOURCE.replace("assert chunk(", "assert True or chunk(")[: len(SOURCE)])
    hide = ["git", "update-index", "--skip-worktree", ORACLE]
    subprocess.run(hide, cwd=worktree.path, check=True)


def test_a_hidden_rewrite_survives_an_unverified_switch(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Why trusted runs verify: git's own reset trusts what the index says."""
    repo, one, two = two_commits(make_repo)
    with worktree_pool(repo.git, tmp_path / "wts") as pool:
        with pool.lease(one) as worktree:
            hide_a_rewrite(worktree)
        with pool.lease(two) as worktree:
            assert (worktree.path / ORACLE).read_text() != SOURCE


@pytest.mark.parametrize("listed", [False, True], ids=["git", "hashed-here"])
def test_a_verified_switch_rebuilds_a_worktree_that_is_not_its_commit(
    make_repo, tmp_path, listed
) -> None:  # type: ignore[no-untyped-def]
    repo, one, two = two_commits(make_repo)
    with worktree_pool(repo.git, tmp_path / "wts") as pool:
        if listed:  # the plan's listings: the switch hashes the files itself first
            for commit in (one, two):
                pool.listings[commit] = {e.path: e for e in repo.git.ls_tree(commit)}
        with pool.lease(one, verified=True) as worktree:
            hide_a_rewrite(worktree)
            first = worktree.path
        with pool.lease(two, verified=True) as worktree:
            assert worktree.path == first  # the same pool slot, its folder made anew
            assert (worktree.path / ORACLE).read_text() == SOURCE
            assert (worktree.path / "m.py").read_text() == "X = 2\n"
            assert worktree.differences(two) == []
        assert pool.journal == [
            f"{first.name}: switched to {two[:12]} for a trusted run, it still held what an "
            f"earlier run left ({ORACLE} differs): rebuilt"
        ]


def test_a_verified_switch_leaves_no_cache_and_no_untracked_file(make_repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Caches and files a run wrote go with the clean: nothing to rebuild for."""
    repo, one, two = two_commits(make_repo)
    with worktree_pool(repo.git, tmp_path / "wts") as pool:
        with pool.lease(one, verified=True) as worktree:
            caches = worktree.path / "tests" / "__pycache__"
            caches.mkdir()
            (caches / "test_x.cpython-311-pytest-9.0.0.pyc").write_bytes(b"planted")
            (worktree.path / "tests" / "snapshot.txt").write_text("a snapshot test's file")
        with pool.lease(two, verified=True) as worktree:
            assert not (worktree.path / "tests" / "__pycache__").exists()
            assert not (worktree.path / "tests" / "snapshot.txt").exists()
        assert pool.journal == []


def test_differences_name_what_is_not_the_commit(make_repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo, one, _ = two_commits(make_repo)
    with worktree_pool(repo.git, tmp_path / "wts") as pool, pool.lease(one) as worktree:
        assert worktree.differences(one) == []
        time.sleep(1.1)  # past the second git wrote the files in: no racy entry
        repo_file = worktree.path / "m.py"
        stat = repo_file.stat()
        repo_file.write_text("X = 9\n")  # same size, same mtime
        os.utime(repo_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        (worktree.path / "tests" / "__pycache__").mkdir()
        (worktree.path / "tests" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"")
        assert sorted(worktree.differences(one)) == [
            "m.py differs",
            "tests/__pycache__/m.cpython-311.pyc is untracked",
        ]


def entry(path: str, data: bytes, mode: str = "100644") -> TreeEntry:
    return TreeEntry(mode, "blob", blob_id(data, "0" * 40), path)


def a_tree(root: Path) -> dict[str, TreeEntry]:
    """A small checkout: a file, an executable, a link, a submodule's folder."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/m.py").write_bytes(b"X = 1\n")
    (root / "run.sh").write_bytes(b"#!/bin/sh\n")
    (root / "run.sh").chmod(0o755)
    (root / "link.py").symlink_to("pkg/m.py")
    (root / "vendor").mkdir()
    (root / ".git").write_text("gitdir: elsewhere\n")
    files = [entry("pkg/m.py", b"X = 1\n"), entry("run.sh", b"#!/bin/sh\n", "100755")]
    files.append(entry("link.py", b"pkg/m.py", "120000"))
    files.append(TreeEntry("160000", "commit", "c" * 40, "vendor"))
    return {e.path: e for e in files}


def test_same_files_hashes_bytes_modes_and_links(tmp_path: Path) -> None:
    files = a_tree(tmp_path)
    assert same_files(tmp_path, files)
    (tmp_path / "pkg/m.py").write_bytes(b"X = 2\n")
    assert not same_files(tmp_path, files)
    (tmp_path / "pkg/m.py").write_bytes(b"X = 1\n")
    (tmp_path / "run.sh").chmod(0o644)
    assert not same_files(tmp_path, files)
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "link.py").unlink()
    (tmp_path / "link.py").symlink_to("elsewhere.py")
    assert not same_files(tmp_path, files)


@pytest.mark.parametrize(
    "left",
    ["pkg/__pycache__/m.cpython-311.pyc", "pkg/new.py", "empty/", "dirlink", "vendor/x"],
)
def test_same_files_finds_what_git_does_not_track(tmp_path: Path, left: str) -> None:
    files = a_tree(tmp_path)
    if left == "dirlink":
        (tmp_path / "dirlink").symlink_to("pkg")
    elif left.endswith("/"):
        (tmp_path / left).mkdir()
    else:
        (tmp_path / left).parent.mkdir(exist_ok=True)
        (tmp_path / left).write_bytes(b"")
    assert same_files(tmp_path, files) is (left == "vendor/x")  # a submodule: not looked into
