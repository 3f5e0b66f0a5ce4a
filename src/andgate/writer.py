"""The one writer for everything andgate writes: artifacts, bundles, proposals,
mutants, the killer cache, the lock and freeze files.

A repository a change controls can hold a symlink anywhere (`artifacts -> /etc`), and
test code can plant one while the gate runs. So a folder andgate writes into is
claimed once: opened one component at a time without following a symlink
(`O_DIRECTORY | O_NOFOLLOW`, relative to the folder above), from where the user's
own layout ends (the repository's top for a path inside it, else the folder's
parent: a path outside the repository is the user's to lay out). Its descriptor is
kept, and every file is created relative to it (`dir_fd`): a temp file created
exclusively and without following a link, then renamed over the entry, so a link
planted in the entry's place is replaced, never followed. A symlink at any level
is refused with one line naming it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from types import TracebackType

from andgate.errors import AndgateError

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class RefusedPath(AndgateError):
    """A folder andgate would write into is, or lies under, a symlink (or a file);
    `at` is the entry that is not a real folder."""

    def __init__(self, message: str, at: Path) -> None:
        super().__init__(message)
        self.at = at


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _refused(path: Path, at: Path) -> RefusedPath:
    what = "is a symlink" if at == path else f"lies under the symlink {at}"
    return RefusedPath(
        f"{path}: {what}; andgate never writes through a symlink: remove it, or name a real folder",
        at,
    )


def _open_below(fd: int, name: str, *, create: bool) -> int:
    """The folder `name` in folder `fd`, never followed if it is a symlink."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=fd)
    return os.open(name, DIRECTORY, dir_fd=fd)


def open_folder(path: Path, *, anchor: Path | None = None, create: bool = True) -> int:
    """A descriptor of the folder `path`, reached from `anchor` (the repository's
    top; when `path` is outside it or no anchor is given, `path`'s parent) one
    component at a time without following a symlink; missing folders are created
    when `create`. RefusedPath names a symlink (or a file) on the way; any other
    OSError is the caller's to explain."""
    path = Path(os.path.abspath(path))
    start = Path(os.path.abspath(anchor)) if anchor is not None else path.parent
    if not _inside(path, start):
        start = path.parent
    if create:
        start.mkdir(parents=True, exist_ok=True)
    fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY)
    current = start
    try:
        for part in path.relative_to(start).parts:
            current = current / part
            try:
                inner = _open_below(fd, part, create=create)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refused(path, current) from exc
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def put(fd: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """Write `name` in the folder `fd` atomically: a temp file created exclusively,
    then renamed over the entry (a planted symlink is replaced, never followed; an
    empty folder planted in its place is removed first, a full one stays)."""
    tmp = f".{name}.{secrets.token_hex(6)}.tmp"
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=fd)
    try:
        with os.fdopen(out, "wb") as fh:
            fh.write(data)
        try:
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except IsADirectoryError:
            os.rmdir(name, dir_fd=fd)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=fd)
        raise


def create_new(fd: int, name: str, data: bytes, mode: int = 0o644) -> bool:
    """Create `name` in the folder `fd` with `data`; False when anything (a file, a
    folder, a symlink) is already there, which is left as it is."""
    try:
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=fd)
    except FileExistsError:
        return False
    with os.fdopen(out, "wb") as fh:
        fh.write(data)
    return True


def read_regular(fd: int, name: str, limit: int) -> bytes | None:
    """The bytes of a small regular file in the folder, or None (never followed,
    never blocking on a FIFO)."""
    try:
        file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        return None
    try:
        info = os.fstat(file)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return os.read(file, limit + 1)
    except OSError:
        return None
    finally:
        os.close(file)


class Folder:
    """A claimed folder: its path (for messages) and its descriptor (for writes)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def claim(cls, path: Path, *, anchor: Path | None = None, create: bool = True) -> Folder:
        return cls(Path(os.path.abspath(path)), open_folder(path, anchor=anchor, create=create))

    def put(self, name: str, data: bytes) -> Path:
        """`name` may name a subfolder (`missed/x.patch`), created through the descriptor."""
        folder, _, base = name.rpartition("/")
        if not folder:
            put(self.fd, base, data)
            return self.path / base
        with self.sub(folder) as inner:
            return inner.put(base, data)

    def sub(self, name: str, *, create: bool = True) -> Folder:
        fd = self.fd
        current = self.path
        try:
            for part in name.split("/"):
                current = current / part
                try:
                    inner = _open_below(fd, part, create=create)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise _refused(current, current) from exc
                    raise
                if fd != self.fd:
                    os.close(fd)
                fd = inner
        except BaseException:
            if fd != self.fd:
                os.close(fd)
            raise
        return Folder(current, fd)

    def exists(self, name: str) -> bool:
        try:
            os.lstat(name, dir_fd=self.fd)
        except FileNotFoundError:
            return False
        return True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def write_file(path: Path, data: bytes, *, anchor: Path | None = None) -> None:
    """Replace the file `path` in one step through its folder's descriptor (the lock
    and freeze files): an interrupted write leaves the old file, and a symlink at
    any level from `anchor` (the repository's top) is refused, never followed."""
    with Folder.claim(Path(os.path.abspath(path)).parent, anchor=anchor) as folder:
        folder.put(Path(path).name, data)
