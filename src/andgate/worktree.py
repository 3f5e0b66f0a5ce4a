"""Temporary worktrees: created outside the repository, always removed.

The gate never checks anything out in the user's working tree. A pool hands
each concurrent job its own worktree and moves it to the commit the next task
needs (`checkout --force` + `clean`), which is much cheaper than a new
worktree per task. Leaving the `with` block, by return, exception, Ctrl-C or
SIGTERM, removes every worktree and prunes git's bookkeeping.
"""

from __future__ import annotations

import glob
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType

from andgate.errors import GitError
from andgate.git import Git, decode_path

# Concurrent `git worktree add` in one repository race: one reads the other's
# half-written .git/worktrees/<name>/commondir and dies ("failed to read").
_ADD_LOCK = threading.Lock()


class Worktree:
    def __init__(self, git: Git, path: Path) -> None:
        self.git = git
        self.path = path
        self.created = False
        self.admin_dir: str | None = None

    def checkout(self, commit: str) -> None:
        """Make the worktree exactly `commit`: tracked files reset, untracked removed.

        `__pycache__` survives, which keeps repeated runs in one worktree fast,
        except the bytecode of every source about to change. A worktree is
        reused only by a later phase that is no more trusted than the one
        before it.
        """
        if not self.created:
            self.created = True
            with _ADD_LOCK:
                self.git.run("worktree", "add", "--detach", "--force", str(self.path), commit)
            self.admin_dir = self._read_admin_dir()
            return
        self._drop_bytecode(self._paths("diff", "--name-only", "--no-renames", "-z", commit))
        self._drop_bytecode(self._paths("ls-files", "-z", "--others", "--", "*.py"))
        self._git("checkout", "--quiet", "--force", "--detach", commit)
        self._git("clean", "-ffdqx", "-e", "__pycache__")

    def _paths(self, *args: str) -> list[str]:
        return [decode_path(p) for p in self._git(*args).stdout.split(b"\0") if p]

    def _drop_bytecode(self, paths: Iterable[str]) -> None:
        """Delete the cached bytecode (Python's and pytest's rewritten-assert
        caches) of these sources. Python trusts a .pyc while its source keeps
        the size and the mtime second it was compiled from, so a source that
        git rewrites within that second, to a same-size version (a one-character
        known-bad patch, base's code swapped for head's), would run stale code."""
        for rel in paths:
            if not rel.endswith(".py"):
                continue
            source = self.path / rel
            cache = source.parent / "__pycache__"
            if cache.is_dir() and not cache.is_symlink():
                for pyc in cache.glob(f"{glob.escape(source.stem)}.*.pyc"):
                    pyc.unlink(missing_ok=True)

    def _read_admin_dir(self) -> str:
        text = (self.path / ".git").read_text(encoding="utf-8")
        return str((self.path / text.removeprefix("gitdir:").strip()).resolve())

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """git in this worktree, located by explicit GIT_DIR/GIT_WORK_TREE rather
        than its `.git` file: a test that ran here may have deleted that file (git
        would then find an enclosing repository) or pointed it at the user's."""
        env = {"GIT_DIR": self.admin_dir or "", "GIT_WORK_TREE": str(self.path)}
        return self.git.run(*args, cwd=self.path, env=env, check=check)

    def apply_patch(self, patch: Path) -> str | None:
        """`git apply` a patch; return git's complaint when it does not apply."""
        proc = self._git("apply", "--whitespace=nowarn", str(patch), check=False)
        if proc.returncode == 0:
            self._drop_bytecode(self._paths("diff", "--name-only", "--no-renames", "-z"))
            return None
        stderr = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return stderr[0] if stderr else f"git apply exited {proc.returncode}"


class WorktreePool:
    """Worktrees under one private temporary folder, handed out one per job."""

    def __init__(self, git: Git, root: Path) -> None:
        self.git = git
        self.root = root
        self._free: queue.SimpleQueue[Worktree] = queue.SimpleQueue()
        self._all: list[Worktree] = []
        self._lock = threading.Lock()

    @contextmanager
    def lease(self, commit: str) -> Iterator[Worktree]:
        """A worktree at `commit`, returned to the pool afterwards."""
        worktree = self._take()
        try:
            worktree.checkout(commit)
            yield worktree
        finally:
            self._free.put(worktree)

    def _take(self) -> Worktree:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            with self._lock:
                worktree = Worktree(self.git, self.root / f"wt{len(self._all)}")
                self._all.append(worktree)
            return worktree

    def close(self) -> None:
        for worktree in self._all:
            if worktree.created:
                with suppress(GitError):
                    self.git.run("worktree", "remove", "--force", "--force", str(worktree.path))
            shutil.rmtree(worktree.path, ignore_errors=True)
        with suppress(GitError):
            self.git.run("worktree", "prune")


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP until the block ends, then deliver the first one.

    Cleanup must not be cut short by the second Ctrl-C of an impatient user.
    Python runs signal handlers only in the main thread, so elsewhere (and for
    a handler not installed from Python) this holds nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        handler = signal.getsignal(signum)
        if handler is not None:
            previous[signum] = signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if held:
            signal.raise_signal(held[0])


@contextmanager
def scratch_dir(prefix: str = "andgate-") -> Iterator[Path]:
    """A private temporary folder outside the repository, removed on exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        with deferred_signals():
            shutil.rmtree(path, ignore_errors=True)


@contextmanager
def worktree_pool(git: Git, root: Path) -> Iterator[WorktreePool]:
    pool = WorktreePool(git, root)
    try:
        yield pool
    finally:
        with deferred_signals():
            pool.close()
