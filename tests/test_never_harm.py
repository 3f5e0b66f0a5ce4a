"""Never harm the user's repository, machine or next run.

Each test builds a hostile state (symlinks, a worktree folder that is away,
poisoned caches, concurrent checks, a planted JUnit file), runs the gate, and
asserts the verdict and that nothing outside andgate's own folders changed: the
repository's tree, index, refs, `.git/worktrees` and the folders around it are
compared byte for byte before and after.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from andgate.cache import SCHEMA, KillerCache

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
