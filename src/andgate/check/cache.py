"""andgate's cache folder: remembered facts that only ever make the gate faster.

Nothing read from here can change a verdict. The one use today is the
known-bad killer cache: which oracle item failed under a fixture last time, so
the next replay runs that item's file first (whole and in order, never the item
alone). A wrong or poisoned entry costs a run of the other oracle files, never a
pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from andgate import writer

SCHEMA = "andgate.killers/1"
# An entry is three node ids; anything much larger was not written by andgate.
MAX_ENTRY_BYTES = 64 * 1024


def default_cache_dir() -> Path:
    """$ANDGATE_CACHE_DIR, else $XDG_CACHE_HOME/andgate, else ~/.cache/andgate."""
    explicit = os.environ.get("ANDGATE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "andgate"


def digest(parts: Iterable[str | bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


class KillerCache:
    """Oracle items that failed under a fixture, keyed by the fixture's bytes and
    the oracle files' contents: a change to either forgets the entry."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder / "killers" if folder is not None else None

    def _path(self, patch: bytes, oracle_digest: str) -> Path | None:
        if self.folder is None:
            return None
        return self.folder / f"{digest([patch, oracle_digest])}.json"

    def get(self, patch: bytes, oracle_digest: str) -> tuple[str, ...]:
        """The remembered killers, or () for anything that is not an entry andgate
        wrote: any other JSON, a truncated or huge file, a folder, a symlink, a
        FIFO, an unreadable file. Never raises."""
        path = self._path(patch, oracle_digest)
        if path is None:
            return ()
        try:
            data = json.loads(_read_regular(path, MAX_ENTRY_BYTES))
        except (OSError, ValueError, RecursionError):
            return ()
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            return ()
        killers = data.get("killers")
        if not isinstance(killers, list) or not all(isinstance(k, str) for k in killers):
            return ()
        return tuple(killers)[:3]

    def put(self, patch: bytes, oracle_digest: str, killers: Iterable[str]) -> None:
        """Replace the entry atomically, whatever is in its place (never through a
        symlink); a cache that cannot be written only costs speed, so never raises."""
        path = self._path(patch, oracle_digest)
        if path is None:
            return
        payload = json.dumps({"schema": SCHEMA, "killers": sorted(set(killers))[:3]})
        put_entry(path, payload.encode())


def put_entry(path: Path, data: bytes) -> None:
    """Replace a cache entry atomically, whatever is in its place (never through a
    symlink); a cache that cannot be written only costs speed, so never raises."""
    try:
        folder = writer.open_folder(path.parent)
    except (OSError, writer.RefusedPath):
        return
    try:
        writer.put(folder, path.name, data)
    except OSError:
        pass
    finally:
        os.close(folder)


def _read_regular(path: Path, limit: int) -> bytes:
    """A regular file's bytes, opened without following a symlink or blocking on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise ValueError(f"{path}: not a cache entry")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(limit + 1)
    finally:
        os.close(fd)


GREEN_SCHEMA = "andgate.harvest-green/1"


class GreenCache:
    """Reverts (`known-bad harvest`) the oracle class let through, keyed by the
    re-targeted revert's bytes and the oracle files' contents: such a revert is not
    replayed again. A hint that can only make a revert look *not* caught (a wrong
    entry hides a candidate fixture; `--no-cache` replays everything), never caught:
    a revert the oracle killed is always replayed (its killers first)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder / "harvest" if folder is not None else None

    def _path(self, patch: bytes, oracle_digest: str) -> Path | None:
        if self.folder is None:
            return None
        return self.folder / f"{digest([b'green', patch, oracle_digest])}.json"

    def get(self, patch: bytes, oracle_digest: str) -> bool:
        path = self._path(patch, oracle_digest)
        if path is None:
            return False
        try:
            data = json.loads(_read_regular(path, MAX_ENTRY_BYTES))
        except (OSError, ValueError, RecursionError):
            return False
        return isinstance(data, dict) and data.get("schema") == GREEN_SCHEMA

    def put(self, patch: bytes, oracle_digest: str) -> None:
        path = self._path(patch, oracle_digest)
        if path is not None:
            put_entry(path, json.dumps({"schema": GREEN_SCHEMA}).encode())


class SharedKillers(KillerCache):
    """The killer cache, plus what this run learnt: a patch with no entry of its own
    tries first the items that killed the last patch of the same file. Mutants of
    one function, and reverted fixes of one module, mostly die by the same test.
    Like the cache, this only picks what runs first."""

    def __init__(self, folder: Path | None) -> None:
        super().__init__(folder)
        self._by_file: dict[str, tuple[str, ...]] = {}

    def get(self, patch: bytes, oracle_digest: str) -> tuple[str, ...]:
        remembered = super().get(patch, oracle_digest)
        if remembered:
            return remembered
        learnt = [k for path in patched_files(patch) for k in self._by_file.get(path, ())]
        return tuple(dict.fromkeys(learnt))[:3]

    def put(self, patch: bytes, oracle_digest: str, killers: Iterable[str]) -> None:
        killers = tuple(sorted(set(killers))[:3])
        super().put(patch, oracle_digest, killers)
        for path in patched_files(patch):
            self._by_file[path] = killers


def patched_files(patch: bytes) -> tuple[str, ...]:
    """The paths a patch's `+++ b/<path>` headers name."""
    found = []
    for line in patch.splitlines():
        if line.startswith(b"+++ b/"):
            found.append(line[6:].decode("utf-8", "surrogateescape").rstrip("\t"))
    return tuple(dict.fromkeys(found))
