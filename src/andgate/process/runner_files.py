"""The CI runner's command files, kept out of reach of the tests andgate runs.

GitHub's runner reads a step's outputs, job summary, environment, PATH additions and
state from files named by `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `GITHUB_ENV`,
`GITHUB_PATH` and `GITHUB_STATE`. Test processes never get those names (`run.
SCRUBBED_ENV`), but the paths can be guessed (`$RUNNER_TEMP/_runner_file_commands/...`),
so removing the names is not enough: a test that appends `verdict=allow`, or opens a
multi-line value that swallows andgate's own lines, would rewrite what the gate
publishes. So the size and sha256 of each file are taken before the first test runs,
and before andgate writes anything there: bytes appended since are cut off (warning
RUNNER_FILE_RESTORED), and a file whose earlier bytes changed (or that was replaced,
shrunk or removed) is a GATE_ERROR naming it; andgate still publishes its block.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass

RUNNER_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE")
# Names test processes never see: the five files and the folder they live in.
HIDDEN_FROM_TESTS = (*RUNNER_FILES, "RUNNER_TEMP")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Snapshot:
    """One runner file as it was before any test ran (`size` None: it did not exist)."""

    variable: str
    path: str
    size: int | None
    digest: str = ""
    inode: tuple[int, int] = (0, 0)


@dataclass
class Restored:
    """What restoring found: warnings (RUNNER_FILE_RESTORED) and gate errors."""

    warnings: list[str]
    errors: list[str]


def take(environ: Mapping[str, str]) -> tuple[Snapshot, ...]:
    """Size, digest and identity of each runner file the environment names."""
    return tuple(_snapshot(name, environ[name]) for name in RUNNER_FILES if environ.get(name))


def _snapshot(variable: str, path: str) -> Snapshot:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return Snapshot(variable, path, None)
    except OSError:
        # a symlink or unreadable file before any test ran: nothing to compare against,
        # so any content later counts as changed (fail closed)
        return Snapshot(variable, path, -1)
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(stream.fileno())
        digest, size = _digest(stream, info.st_size)
        return Snapshot(variable, path, size, digest, (info.st_dev, info.st_ino))


def _digest(stream: object, limit: int) -> tuple[str, int]:
    read = stream.read  # type: ignore[attr-defined]
    sha, left = hashlib.sha256(), limit
    while left > 0:
        chunk = read(min(CHUNK, left))
        if not chunk:
            break
        sha.update(chunk)
        left -= len(chunk)
    return sha.hexdigest(), limit - left


def restore(snapshots: tuple[Snapshot, ...]) -> Restored:
    """Cut off what tests appended; report every file whose earlier bytes changed."""
    found = Restored([], [])
    for snap in snapshots:
        _restore_one(snap, found)
    return found


def _restore_one(snap: Snapshot, found: Restored) -> None:
    where = f"${snap.variable} ({snap.path})"
    try:
        fd = os.open(snap.path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        if snap.size is not None:
            found.errors.append(f"{where} was removed while tests ran; its outputs are lost")
        return
    except OSError as exc:
        found.errors.append(f"{where} was replaced while tests ran ({exc.strerror})")
        return
    with os.fdopen(fd, "r+b") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            found.errors.append(f"{where} is no longer a regular file")
            return
        _compare(snap, stream, info, where, found)


def _compare(
    snap: Snapshot, stream: object, info: os.stat_result, where: str, found: Restored
) -> None:
    size = 0 if snap.size is None else snap.size
    same_file = snap.size is None or (info.st_dev, info.st_ino) == snap.inode
    if snap.size == -1 or not same_file or info.st_size < size:
        found.errors.append(f"{where}: its earlier content changed while tests ran")
        return
    digest, _ = _digest(stream, size)
    if snap.size is not None and digest != snap.digest:
        found.errors.append(f"{where}: its earlier content changed while tests ran")
    if info.st_size > size:
        stream.truncate(size)  # type: ignore[attr-defined]
        found.warnings.append(
            f"{where}: {info.st_size - size} bytes a test appended were cut off before "
            "andgate wrote to it"
        )
