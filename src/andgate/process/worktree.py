"""Temporary worktrees: created outside the repository, always removed.

The gate never checks anything out in the user's working tree. A pool hands
each concurrent job its own worktree and moves it to the commit the next task
needs (`checkout --force` + `clean`), which is much cheaper than a new
worktree per task. Leaving the `with` block, by return, exception, Ctrl-C or
SIGTERM, removes every worktree andgate created, by path, and its admin folder
under `.git/worktrees`; nothing else. There is no repository-wide
`git worktree prune`: it would also unregister a worktree of the user's whose
folder is away at that moment (an unmounted disk, a network share).
"""

from __future__ import annotations

import errno
import fcntl
import glob
import os
import queue
import secrets
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from andgate.errors import AndgateError, GitError
from andgate.git import Git, TreeEntry, blob_id, decode_path
from andgate.process.generated import NONE, Generated, copy_into
from andgate.process.signals import deferred_signals
from andgate.process.timings import Timings

# Concurrent `git worktree add` in one repository race: one reads the other's
# half-written .git/worktrees/<name>/commondir and dies ("failed to read").
# Threads of one check take _ADD_LOCK; checks in other processes meet at a
# flock on the git common dir (an opened folder: the lock writes nothing).
_ADD_LOCK = threading.Lock()
ADD_RACE = "failed to read"
REPO_LOCK_WAIT = 150.0
# Cleanup is bounded: each git call gets REMOVE_TIMEOUT, and once CLOSE_BUDGET
# is spent the remaining worktrees are removed from the filesystem only.
REMOVE_TIMEOUT = 30.0
CLOSE_BUDGET = 60.0
SYMLINK_MODE = "120000"
# How git looks at a worktree whatever the repository's config says: every file
# is listed and stat'ed (no fsmonitor, untracked cache or sparse checkout), and a
# change of ctime counts.
WORKTREE_CONFIG = (
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.untrackedCache=false"),
    *("-c", "core.sparseCheckout=false"),
    *("-c", "core.trustctime=true"),
    *("-c", "core.checkStat=default"),
)


class Worktree:
    def __init__(self, git: Git, path: Path, common_dir: Path | None = None) -> None:
        self.git = git
        self.path = path
        self.common_dir = common_dir
        self.created = False
        self.admin_dir: str | None = None
        self.patched: tuple[str, ...] = ()  # what `apply_patch` wrote since the checkout

    def checkout(self, commit: str, *, verified: bool = False) -> None:
        """Make the worktree exactly `commit`: tracked files reset, untracked removed.

        `__pycache__` survives, which keeps repeated runs in one worktree fast,
        except the bytecode of every source about to change. A worktree is
        reused only by a later phase that is no more trusted than the one
        before it. `verified` (a trusted run follows): every untracked file goes,
        bytecode caches too; `differences` then says what is still not `commit`.
        """
        self.patched = ()
        if not self.created:
            self.created = True
            with _ADD_LOCK, _repo_lock(self.common_dir):
                self._add(commit)
            self.admin_dir = self._read_admin_dir()
            return
        if not verified:
            self._drop_bytecode(self._rewritten_by_checkout(commit))
        self._git("checkout", "--quiet", "--force", "--detach", commit)
        self._git("clean", "-ffdqx", *(() if verified else ("-e", "__pycache__")))

    def differences(self, commit: str, files: Mapping[str, TreeEntry] | None = None) -> list[str]:
        """What in the worktree is not `commit`: each tracked file whose bytes differ
        from the commit's, hashed (git's stat data would trust a rewrite that kept
        a file's size and mtime, and an entry marked skip-worktree), and each
        untracked file or folder, bytecode caches included. Empty: the worktree is
        the commit, byte for byte. `files`: the commit's listing, when known: each
        file is hashed here first, and git asked only when something looks different
        (it knows the checkout's conversions: `.gitattributes` eol rules, filters)."""
        if files is not None and same_files(self.path, files):
            return []
        self._git("read-tree", commit)  # an index with no stat data: every file is hashed
        status = self._git(*STATUS, check=False)
        if status.returncode != 0:
            return [f"git status failed: {status.stderr.decode('utf-8', 'replace').strip()}"]
        head, entries = status_entries(status.stdout)
        found = [] if head == commit else [f"HEAD is not {commit[:12]}"]
        return found + [f"{path} {what}" for path, what in entries]

    def _add(self, commit: str) -> None:
        args = ("worktree", "add", "--detach", "--force", str(self.path), commit)
        try:
            self.git.run(*args)
        except GitError as exc:
            if ADD_RACE not in exc.stderr:
                raise
            # A `git worktree add` that andgate does not lock (the user's own) raced us.
            shutil.rmtree(self.path, ignore_errors=True)
            self.git.run(*args)

    def _rewritten_by_checkout(self, commit: str) -> list[str]:
        """Every path that checking out `commit` and cleaning will rewrite or delete:
        what differs from HEAD (staged, unstaged, untracked or ignored) and, when
        HEAD is not `commit`, what differs between the two. One `git status` walks
        the tree once, where a diff and an ls-files walked it twice."""
        status = self._git(*STATUS, check=False)
        if status.returncode == 0:
            head, paths = status_paths(status.stdout)
        else:  # a test broke HEAD (a missing object, a blob): list untracked files alone
            head, paths = None, self._paths("ls-files", "-z", "--others", "--", "*.py")
        if head != commit:  # with no HEAD, the worktree's files against `commit`
            since = (head,) if head is not None else ()
            paths += self._paths("diff", "--name-only", "--no-renames", "-z", *since, commit)
        return paths

    def _paths(self, *args: str) -> list[str]:
        return [decode_path(p) for p in self._git(*args).stdout.split(b"\0") if p]

    def _drop_bytecode(self, paths: Iterable[str]) -> None:
        """Delete the cached bytecode (Python's and pytest's rewritten-assert
        caches) of these sources. Python trusts a .pyc while its source keeps
        the size and the mtime second it was compiled from, so a source that
        git rewrites within that second, to a same-size version (a one-character
        known-bad patch, base's code swapped for head's), would run stale code."""
        root = os.path.realpath(self.path)
        for rel in paths:
            if not rel.endswith(".py"):
                continue
            source = self.path / rel
            # A folder of the tree may be a symlink out of it (a production
            # folder linked to one outside): never delete through it.
            cache = os.path.realpath(source.parent / "__pycache__")
            if not _inside(cache, root) or not os.path.isdir(cache):
                continue
            for pyc in Path(cache).glob(f"{glob.escape(source.stem)}.*.pyc"):
                pyc.unlink(missing_ok=True)

    def _read_admin_dir(self) -> str:
        text = (self.path / ".git").read_text(encoding="utf-8")
        return str((self.path / text.removeprefix("gitdir:").strip()).resolve())

    def remove(self, timeout: float | None) -> None:
        """Unregister and delete this worktree, and nothing else; never raises.
        `timeout` None skips git (the cleanup budget is spent).

        `git worktree remove` is deleting the admin folder and the worktree's folder:
        done here directly when the admin folder recorded at creation is still where
        git keeps it, saving a git process per worktree at the end of every check;
        git does it otherwise."""
        if self.created and not self._drop_admin_dir() and timeout is not None:
            try:
                remove = ("worktree", "remove", "--force", "--force", str(self.path))
                self.git.run(*remove, timeout=timeout)
            except AndgateError:
                pass  # the folder itself goes below
        shutil.rmtree(self.path, ignore_errors=True)
        self.created, self.admin_dir = False, None

    def rebuild(self, commit: str) -> None:
        """Remove this worktree and add it again at `commit`: what code left in it is
        gone with the folder. Raises when the folder cannot be emptied."""
        self.remove(REMOVE_TIMEOUT)
        if self.path.exists():
            raise GitError(f"{self.path}: a worktree that must be rebuilt cannot be removed")
        self.checkout(commit)

    def _drop_admin_dir(self) -> bool:
        """Delete .git/worktrees/<name> of this worktree only: the one recorded when
        it was created, if it is a real folder right under the common dir's worktrees/.
        Whether it is gone now (False: git must unregister the worktree)."""
        if self.admin_dir is None or self.common_dir is None:
            return False
        admin = Path(self.admin_dir)
        if os.path.realpath(admin.parent) != os.path.realpath(self.common_dir / "worktrees"):
            return False
        try:
            if not stat.S_ISDIR(os.lstat(admin).st_mode):
                return False
        except OSError:
            return False  # not where it was recorded: git knows where it is
        shutil.rmtree(admin, ignore_errors=True)
        return not os.path.lexists(admin)

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        """git in this worktree, located by explicit GIT_DIR/GIT_WORK_TREE rather
        than its `.git` file: a test that ran here may have deleted that file (git
        would then find an enclosing repository) or pointed it at the user's. Code
        that ran here could also have written the repository's config: git looks at
        every file, never through a file-system monitor or a sparse checkout."""
        env = {"GIT_DIR": self.admin_dir or "", "GIT_WORK_TREE": str(self.path)}
        return self.git.run(*WORKTREE_CONFIG, *args, cwd=self.path, env=env, check=check)

    def apply_patch(self, patch: Path) -> str | None:
        """`git apply` a patch; return git's complaint when it does not apply."""
        # --numstat names every file the patch writes; --apply (after it) still applies.
        args = ("apply", "--numstat", "-z", "--apply", "--whitespace=nowarn", str(patch))
        proc = self._git(*args, check=False)
        if proc.returncode == 0:
            self.patched = tuple(numstat_paths(proc.stdout))
            self._drop_bytecode(self.patched)
            return None
        stderr = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return stderr[0] if stderr else f"git apply exited {proc.returncode}"

    def apply_3way(self, patch: Path) -> str | None:
        """`git apply --3way` a patch made against another commit: it falls back to a
        three-way merge with the blobs the patch names. Return git's complaint when it
        does not apply cleanly (a conflict counts as not applying)."""
        proc = self._git("apply", "--3way", "--whitespace=nowarn", str(patch), check=False)
        if proc.returncode == 0:
            # Like apply_patch: a source rewritten within the second its bytecode was
            # written, at the same size, would otherwise run as it was.
            self._drop_bytecode(_new_paths(patch.read_bytes()))
            return None
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        conflicts = [line[2:] for line in lines if line.startswith("U ")]
        if conflicts:
            return f"conflicts with HEAD in {', '.join(conflicts)}"
        errors = [line.removeprefix("error: ") for line in lines if line.startswith("error:")]
        return errors[0] if errors else f"git apply --3way exited {proc.returncode}"

    def diff_head(self) -> bytes:
        """What the worktree (index and files) changes against its commit, as a patch."""
        return self._git("diff", "--no-color", "--no-ext-diff", "--binary", "HEAD").stdout


class WorktreePool:
    """Worktrees under one private temporary folder, handed out one per job."""

    def __init__(
        self,
        git: Git,
        root: Path,
        generated: Generated = NONE,
        by_commit: Mapping[str, Generated] | None = None,
        timings: Timings | None = None,
    ) -> None:
        self.git = git
        # Each lease's preparation and use, for `check --profile` and timings.json
        self.timings = timings if timings is not None else Timings()
        self.root = root
        # The checkout's generated files go into every worktree, except those of a
        # commit `by_commit` names, which get its files instead (base: the data-only ones).
        self.generated = generated
        self.by_commit = dict(by_commit or {})
        self._free: queue.SimpleQueue[Worktree] = queue.SimpleQueue()
        self._all: list[Worktree] = []
        self._lock = threading.Lock()
        # git names a worktree's admin folder after the folder's name: a unique
        # name keeps two checks of one repository out of each other's way.
        self._prefix = f"andgate-{secrets.token_hex(4)}-wt"
        self._common_dir: Path | None = None
        # The check's log of worktree switches that found what code had left (logs/worktrees.log)
        self.journal: list[str] = []
        # commit -> its files (the plan's listings): a verified switch hashes them itself
        self.listings: dict[str, Mapping[str, TreeEntry]] = {}

    @contextmanager
    def lease(self, commit: str, *, verified: bool = False, label: str = "") -> Iterator[Worktree]:
        """A worktree at `commit`, returned to the pool afterwards. `verified`: for a
        trusted run (contract section 4, step 4), a reused worktree is checked against
        `commit` after the switch (`Worktree.differences`) and rebuilt when anything
        differs, never reused as it is. `label` names the lease's two timed steps:
        making the worktree ready, and what ran in it (a pytest process)."""
        label = label or f"a run at {commit[:12]}"
        worktree = self._take()
        try:
            with self.timings.step(f"{label}: worktree", kind="worktrees"):
                self._switch(worktree, commit, verified)
                copy_into(worktree.path, self.by_commit.get(commit, self.generated))
            with self.timings.step(label, kind="pytest"):
                yield worktree
        finally:
            self._free.put(worktree)

    def _switch(self, worktree: Worktree, commit: str, verified: bool) -> None:
        reused = worktree.created
        worktree.checkout(commit, verified=verified)
        if not (verified and reused):
            return  # a worktree git just added is its commit
        found = worktree.differences(commit, self.listings.get(commit))
        if not found:
            return
        shown = "; ".join(found[:10]) + (f"; and {len(found) - 10} more" if len(found) > 10 else "")
        with self._lock:
            self.journal.append(
                f"{worktree.path.name}: switched to {commit[:12]} for a trusted run, it still "
                f"held what an earlier run left ({shown}): rebuilt"
            )
        worktree.rebuild(commit)

    def _take(self) -> Worktree:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            with self._lock:
                if self._common_dir is None:
                    self._common_dir = self._find_common_dir()
                path = self.root / f"{self._prefix}{len(self._all)}"
                worktree = Worktree(self.git, path, self._common_dir)
                self._all.append(worktree)
            return worktree

    def _find_common_dir(self) -> Path:
        common = self.git.out("rev-parse", "--git-common-dir")
        return Path(os.path.realpath(self.git.repo / common))

    def close(self) -> None:
        """Remove every worktree of the pool, each attempted whatever happened to
        the others; bounded by CLOSE_BUDGET; never raises, so never masks the
        error that is ending the pool's `with` block."""
        deadline = time.monotonic() + CLOSE_BUDGET
        for worktree in self._all:
            left = deadline - time.monotonic()
            worktree.remove(min(REMOVE_TIMEOUT, left) if left >= 1 else None)


# Everything that differs from HEAD, untracked and ignored files one by one.
STATUS = (
    "status",
    "--porcelain=v2",
    "-z",
    "--branch",
    "--no-renames",
    "--untracked-files=all",
    "--ignored=traditional",
)


def status_paths(raw: bytes) -> tuple[str | None, list[str]]:
    """HEAD's commit (None when unborn or unknown) and the paths of
    `git status --porcelain=v2 -z --no-renames` output."""
    head, entries = status_entries(raw)
    return head, [path for path, _ in entries]


STATUS_KINDS = {b"? ": "is untracked", b"! ": "is untracked", b"1 ": "differs", b"u ": "differs"}


def status_entries(raw: bytes) -> tuple[str | None, list[tuple[str, str]]]:
    """HEAD's commit (None when unborn or unknown) and each path of `git status
    --porcelain=v2 -z --no-renames` output with how it differs."""
    head, entries = None, []
    for entry in raw.split(b"\0"):
        kind = STATUS_KINDS.get(entry[:2])
        if entry.startswith(b"# branch.oid "):
            oid = entry.removeprefix(b"# branch.oid ").decode("ascii", "replace")
            head = None if oid == "(initial)" else oid
        elif kind is None:
            continue
        elif entry[:2] in (b"? ", b"! "):
            entries.append((decode_path(entry[2:]), kind))
        elif entry[:2] == b"1 ":  # 1 XY sub mH mI mW hH hI path
            entries.append((decode_path(entry.split(b" ", 8)[8]), kind))
        else:  # u XY sub m1 m2 m3 mW h1 h2 h3 path
            entries.append((decode_path(entry.split(b" ", 10)[10]), kind))
    return head, entries


def numstat_paths(raw: bytes) -> list[str]:
    """The paths of `git apply --numstat -z` output (`added TAB deleted TAB path NUL`;
    a rename names only its new path)."""
    return [decode_path(e.split(b"\t", 2)[2]) for e in raw.split(b"\0") if e.count(b"\t") >= 2]


def same_files(root: Path, files: Mapping[str, TreeEntry]) -> bool:
    """Whether the folder holds exactly these files (a commit's listing), byte for
    byte, each with its executable bit, and nothing else but folders on their way
    (and the worktree's `.git` file). Submodules are not looked into."""
    folders = {""}
    for path, entry in files.items():
        if entry.kind != "blob":
            folders.add(path)  # a submodule: its folder, whatever it holds
            continue
        if not _same_file(root / path, entry):
            return False
        parent = os.path.dirname(path)
        while parent not in folders:
            folders.add(parent)
            parent = os.path.dirname(parent)
    for here, dirs, names in os.walk(root):
        rel = os.path.relpath(here, root)
        rel = "" if rel == "." else rel
        walk = []
        for name in dirs:  # folders, and links to folders (never followed)
            path = os.path.join(rel, name)
            if path in folders and path not in files:
                walk.append(name)
            elif path not in files:
                return False  # untracked (git tracks no empty folder)
        dirs[:] = walk
        if any(os.path.join(rel, n) not in files and (rel or n != ".git") for n in names):
            return False
    return True


def _same_file(path: Path, entry: TreeEntry) -> bool:
    """A file of the worktree is its tree entry: a link with its target, or a regular
    file with its bytes and executable bit."""
    try:
        info = os.lstat(path)
        if entry.mode == SYMLINK_MODE:
            if not stat.S_ISLNK(info.st_mode):
                return False
            data = os.fsencode(os.readlink(path))
        else:
            executable = bool(info.st_mode & stat.S_IXUSR)
            if not stat.S_ISREG(info.st_mode) or executable != (entry.mode == "100755"):
                return False
            data = path.read_bytes()
    except OSError:
        return False
    return blob_id(data, entry.sha) == entry.sha


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@contextmanager
def _repo_lock(common_dir: Path | None) -> Iterator[None]:
    """Hold an flock on the git common dir, waiting at most REPO_LOCK_WAIT
    (then go on unlocked: the retry in `_add` covers what is left)."""
    try:
        fd = os.open(common_dir, os.O_RDONLY | os.O_DIRECTORY) if common_dir else -1
    except OSError:
        fd = -1
    if fd < 0:
        yield
        return
    try:
        deadline = time.monotonic() + REPO_LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # releases the lock


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
def worktree_pool(
    git: Git,
    root: Path,
    generated: Generated = NONE,
    by_commit: Mapping[str, Generated] | None = None,
    timings: Timings | None = None,
) -> Iterator[WorktreePool]:
    pool = WorktreePool(git, root, generated, by_commit, timings)
    try:
        yield pool
    finally:
        with deferred_signals():
            pool.close()


def _new_paths(patch: bytes) -> list[str]:
    """The paths a patch's `+++ b/<path>` headers name (what it writes)."""
    return [
        line[6:].decode("utf-8", "surrogateescape").rstrip("\t")
        for line in patch.splitlines()
        if line.startswith(b"+++ b/")
    ]
