"""Temporary worktrees: created outside the repository, always removed.

The gate never checks anything out in the user's working tree. A pool hands
each concurrent job its own worktree and moves it to the commit the next task
needs (`checkout --force` + `clean`), which is much cheaper than a new
worktree per task. Leaving the `with` block, by return, exception, Ctrl-C or
SIGTERM, removes every worktree and prunes git's bookkeeping.
"""

from __future__ import annotations

import queue
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType

from andgate.errors import GitError
from andgate.git import Git


class Worktree:
    def __init__(self, git: Git, path: Path) -> None:
        self.git = git
        self.path = path
        self.created = False

    def checkout(self, commit: str) -> None:
        """Make the worktree exactly `commit`: tracked files reset, untracked removed.

        `__pycache__` survives (sources changing invalidates it), which keeps
        repeated runs in one worktree fast.
        """
        if not self.created:
            self.created = True
            self.git.run("worktree", "add", "--detach", "--force", str(self.path), commit)
            return
        self.git.run("checkout", "--quiet", "--force", "--detach", commit, cwd=self.path)
        self.git.run("clean", "-ffdqx", "-e", "__pycache__", cwd=self.path)

    def apply_patch(self, patch: Path) -> str | None:
        """`git apply` a patch; return git's complaint when it does not apply."""
        proc = self.git.run("apply", "--whitespace=nowarn", str(patch), cwd=self.path, check=False)
        if proc.returncode == 0:
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
    """Hold SIGINT and SIGTERM until the block ends, then deliver the first one.

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
    for signum in (signal.SIGINT, signal.SIGTERM):
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
