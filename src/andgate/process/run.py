"""Run one pytest process for one trust class and read back what it recorded.

The process is started through a tiny bootstrap that imports the installed
andgate plugin and pytest *before* the worktree goes on `sys.path`, so a change
cannot shadow them with a top-level `andgate/` or `pytest.py` of its own. Each
process runs in its own session (process group) and everything left in that
group is killed when it ends or times out. On Linux the gate is a child
subreaper: a process a test detached (`setsid`, a double fork) is re-parented to
the gate rather than to init, and killed once no run is active. Nothing marks
the processes: the gate puts no variable of its own in their environment.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from andgate.process.argv import BOOTSTRAP, config_file, pytest_argv, test_environment
from andgate.process.forkclient import ForkServer, fork_server
from andgate.process.reaping import (
    RUNNING,
    RUNNING_LOCK,
    STOPPING,
    ForkedChild,
    become_subreaper,
    kill_all_running,
    kill_group,
    kill_orphans,
    signal_group,
)
from andgate.process.requests import RunRequest, Stop
from andgate.process.results import RunResult, log_tail, read_results
from andgate.process.signals import deferred_signals, wait_future
from andgate.records import (
    XDIST_COLLECTIONS_DIFFER,
    Role,
)

T = TypeVar("T")


# The gate's fallback: a process with an item limit in which no item finished for
# this much longer than the limit is stuck where the plugin's alarm cannot reach
# (C code that holds the GIL), and is stopped, not waited for until `--timeout`.
STALL_GRACE = 60.0


STALL_POLL = 2.0


# How much of the running-items file a stall's message reads and names.
RUNNING_BYTES, RUNNING_NAMED, NODEID_CHARS = 4096, 4, 300


# How often a run with a `Stop` looks at it: a budget ends a process this late at most.
STOP_POLL = 0.1


STOPPED = -signal.SIGKILL  # the exit code a stopped run reports


def run_pytest(
    request: RunRequest,
    worktree: Path,
    scratch: Path,
    timeout: float,
    stop: Stop | None = None,
) -> RunResult:
    """Run `request` in `worktree`; `scratch` is a gate-owned folder outside it.
    `stop`: once it is set, the process is killed (within `STOP_POLL` seconds) and
    the result is an error (a time budget that ends what is running)."""
    scratch.mkdir(parents=True, exist_ok=True)
    stem = request.label.replace(" ", "-").replace("/", "_")
    spec_path, results = scratch / f"{stem}.spec.json", scratch / f"{stem}.results.json"
    junit = scratch / f"{stem}.xml" if request.junit_name else None
    log = scratch / f"{stem}.log"
    results.unlink(missing_ok=True)
    # An earlier run's (same label) would look like a process that finished nothing,
    # or name the item it ran.
    Path(f"{results}.progress").unlink(missing_ok=True)
    Path(f"{results}.running").unlink(missing_ok=True)
    environment = request.environment
    spec = {
        "role": Role(request.role).value,
        "root": str(worktree),
        "results": str(results),
        "rules": request.rules.to_json(),
        "allow_files": None if request.allow_files is None else list(request.allow_files),
        "deny_files": list(request.deny_files),
        "first_files": list(request.first_files),
        "hypothesis_seed": request.hypothesis_seed,
        "shard": None if request.shard is None else request.shard.to_json(),
        "checkout": None if environment.checkout is None else str(environment.checkout),
        "project": environment.project.to_json(),
        "only_items": None if request.only_items is None else list(request.only_items),
        "skip_items": list(request.skip_items),
        "item_timeout": request.item_limit,
        "integrity": None if request.integrity is None else request.integrity.spec(),
    }
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    args = pytest_argv(request, spec_path, junit, worktree, config_file(worktree, scratch))
    launch = json.dumps({"spec": str(spec_path), "args": args}) + "\n"
    started = time.monotonic()
    env = test_environment(environment.scrub_env)
    argv = [sys.executable, "-P", "-c", BOOTSTRAP]
    server = fork_server(env, environment, scratch)
    limit = request.item_limit
    watch = None if limit is None else StallWatch(Path(f"{results}.progress"), limit + STALL_GRACE)
    code, timed_out = _run_session(
        argv, worktree, log, timeout, env, launch, server, watch=watch, stop=stop
    )
    seconds = time.monotonic() - started
    if stop is not None and stop.is_set() and (timed_out or code == STOPPED):
        error = f"the {request.label} pytest process was ended: its time budget ran out"
        return RunResult(request.label, None, seconds, error=error, log=log, junit=junit)
    if watch is not None and watch.stalled:
        error = (
            f"the {request.label} pytest process stopped responding: no test item finished "
            f"in {watch.after:.0f}s, past the {limit:g} s item limit{watch.running()} (an "
            "item blocked where the item timeout cannot stop it, such as C code that holds "
            "the GIL)"
        )
        return RunResult(request.label, None, seconds, error=error, log=log, junit=junit)
    if timed_out:
        error = f"the {request.label} pytest process ran past the {timeout:.0f}s timeout"
        return RunResult(request.label, None, seconds, error=error, log=log, junit=junit)
    if code is None:
        error = (
            f"the fork server that started the {request.label} pytest process ended "
            f"during the run, so its exit status is unknown: {log_tail(log)}"
        )
        return RunResult(request.label, None, seconds, error=error, log=log, junit=junit)
    result = read_results(
        request.label, code, seconds, results, log, junit, expected=request.integrity
    )
    if not request.xdist_off and _xdist_collections_differ(result):
        # The contract: whatever the config loads, the same per-item facts as without
        # it. Here xdist ran nothing, because its workers collected different items;
        # without distribution one process collects, once, as `pytest` without `-n`.
        return run_pytest(replace(request, xdist_off=True), worktree, scratch, timeout, stop)
    return result


def _xdist_collections_differ(result: RunResult) -> bool:
    return any(m.startswith(XDIST_COLLECTIONS_DIFFER) for _, m in result.collection_errors)


def run_parallel(tasks: Sequence[Callable[[], T]], jobs: int) -> list[T]:
    """Run tasks on up to `jobs` threads, results in task order.

    On Ctrl-C, SIGTERM or an error, every pytest process is killed, workers
    start no new one, and this returns (raises) only once every worker has
    finished, with further signals held meanwhile: the caller may then remove
    the worktrees they used.
    """
    if jobs <= 1 or len(tasks) <= 1:
        return [task() for task in tasks]
    executor = ThreadPoolExecutor(max_workers=min(jobs, len(tasks)))
    try:
        futures = [executor.submit(task) for task in tasks]
        return [wait_future(f) for f in futures]
    except BaseException:
        with deferred_signals():  # a second Ctrl-C must not skip a kill
            STOPPING.set()
            kill_all_running()
        raise
    finally:
        with deferred_signals():
            executor.shutdown(wait=True, cancel_futures=True)
            STOPPING.clear()
            kill_orphans(thorough=True)


def _run_session(
    argv: list[str],
    cwd: Path,
    log: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    server: ForkServer | None = None,
    watch: StallWatch | None = None,
    stop: Stop | None = None,
) -> tuple[int | None, bool]:
    """Run `argv` (or, with `server`, a fork of it that runs the bootstrap with
    `stdin` as its launch line) in its own session; (exit code, timed out). The
    code is None when the server ended before reporting the child's status, and
    `STOPPED` when `stop` was set while it ran."""
    become_subreaper()
    env = test_environment() if env is None else env
    with open(log, "wb") as out:
        # Started and registered under the lock that kill_orphans holds: a process
        # between fork and registration must never look like an orphan.
        with RUNNING_LOCK:
            if STOPPING.is_set():
                # The check is being interrupted: a worker that got here after the
                # kill starts nothing (its result is never read).
                return -signal.SIGKILL, False
            proc: subprocess.Popen[bytes] | ForkedChild | None = None
            if server is not None and stdin is not None:
                proc = server.start(cwd, log, env, stdin)
            if proc is None:
                proc = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            RUNNING.add(proc)
            stopping = STOPPING.is_set()
        if isinstance(proc, subprocess.Popen):
            _feed(proc, stdin)
        code: int | None
        try:
            if stopping:
                signal_group(proc)
            code = _wait(proc, timeout, watch, stop)
            timed_out = False
        except subprocess.TimeoutExpired:
            code, timed_out = -1, True
        finally:
            kill_group(proc)
            with RUNNING_LOCK:
                RUNNING.discard(proc)
            kill_orphans()  # a no-op while another run is active
    return code, timed_out


class StallWatch:
    """Whether a pytest process stopped finishing items: its progress file (written
    once collection is done and as items finish) has not changed for `after` s; and
    which items it was running then (`plugin.item_clock.RunningItems`, beside it)."""

    def __init__(self, progress: Path, after: float) -> None:
        self.progress, self.after = progress, after
        self.stalled = False

    def check(self) -> bool:
        with contextlib.suppress(OSError):
            age = time.time() - self.progress.stat().st_mtime
            self.stalled = age > self.after
        return self.stalled

    def running(self) -> str:
        """ ", it was running <node ids>", or "" when the process named none. The
        process wrote it, so it is shown, never trusted: it only names."""
        path = self.progress.with_name(self.progress.name.removesuffix(".progress") + ".running")
        try:
            data = path.read_bytes()[:RUNNING_BYTES]
        except OSError:
            return ""
        text = data.split(b"\0", 1)[0].decode("utf-8", "replace")
        names = [n[:NODEID_CHARS] for n in text.splitlines() if n.strip()][:RUNNING_NAMED]
        return f", it was running {', '.join(names)}" if names else ""


def _wait(
    proc: subprocess.Popen[bytes] | ForkedChild,
    timeout: float,
    watch: StallWatch | None,
    stop: Stop | None,
) -> int | None:
    """The process's exit code; `STOPPED` once `stop` is set (it is then killed by
    the caller, like a process that timed out). Raises TimeoutExpired past `timeout`
    or once `watch` says it stalled (the caller kills its group either way)."""
    if watch is None and stop is None:
        return proc.wait(timeout=timeout)
    poll = STOP_POLL if stop is not None else STALL_POLL
    end = time.monotonic() + timeout
    while stop is None or not stop.is_set():
        left = end - time.monotonic()
        if left <= 0 or (watch is not None and watch.check()):
            raise subprocess.TimeoutExpired(f"pid {proc.pid}", timeout)
        with contextlib.suppress(subprocess.TimeoutExpired):
            return proc.wait(timeout=min(left, poll))
    return STOPPED


def _feed(proc: subprocess.Popen[bytes], text: str | None) -> None:
    """One line on the process's stdin, then end of file (a process that died
    before reading it reports its own failure)."""
    if text is None or proc.stdin is None:
        return
    with contextlib.suppress(OSError):
        proc.stdin.write(text.encode("utf-8", "surrogateescape"))
    with contextlib.suppress(OSError):
        proc.stdin.close()


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


MMAP_THRESHOLD = 128 * 1024  # glibc's default, made fixed


_MMAP_FIXED: list[bool] = []


def fix_mmap_threshold() -> bool:
    """glibc: every allocation above 128 KiB gets its own mapping, returned to the
    system when freed. By default glibc raises that threshold to the size of the
    largest block freed so far (up to 32 MiB), so after the first results file the
    next ones' text, the JUnit documents and the inventory's bytes (10-25 MiB each
    at 64,000 items) land in the heap, which keeps them after they are freed: about
    40 MiB more resident per 64,000-item results file read. Elsewhere a no-op."""
    if not _MMAP_FIXED:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _MMAP_FIXED.append(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1)
        except (OSError, AttributeError, TypeError):  # TypeError: no CDLL(None) on Windows
            _MMAP_FIXED.append(False)
    return _MMAP_FIXED[0]
