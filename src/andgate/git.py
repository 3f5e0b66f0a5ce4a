"""The only module that runs git.

Every call goes through `Git.run`: no shell, a timeout, inherited `GIT_*`
variables stripped (a `GIT_DIR` exported by a hook would point every call at the
wrong repository), hooks disabled, and failures raised as `GitError` naming the
command, its exit code and stderr. The one exception is `CatFile`, a long-lived
`git cat-file` that `Git.reading()` keeps for a check's blob reads: started the
same way, each read within the same timeout.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from andgate.errors import GateTimeout, GitError, GitNotFound

DEFAULT_TIMEOUT = 120.0
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
ABSENT_MODE = "000000"  # `git diff --raw`: no file on that side
GITLINK_MODE = "160000"  # a submodule: a commit of another repository
REGULAR_FILE_MODES = ("100644", "100755")  # not a symbolic link, a submodule or nothing
# Up to this many objects a read asks the check's long-lived `cat-file` process, one
# round trip each; a larger batch is one `cat-file` process of its own, which reads
# its whole input at once.
LONG_LIVED_BATCH = 64
# Fixed identity and dates so the synthetic trees andgate commits are
# reproducible and never depend on the user's git config.
SYNTHETIC_IDENTITY = {
    "GIT_AUTHOR_NAME": "andgate",
    "GIT_AUTHOR_EMAIL": "andgate@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+00:00",
    "GIT_COMMITTER_NAME": "andgate",
    "GIT_COMMITTER_EMAIL": "andgate@localhost",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+00:00",
}

# The main thread waits in slices this long, to run a signal's handler (as every
# wait does: process/signals.py's WAKE). A leaf module, git cannot import it.
WAKE = 0.2


# Settings that make git run a program of the repository's choosing are switched off
# for every call: hooks, and the fsmonitor hook (code under test can write the
# repository's config while a check runs; the gate's later git calls must not run it).
SAFE_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")


def decode_path(raw: bytes) -> str:
    """git paths are bytes; surrogateescape keeps non-UTF-8 names round-trippable."""
    return raw.decode("utf-8", "surrogateescape")


def encode_path(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """os.environ without GIT_* variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str
    sha: str
    path: str


@dataclass(frozen=True)
class Change:
    """One line of `git diff --raw`: a path added, modified, deleted, renamed or re-moded."""

    status: str
    old_path: str | None
    new_path: str | None
    old_mode: str
    new_mode: str
    old_sha: str = ""  # the blob on each side ("": unknown, read by path)
    new_sha: str = ""

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p for p in (self.old_path, self.new_path) if p is not None)


def blob_id(data: bytes, like: str) -> str:
    """The object id git gives a blob of `data`, in the hash `like` is written in
    (40 hex digits: SHA-1, 64: SHA-256)."""
    algorithm = "sha256" if len(like) == 64 else "sha1"
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


class Git:
    """git commands against one repository."""

    def __init__(self, repo: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.repo = Path(repo)
        self.timeout = timeout
        self._trees: dict[str, tuple[TreeEntry, ...]] = {}
        self._batches: dict[str, CatFile] | None = None  # by option, within `reading()`
        self._batches_lock = threading.Lock()

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        exe = shutil.which("git")
        if exe is None:
            raise GitNotFound("git is not installed or not on PATH: install git and retry")
        cmd = (exe, *SAFE_CONFIG, "-c", "core.quotepath=false", *args)
        limit = self.timeout if timeout is None else timeout
        try:
            proc = subprocess.run(
                cmd,
                cwd=cwd or self.repo,
                input=input,
                env=clean_env(env),
                capture_output=True,
                timeout=limit,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise GateTimeout(f"git {' '.join(args[:3])} ran past {limit:.0f}s") from exc
        except (FileNotFoundError, NotADirectoryError) as exc:
            # The executable was found above, so the missing path is the folder.
            raise GitError(f"{cwd or self.repo}: no such directory") from exc
        if check and proc.returncode != 0:
            stderr = proc.stderr.decode("utf-8", "replace").strip()
            first = stderr.splitlines()[0] if stderr else "no output"
            raise GitError(
                f"git {' '.join(args[:4])} failed (exit {proc.returncode}): {first}",
                cmd=tuple(cmd),
                code=proc.returncode,
                stderr=stderr,
            )
        return proc

    def out(self, *args: str, **kwargs: object) -> str:
        return self.run(*args, **kwargs).stdout.decode("utf-8", "surrogateescape").strip()  # type: ignore[arg-type]

    # -- refs -----------------------------------------------------------------

    def toplevel(self) -> Path:
        if not self.repo.is_dir():
            raise GitError(f"{self.repo}: no such directory; pass --repo DIR naming a git checkout")
        try:
            return Path(self.out("rev-parse", "--show-toplevel"))
        except GitNotFound:
            raise
        except GitError as exc:
            raise GitError(
                f"{self.repo}: not a git repository (run andgate inside a git checkout, "
                "or pass --repo DIR)",
                cmd=exc.cmd,
                code=exc.code,
                stderr=exc.stderr,
            ) from exc

    def is_shallow(self) -> bool:
        return self.out("rev-parse", "--is-shallow-repository") == "true"

    def resolve(self, ref: str, *, what: str) -> str:
        """The commit sha of `ref`, or an error that says how to get it."""
        proc = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        if proc.returncode == 0:
            return proc.stdout.decode().strip()
        if self.is_shallow():
            raise GitError(
                f"{what} {ref!r} is not in this shallow clone: fetch full history "
                "(git fetch --unshallow, or actions/checkout with fetch-depth: 0)"
            )
        raise GitError(
            f"{what} {ref!r} is not a commit in {self.repo}: check the ref name or fetch it"
        )

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self.run("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def default_upstream(self) -> str | None:
        """The upstream default branch (origin/HEAD, else origin/main or origin/master)."""
        proc = self.run("symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", check=False)
        candidates = [proc.stdout.decode().strip()] if proc.returncode == 0 else []
        candidates += ["refs/remotes/origin/main", "refs/remotes/origin/master"]
        for ref in candidates:
            if (
                ref
                and self.run("rev-parse", "--verify", "--quiet", ref, check=False).returncode == 0
            ):
                return ref
        return None

    # -- trees and blobs --------------------------------------------------------

    def ls_tree(self, commit: str, paths: Iterable[str] = ()) -> list[TreeEntry]:
        """Every blob (and submodule) under `paths` at `commit`, or under its root.

        A whole tree named by its commit's sha never changes, and a check lists
        base's several times (its test side, the change, the plan): those are
        listed once per `Git`, and paths under it are read from that listing (for
        `ls-tree`, a path is a literal: the file, or the folder and all below)."""
        paths = list(paths)
        listed = self._trees.get(commit) if FULL_SHA.fullmatch(commit) else None
        if listed is not None and all(_plain(p) for p in paths):
            return [e for e in listed if _under(e.path, paths)] if paths else list(listed)
        entries = self._ls_tree(commit, paths)
        if not paths and FULL_SHA.fullmatch(commit):
            self._trees[commit] = tuple(entries)
        return entries

    def _ls_tree(self, commit: str, paths: list[str]) -> list[TreeEntry]:
        args = ["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", commit]
        if paths:
            args += ["--", *paths]
        raw = self.run(*args).stdout
        entries = []
        for record in raw.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, kind, sha = meta.decode().split(" ")
            entries.append(TreeEntry(mode, kind, sha, decode_path(path)))
        return entries

    @contextmanager
    def reading(self) -> Iterator[Git]:
        """Within the block, small reads of blobs and sizes go through one long-lived
        `git cat-file` process each (a check reads a dozen at different moments, and
        each changed file twice): a read costs a line on a pipe, not a git process.
        The processes end with the block; a read after it is a git process again."""
        with self._batches_lock:
            outer, self._batches = self._batches, {}
        try:
            yield self
        finally:
            with self._batches_lock:
                batches, self._batches = self._batches, outer
                for batch in batches.values():
                    batch.close_after_read()

    def _cat(self, option: str, specs: list[bytes]) -> list[tuple[bytes, bytes | None]]:
        """`git cat-file <option>`'s answer for each spec: its header line and, for
        `--batch`, the object's bytes (None for a missing one)."""
        contents = option == "--batch"
        if not specs:
            return []
        batch = self._long_lived(option) if len(specs) <= LONG_LIVED_BATCH else None
        if batch is None:
            out = self.run("cat-file", option, input=b"".join(s + b"\n" for s in specs)).stdout
            return _answers(_BytesReader(out), len(specs), contents)
        return batch.ask(specs, contents)

    def _long_lived(self, option: str) -> CatFile | None:
        """Within `reading()`, its process for `option` (one for every thread)."""
        with self._batches_lock:
            if self._batches is None:
                return None
            batch = self._batches.get(option)
            if batch is None or not batch.alive():
                if batch is not None:
                    batch.close_after_read()  # another thread may be reading it
                batch = self._batches[option] = CatFile(self, option)
            return batch

    def read_blob(self, commit: str, path: str) -> bytes | None:
        """The bytes of `path` at `commit`, or None when the path is absent."""
        if "\n" in path:  # cat-file reads a request a line: it would ask for two
            raise GitError(f"{path!r}: a path with a newline cannot be read; rename it")
        [(header, body)] = self._cat("--batch", [encode_path(f"{commit}:{path}")])
        return body if b" blob " in header else None

    def read_sides(self, base: str, head: str, change: Change) -> tuple[bytes | None, bytes | None]:
        """A change's bytes before (at base) and after (at head); None for a side with
        no file: an added or deleted path, or one that is a folder or a submodule there.
        What every phase reading a change's contents should call: an added file has no
        old path, a deleted one no new path."""
        old = self._side(base, change.old_path, change.old_mode, change.old_sha)
        new = self._side(head, change.new_path, change.new_mode, change.new_sha)
        return old, new

    def _side(self, commit: str, path: str | None, mode: str, sha: str) -> bytes | None:
        """One side of a change, read by its blob's sha when the diff gave one (any
        path, even one with a newline, which `read_blob` cannot ask for)."""
        if path is None or mode in (ABSENT_MODE, GITLINK_MODE):
            return None  # nothing there, or another repository's commit
        if sha.strip("0"):
            return self.read_blobs([sha]).get(sha)
        return self.read_blob(commit, path)

    def blob_sizes(self, shas: Iterable[str]) -> dict[str, int]:
        """Byte sizes of many blobs."""
        wanted = list(dict.fromkeys(shas))
        answers = self._cat("--batch-check", [s.encode() for s in wanted])
        sizes = {}
        for sha, (header, _) in zip(wanted, answers, strict=True):
            parts = header.split(b" ")
            if len(parts) == 3 and parts[2].isdigit():
                sizes[sha] = int(parts[2])
        return sizes

    def read_blobs(self, shas: Iterable[str], *, verify: bool = False) -> dict[str, bytes]:
        """Many blobs, by sha. `verify`: each one's bytes must hash to its id (GitError
        otherwise). `cat-file` does not check: a read made after the change's code
        ran, which may have rewritten an object file, is checked against ids read
        before."""
        wanted = list(dict.fromkeys(shas))
        answers = self._cat("--batch", [s.encode() for s in wanted])
        blobs = {
            sha: body for sha, (_, body) in zip(wanted, answers, strict=True) if body is not None
        }
        if verify:
            for sha, body in blobs.items():
                if blob_id(body, sha) != sha.lower():
                    raise GitError(
                        f"object {sha} no longer holds the bytes of its id: the repository's "
                        "objects were changed while the check ran (by the code under test?)"
                    )
        return blobs

    def diff_raw(self, base: str, head: str) -> list[Change]:
        raw = self.run(
            "diff", "--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", base, head
        ).stdout
        return parse_raw_diff(raw)

    def dirty_paths(self) -> list[str]:
        # Without --no-optional-locks, status rewrites the user's index whenever
        # it refreshes stale stat data: the index must stay byte-identical.
        raw = self.run("--no-optional-locks", "status", "--porcelain", "-z").stdout
        return [decode_path(r[3:]) for r in raw.split(b"\0") if len(r) > 3]

    def untracked_files(self, folders: Iterable[str] = ()) -> list[str]:
        """Files under `folders` (all when empty) that git does not track, ignored
        ones included (a generated version file is usually in .gitignore)."""
        specs = [f":(literal){f}" for f in folders]
        raw = self.run("ls-files", "-z", "--others", "--", *specs).stdout
        return sorted({decode_path(p) for p in raw.split(b"\0") if p})

    # -- synthetic commits --------------------------------------------------------

    def commit_overlay(
        self, start: str, replace: Mapping[str, TreeEntry | None], index_file: Path, message: str
    ) -> str:
        """A commit whose tree is `start` with `replace` applied (None removes a path).

        Built in a private index file, so the user's index is never touched; the
        commit is reachable from no ref and git's gc collects it later.
        """
        if not replace:
            return start
        env = {"GIT_INDEX_FILE": str(index_file), **SYNTHETIC_IDENTITY}
        self.run("read-tree", start, env=env)
        lines = []
        for path, entry in sorted(replace.items()):
            if entry is None:
                lines.append(b"0 " + b"0" * 40 + b"\t" + encode_path(path))
            else:
                lines.append(f"{entry.mode} {entry.sha}".encode() + b"\t" + encode_path(path))
        self.run("update-index", "-z", "--index-info", input=b"\0".join(lines) + b"\0", env=env)
        tree = self.out("write-tree", env=env)
        return self.out("commit-tree", tree, "-p", start, "-m", message, env=env)


def _plain(path: str) -> bool:
    """A path git reads as it is written (literal pathspecs still normalise
    `./`, `//` and `..`): the listing can answer for it."""
    return (
        path not in ("", ".")
        and posixpath.normpath(path) == path.rstrip("/")
        and not (path.startswith(("/", "../")))
    )


def _under(path: str, wanted: list[str]) -> bool:
    """Whether `ls-tree -- wanted...` lists `path`."""
    return any(path == w or path.startswith(w.rstrip("/") + "/") for w in wanted)


def parse_raw_diff(raw: bytes) -> list[Change]:
    """Parse `git diff --raw -z` output (renames carry two paths)."""
    fields = raw.split(b"\0")
    changes, i = [], 0
    while i < len(fields) and fields[i]:
        meta = fields[i].decode().lstrip(":").split(" ")
        old_mode, new_mode, old_sha, new_sha, status = meta[:5]
        old: str | None
        new: str | None
        if status[0] in "RC":
            old, new = decode_path(fields[i + 1]), decode_path(fields[i + 2])
            i += 3
        else:
            path = decode_path(fields[i + 1])
            old = None if status == "A" else path
            new = None if status == "D" else path
            i += 2
        changes.append(Change(status[0], old, new, old_mode, new_mode, old_sha, new_sha))
    return changes


class _BytesReader:
    """`cat-file` output already read whole."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def line(self) -> bytes:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise GitError("git cat-file: its output ended early")
        line, self.pos = self.data[self.pos : end], end + 1
        return line

    def exactly(self, size: int) -> bytes:
        chunk = self.data[self.pos : self.pos + size]
        if len(chunk) < size:
            raise GitError("git cat-file: its output ended early")
        self.pos += size
        return chunk


class _Reader(Protocol):
    def line(self) -> bytes: ...
    def exactly(self, size: int) -> bytes: ...


def _answers(reader: _Reader, count: int, contents: bool) -> list[tuple[bytes, bytes | None]]:
    """Each object's header line (`<sha> <type> <size>`, or `<spec> missing`) and,
    with `contents`, its bytes (None when it has none)."""
    out: list[tuple[bytes, bytes | None]] = []
    for _ in range(count):
        header = reader.line()
        parts = header.split(b" ")
        body = None
        if contents and len(parts) == 3 and parts[2].isdigit():
            body = reader.exactly(int(parts[2]) + 1)[:-1]  # each object ends in a newline
        out.append((header, body))
    return out


class CatFile:
    """A long-lived `git cat-file --batch` (or `--batch-check`), asked one object
    at a time under a lock (threads share it); one request's objects are read
    within the `Git`'s timeout: past it the process is killed and the read raises
    `GateTimeout`. Anything else that stops a read halfway (an interrupt) ends the
    process too, so that no later read takes the rest of an answer for its own."""

    def __init__(self, git: Git, option: str) -> None:
        exe = shutil.which("git")
        if exe is None:
            raise GitNotFound("git is not installed or not on PATH: install git and retry")
        cmd = (exe, *SAFE_CONFIG, "cat-file", option)
        self.timeout = git.timeout
        self._lock = threading.Lock()
        self._buffer = bytearray()
        self._deadline = 0.0
        self._stderr = b""
        try:
            self.proc = subprocess.Popen(
                cmd,
                cwd=git.repo,
                env=clean_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,  # read once it ended, and only what is there
            )
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise GitError(f"{git.repo}: no such directory") from exc

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, specs: list[bytes], contents: bool) -> list[tuple[bytes, bytes | None]]:
        with self._lock:
            self._deadline = time.monotonic() + self.timeout
            try:
                return [self._ask(spec, contents) for spec in specs]
            except (GitError, GateTimeout):
                raise
            except BaseException:
                self.proc.kill()
                self.close()
                raise

    def _ask(self, spec: bytes, contents: bool) -> tuple[bytes, bytes | None]:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(spec + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise self._ended() from exc
        [answer] = _answers(self, 1, contents)
        return answer

    def line(self) -> bytes:
        while (end := self._buffer.find(b"\n")) < 0:
            self._fill()
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        return line

    def exactly(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._fill()
        chunk = bytes(self._buffer[:size])
        del self._buffer[:size]
        return chunk

    def _fill(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            left = self._deadline - time.monotonic()
            if left <= 0:
                self.proc.kill()
                self.close()
                raise GateTimeout(f"git cat-file ran past {self.timeout:g}s")
            # In slices, as every wait of the main thread (signals.py).
            if select.select([fd], [], [], min(left, WAKE))[0]:
                break
        data = os.read(fd, 1 << 16)
        if not data:
            raise self._ended()
        self._buffer += data

    def _ended(self) -> GitError:
        self.close()
        lines = self._stderr.decode("utf-8", "replace").strip().splitlines()
        return GitError(
            f"git cat-file ended early (exit {self.proc.returncode}): "
            + (lines[0] if lines else "no output"),
            cmd=tuple(str(a) for a in self.proc.args),  # type: ignore[union-attr]
            code=self.proc.returncode,
        )

    def close_after_read(self) -> None:
        """`close`, once a read another thread is making has ended."""
        with self._lock:
            self.close()

    def close(self) -> None:
        """End of file on its requests ends it; one that lingers is killed."""
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self._stderr += _waiting_bytes(self.proc.stderr)


def _waiting_bytes(stream: IO[bytes] | None) -> bytes:
    """What `stream` (a pipe) holds now, without waiting for more: a process git
    started may keep its end open after git ended. Then it is closed."""
    if stream is None or stream.closed:
        return b""
    data = b""
    with suppress(OSError, ValueError):
        if select.select([stream.fileno()], [], [], 0)[0]:
            data = os.read(stream.fileno(), 4096)
    stream.close()
    return data
