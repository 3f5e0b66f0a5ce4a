"""Ending processes: the runs still going when a check stops, their process groups,
and the orphans test code left behind (andgate is their subreaper).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from andgate.process.signals import wait_event

PR_SET_CHILD_SUBREAPER = 36


KILL_WAIT = 30.0


RUNNING: set[subprocess.Popen[bytes] | ForkedChild] = set()


RUNNING_LOCK = threading.Lock()


# Set while run_parallel unwinds: a worker between its `git checkout` and
# starting pytest must not start a process the interrupt already missed.
STOPPING = threading.Event()


class ForkedChild:
    """A pytest process the fork server started: its pid (its own session and
    process group) and, once the server reaped it, its exit status."""

    def __init__(self, pid: int) -> None:
        self.pid = pid  # 0 until the server answers (never signalled as a group)
        self.returncode: int | None = None
        self.started = threading.Event()
        self._done = threading.Event()

    def finish(self, returncode: int | None) -> None:
        """The server reaped it (`returncode`), or ended first (None)."""
        self.returncode = returncode
        self.started.set()
        self._done.set()

    def wait(self, timeout: float | None = None) -> int | None:
        if not wait_event(self._done, timeout):
            raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
        return self.returncode


def kill_all_running() -> None:
    """Kill every pytest process the gate started (Ctrl-C, SIGTERM, gate error)."""
    with RUNNING_LOCK:
        running = list(RUNNING)
    for proc in running:
        kill_group(proc)


def kill_group(proc: subprocess.Popen[bytes] | ForkedChild) -> None:
    """Kill the process and everything left in its process group (daemons a
    test forked). The wait is bounded: a process stuck in the kernel must not
    hang the gate."""
    signal_group(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_WAIT)


def signal_group(proc: subprocess.Popen[bytes] | ForkedChild) -> None:
    if proc.pid <= 0:
        return  # never os.killpg(0): that is the gate's own group
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


_SUBREAPER: list[bool] = []


def become_subreaper() -> bool:
    """Linux: orphans of our descendants are re-parented to this process, so a
    test's detached daemon cannot outlive the gate's runs by leaving its session."""
    if not _SUBREAPER:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _SUBREAPER.append(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
        except (OSError, AttributeError):
            _SUBREAPER.append(False)
    return _SUBREAPER[0]


def kill_orphans(proc_root: Path = Path("/proc"), *, thorough: bool = False) -> int:
    """Kill this process's children that live in another session: processes a
    test detached, re-parented to the gate (a subreaper). Our own git commands
    share our session. Only while no pytest run is active, since an orphan may be
    a live run's daemon, and under the lock that starting a run holds, so a run
    being started is never mistaken for one. Repeated until none is left (a killed
    daemon's children are re-parented in turn). Returns how many; without /proc
    this is a no-op."""
    me, session = os.getpid(), os.getsid(0)
    killed: set[int] = set()
    with RUNNING_LOCK:
        if RUNNING:
            return 0
        for _ in range(20):
            found = [
                pid
                for pid, parent, sid in _processes(proc_root, _children(proc_root, me, thorough))
                if parent == me and sid != session and pid not in killed
            ]
            if not found:
                break
            for pid in found:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                _reap(pid)
            killed.update(found)
    return len(killed)


def _reap(pid: int) -> None:
    """Collect a killed orphan's exit status (it is our child now), bounded."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        time.sleep(0.01)


def _children(proc_root: Path, me: int, thorough: bool = False) -> list[str] | None:
    """The pids of this process's children, from each thread's `children` file
    (an orphan may be re-parented to any of our threads); None, and then every
    process is read, when the kernel has no such file or when `thorough`: a
    children file may leave out a child while a sibling exits during the read
    (proc(5)), so the sweep at the end of each phase reads every process."""
    if thorough:
        return None
    pids: list[str] = []
    try:
        for task in os.scandir(proc_root / str(me) / "task"):
            with open(Path(task.path, "children"), "rb") as fh:
                pids += fh.read().decode("ascii", "replace").split()
    except OSError:
        return None
    return pids


def _processes(proc_root: Path, pids: list[str] | None = None) -> list[tuple[int, int, int]]:
    """(pid, parent pid, session id) of these processes, or of every one /proc shows."""
    out = []
    try:
        entries = (
            pids
            if pids is not None
            else [e.name for e in os.scandir(proc_root) if e.name.isdigit()]
        )
    except OSError:
        return []
    for name in entries:
        try:
            with open(proc_root / name / "stat", "rb") as fh:
                stat_line = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parens.
        fields = stat_line.rpartition(")")[2].split()
        if len(fields) >= 4:
            out.append((int(name), int(fields[1]), int(fields[3])))
    return out
