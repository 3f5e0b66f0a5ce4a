"""The artifacts folder: the only thing `check` writes inside the repository.

It is claimed before any test code runs (`claim_artifacts`): a symlinked artifacts
path, a symlink between the repository root and the folder, or a folder inside
`.git` is refused. A folder andgate creates (or finds empty) is its own and carries
its own `.gitignore` (as `.pytest_cache` does) so it never shows up in `git status`.
In any other folder (a project's own `artifacts/`, `--artifacts .`) andgate writes
only where no file of that name exists. The marker file `MARKER` lists what andgate
wrote; only those files are ever replaced or deleted on the next run. Every write
goes through the folder's descriptor, never through a symlink.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from andgate import writer
from andgate.errors import AndgateError
from andgate.git import Git
from andgate.report.context import json_bytes

MARKER = ".andgate-artifacts"
MARKER_SCHEMA = "andgate.artifacts/1"
MARKER_MAX_BYTES = 1024 * 1024
GITIGNORE = b"# written by andgate check\n*\n"
LOGS = "logs"
BUNDLE = "bundle.json"  # check --shard's one artifact (bundle.py)
VERDICT_FILE = "verdict.json"  # written last: no verdict unless all the rest was written
REPORT_FILES = (
    "trust_inventory.json",
    "property_seeds.json",
    "known_bad.json",
    "summary.md",
    "report.html",
    "timings.json",
)
EMPTY_JUNIT = b'<?xml version="1.0" encoding="utf-8"?><testsuites />\n'
JUNIT_FILES = {
    "oracle": "oracle.xml",
    "property": "property.xml",
    "untrusted": "untrusted.xml",
    "flake": "flake.xml",
}


def _refused(path: Path | str, why: str) -> AndgateError:
    return AndgateError(
        f"{path}: {why}; andgate never writes through a symlink or into git's folder: "
        "remove it, or pass --artifacts DIR naming a real folder outside .git"
    )


def _taken(path: Path) -> AndgateError:
    return AndgateError(
        f"{path}: exists and andgate did not write it, so it is left alone; move it, "
        "or pass --artifacts DIR naming a new or empty folder"
    )


def _cannot_write(path: Path, exc: OSError) -> AndgateError:
    return AndgateError(
        f"{path}: cannot write the artifacts ({exc.strerror or exc}); "
        "pass --artifacts DIR naming a writable folder"
    )


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _check_path(path: Path, repo: Path | None, git_dirs: Sequence[Path]) -> None:
    if path.is_symlink():
        raise _refused(path, "the artifacts folder is a symlink")
    if repo is not None:
        root = os.path.abspath(repo)
        if _is_under(str(path), root) and str(path) != root:
            current = Path(root)
            for part in path.relative_to(root).parts[:-1]:
                current = current / part
                if current.is_symlink():
                    raise _refused(path, f"{current} is a symlink inside the repository")
    real = os.path.realpath(path)
    for git_dir in git_dirs:
        if _is_under(real, os.path.realpath(git_dir)):
            raise _refused(path, "the artifacts folder is inside the repository's git folder")


def plain_name(name: str) -> bool:
    """A file name andgate may write: no folder part, nothing hidden, no NUL."""
    return (
        bool(name)
        and len(name.encode("utf-8", "surrogateescape")) <= 255
        and "/" not in name
        and "\0" not in name
        and not name.startswith(".")
    )


def _marker_entry(name: object) -> bool:
    if not isinstance(name, str):
        return False
    folder, _, rest = name.rpartition("/")
    if folder == LOGS:
        return plain_name(rest)
    return not folder and (plain_name(name) or name == ".gitignore")


def _read_marker(fd: int) -> frozenset[str] | None:
    """The names the marker lists, or None: no marker, or not one andgate wrote."""
    raw = _regular_bytes(fd, MARKER, MARKER_MAX_BYTES)
    try:
        data = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("schema") != MARKER_SCHEMA:
        return None
    files = data.get("files")
    if not isinstance(files, list):
        return None
    return frozenset(n for n in files if _marker_entry(n)) | {MARKER}


def _regular_bytes(fd: int, name: str, limit: int) -> bytes | None:
    """The bytes of a small regular file in the folder, or None (never followed)."""
    return writer.read_regular(fd, name, limit)


def _exists(fd: int, name: str) -> bool:
    try:
        os.lstat(name, dir_fd=fd)
    except FileNotFoundError:
        return False
    return True


def _put(fd: int, name: str, data: bytes) -> None:
    """Write `name` in the folder `fd` atomically, never through a symlink (`writer.put`)."""
    writer.put(fd, name, data)


def _top_names(fresh: bool, listed: frozenset[str]) -> list[str]:
    names = [MARKER]
    if fresh or ".gitignore" in listed:
        names.append(".gitignore")
    return [*names, *REPORT_FILES, *JUNIT_FILES.values(), VERDICT_FILE]


class ArtifactsFolder:
    """The artifacts folder, claimed before any test code runs, written through
    its descriptor at the end. `fresh`: andgate created it or found it empty, so
    it is andgate's; otherwise only files the marker lists are andgate's."""

    def __init__(self, path: Path, fd: int, fresh: bool, listed: frozenset[str]) -> None:
        self.path = path
        self.fd = fd
        self.fresh = fresh
        self.listed = listed

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def check_free(self, names: Sequence[str], logs_fd: int | None = None) -> None:
        """Refuse when one of andgate's names is taken by a file andgate did not write."""
        if self.fresh:
            return
        for name in names:
            folder, _, base = name.rpartition("/")
            fd = self.fd if not folder else logs_fd
            if name not in self.listed and fd is not None and _exists(fd, base):
                raise _taken(self.path / name)

    def open_logs(self) -> int:
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
        for attempt in range(2):
            with contextlib.suppress(FileExistsError):
                os.mkdir(LOGS, dir_fd=self.fd)
            try:
                return os.open(LOGS, flags, dir_fd=self.fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or not self.fresh or attempt:
                    raise _refused(self.path / LOGS, "not a real folder") from exc
                os.unlink(LOGS, dir_fd=self.fd)  # planted in andgate's own folder during the run
        raise AssertionError("unreachable")

    def write(
        self, top: Mapping[str, bytes], logs: Mapping[str, bytes], verdict: bytes
    ) -> list[Path]:
        """The marker, then every file in `top` and `logs/`, then verdict.json last;
        this folder's old logs and bundle (from an earlier run) are dropped."""
        names = self.top_names()
        if ".gitignore" in names:
            top = {".gitignore": GITIGNORE, **top}
        log_names = [f"{LOGS}/{name}" for name in logs]
        try:
            logs_fd = self.open_logs()
            try:
                self.check_free([*names, *log_names], logs_fd)
                marker = {"schema": MARKER_SCHEMA, "files": sorted({*names, *log_names})}
                _put(self.fd, MARKER, json_bytes(marker))
                for name, data in top.items():
                    _put(self.fd, name, data)
                if BUNDLE in self.listed:  # a shard's, from an earlier run: not this check's
                    _drop(self.fd, BUNDLE)
                for old in sorted(self.listed - set(log_names)):
                    if old.startswith(f"{LOGS}/"):
                        _drop(logs_fd, old.removeprefix(f"{LOGS}/"))
                for name, data in logs.items():
                    _put(logs_fd, name, data)
            finally:
                os.close(logs_fd)
            _put(self.fd, VERDICT_FILE, verdict)
        except OSError as exc:
            raise _cannot_write(self.path, exc) from exc
        return [self.path / n for n in (*top, *log_names, VERDICT_FILE)]

    def top_names(self) -> list[str]:
        return _top_names(self.fresh, self.listed)


def claim_artifacts(
    path: Path, *, repo: Path | None = None, git_dirs: Sequence[Path] = ()
) -> ArtifactsFolder:
    """Check and open (or create) the artifacts folder; one-line AndgateError when
    it is unsafe or one of andgate's file names is taken by someone else's file.
    A verdict.json left by andgate's previous run is deleted at once: a check that
    then fails to write its own leaves no stale verdict behind."""
    path = Path(os.path.abspath(path))
    _check_path(path, repo, git_dirs)
    try:
        # Every folder between the repository's top and the artifacts folder is
        # opened without following a symlink, so a link planted after the check
        # above is refused too (`writer.open_folder`).
        parent = writer.open_folder(path.parent, anchor=repo)
    except writer.RefusedPath as exc:
        raise _refused(path, f"{exc.at} is a symlink inside the repository") from exc
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    try:
        created, problem = True, None
        try:
            os.mkdir(path.name, dir_fd=parent)
        except OSError as exc:
            created, problem = False, exc
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refused(path, "the artifacts folder is a symlink") from exc
            raise _cannot_write(path, problem or exc) from exc
    finally:
        os.close(parent)
    try:
        fresh = created or not os.listdir(fd)
        listed = frozenset() if fresh else _read_marker(fd)
        if listed is None:
            # A folder andgate wrote before it kept a marker carries its .gitignore.
            fresh = _regular_bytes(fd, ".gitignore", len(GITIGNORE)) == GITIGNORE
            listed = frozenset()
        folder = ArtifactsFolder(path, fd, fresh, listed)
        folder.check_free(_top_names(fresh, listed))
        if not fresh and _exists(fd, LOGS):
            os.close(folder.open_logs())
        if VERDICT_FILE in listed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(VERDICT_FILE, dir_fd=fd)
    except BaseException:
        os.close(fd)
        raise
    return folder


def write_bundle(folder: ArtifactsFolder, name: str, data: bytes) -> Path:
    """A shard's bundle, the only artifact of `check --shard`: written like the
    others, through the folder's descriptor, after the marker names it. A
    verdict.json of an earlier full check there is removed: a shard decides nothing."""
    names = [
        MARKER,
        *([".gitignore"] if folder.fresh or ".gitignore" in folder.listed else []),
        name,
    ]
    try:
        folder.check_free(names)
        marker = {"schema": MARKER_SCHEMA, "files": sorted({*folder.listed, *names} - {MARKER})}
        _put(folder.fd, MARKER, json_bytes(marker))
        if ".gitignore" in names:
            _put(folder.fd, ".gitignore", GITIGNORE)
        _put(folder.fd, name, data)
    except OSError as exc:
        raise _cannot_write(folder.path, exc) from exc
    return folder.path / name


def _drop(fd: int, name: str) -> None:
    """Delete an old log andgate wrote (the marker lists it); never a folder."""
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=fd)


def claim_ignored_artifacts(repo: Path) -> Path:
    """Claim `artifacts/` for a command that writes below it (the known-bad
    proposals): one that creates it leaves it as check would, self-ignored and
    marked as andgate's, so whichever command comes first, the folder is the same."""
    folder = claim_artifacts_for(repo, None)
    try:
        if folder.fresh:
            _put(folder.fd, MARKER, json_bytes({"schema": MARKER_SCHEMA, "files": [".gitignore"]}))
            _put(folder.fd, ".gitignore", GITIGNORE)
    except OSError as exc:
        raise _cannot_write(folder.path, exc) from exc
    finally:
        folder.close()
    return folder.path


def claim_artifacts_for(repo_arg: Path, artifacts: Path | None) -> ArtifactsFolder:
    """`--artifacts`, else `artifacts/` at the repository's top, claimed with what
    the refusals need to know: the repository's top and its git folders."""
    if artifacts is None and not repo_arg.is_dir():
        # Never create a folder the user mistyped just to put artifacts in it.
        raise AndgateError(
            f"{repo_arg}: no such directory, so no artifacts were written; "
            "pass --repo DIR naming a git checkout"
        )
    git = Git(repo_arg)
    repo: Path | None
    git_dirs: tuple[Path, ...]
    try:
        lines = git.out("rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
        top, git_dir, common = lines.splitlines()
    except (AndgateError, ValueError):
        repo, git_dirs = None, ()  # not a repository: the gate says so
    else:
        repo, git_dirs = Path(top), (Path(git_dir), repo_arg / common)
    path = artifacts if artifacts is not None else (repo or repo_arg) / "artifacts"
    return claim_artifacts(path, repo=repo, git_dirs=git_dirs)
