"""Never harm the user's repository, machine or next run.

Each test builds a hostile state (symlinks, a worktree folder that is away,
poisoned caches, concurrent checks, a planted JUnit file), runs the gate, and
asserts the verdict and that nothing outside andgate's own folders changed: the
repository's tree, index, refs, `.git/worktrees` and the folders around it are
compared byte for byte before and after.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from andgate import worktree as worktree_module
from andgate.cache import SCHEMA, KillerCache
from andgate.errors import GateTimeout
from andgate.git import Git
from andgate.worktree import worktree_pool

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
    assert registered_worktrees(repo.path) == [str(repo.path)]
    assert snapshot(repo.path, ("wts",)) == before
    assert not (tmp_path / "wts").exists() or list((tmp_path / "wts").iterdir()) == []


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
