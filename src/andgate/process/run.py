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

import atexit
import contextlib
import ctypes
import json
import os
import re
import secrets
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol, TypeVar

from andgate.git import clean_env
from andgate.plugin.classify import ItemFacts, Rules
from andgate.plugin.shard import Shard
from andgate.process.installed import InstalledProject
from andgate.process.runner_files import HIDDEN_FROM_TESTS
from andgate.process.signals import deferred_signals, wait_event, wait_future
from andgate.records import (
    XDIST_COLLECTIONS_DIFFER,
    ClassFacts,
    ItemResult,
    Outcome,
    Role,
    item_outcome,
)
from andgate.trust.pytest_config import root_config_file

T = TypeVar("T")

# The bootstrap's own exit code when pytest (or andgate) cannot be imported in
# the environment the tests run with: a clear message, not a wall of traceback.
EXIT_CANNOT_IMPORT = 121
BOOTSTRAP = (
    "import json, os, sys\n"
    "try:\n"
    "    import andgate.plugin, andgate.plugin.redirect, pytest\n"
    "except ImportError as exc:\n"
    "    print('andgate-bootstrap:', exc, file=sys.stderr)\n"
    f"    raise SystemExit({EXIT_CANNOT_IMPORT})\n"
    "launch = json.loads(sys.stdin.readline())\n"
    "os.dup2(os.open(os.devnull, os.O_RDONLY), 0)\n"
    "sys.path.insert(0, os.getcwd())\n"
    "andgate.plugin.activate(launch['spec'])\n"
    "code = int(pytest.main(launch['args']))\n"
    "sys.stdout.flush()\n"
    "sys.stderr.flush()\n"
    "os._exit(code)\n"
)
# The spec path and pytest's arguments reach the process on its stdin, not its
# command line: code under test finds no andgate flag in sys.argv or in
# /proc/self/cmdline (xdist hands pytest's arguments to its workers over its own
# channel), and no ANDGATE_* variable in its environment.
# os._exit: by the time pytest.main returns, the results file, the JUnit file
# and the log are written and closed; skipping interpreter finalization saves
# 0.2-0.7 s per process, and a test's leftover non-daemon thread cannot keep
# the process alive until the timeout.
DEFAULT_TIMEOUT = 1800.0
# Each test item's limit (`check --item-timeout`): an item that loops forever fails,
# named, within a minute instead of costing the process its whole `--timeout`. A
# user may not go below the floor: a loaded CI machine slows honest items down.
DEFAULT_ITEM_TIMEOUT = 60.0
ITEM_TIMEOUT_FLOOR = 30.0
# The gate's fallback: a process with an item limit in which no item finished for
# this much longer than the limit is stuck where the plugin's alarm cannot reach
# (C code that holds the GIL), and is stopped, not waited for until `--timeout`.
STALL_GRACE = 60.0
STALL_POLL = 2.0
PR_SET_CHILD_SUBREAPER = 36
# CI credentials that test code must never see (contract section 4), the CI runner's
# command files (what the step publishes: runner_files.py), plus the manifest's
# `scrub_env` globs.
SCRUBBED_ENV = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_*",
    "INPUT_*",
    "ANDGATE_*",
    *HIDDEN_FROM_TESTS,
)
# pytest configuration from the environment: a run reads the worktree's config file
# only (contract section 4; a CI step before andgate's controls the environment).
PYTEST_ENV_CONFIG = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")
# Processes whose passes count: only the plugins base declares load there.
TRUSTED_ROLES = frozenset({Role.ORACLE, Role.PROPERTY})
KILL_WAIT = 30.0
# How often a run with a `Stop` looks at it: a budget ends a process this late at most.
STOP_POLL = 0.1
STOPPED = -signal.SIGKILL  # the exit code a stopped run reports


class Stop(Protocol):
    """Something that says when a run must end (a `threading.Event`, a deadline)."""

    def is_set(self) -> bool: ...


# pytest exit codes (pytest.ExitCode), kept numeric so results files stay plain JSON.
EXIT_INTERNAL_ERROR, EXIT_USAGE_ERROR, EXIT_NO_TESTS = 3, 4, 5


@dataclass(frozen=True)
class RunEnvironment:
    """What every pytest process of one check shares: the user's checkout (so
    imports pointing into it are redirected to the worktree), the project's
    installed import names, and the environment names kept from test code."""

    checkout: Path | None = None
    project: InstalledProject = field(default_factory=InstalledProject)
    scrub_env: tuple[str, ...] = ()
    # The project's own `pytest11` entry points that base does not declare: never
    # loaded by a trusted (oracle, property, replay) process (`project_plugins`).
    head_only_plugins: tuple[str, ...] = ()
    # What the project's installed distributions run at start-up besides the standard
    # editable hook (read while planning, before any test runs): PRODUCTION_SUSPICIOUS.
    startup_hooks: tuple[str, ...] = ()
    # Each test item's time limit in seconds (None: only the process's `--timeout`).
    item_timeout: float | None = None


@dataclass(frozen=True)
class RunRequest:
    """What one pytest process must do."""

    label: str
    role: Role
    rules: Rules
    allow_files: tuple[str, ...] | None = None
    deny_files: tuple[str, ...] = ()
    # Files whose items run first, in collection order, then the rest (a replay's
    # likely killers, `replay_order`): an ordering only, every item still runs.
    first_files: tuple[str, ...] = ()
    collect_only: bool = False
    # Only these node ids run (oracle items skipped on head, run again on base):
    # pytest collects just their functions, the plugin keeps just these ids.
    only_nodeids: tuple[str, ...] | None = None
    exitfirst: bool = False
    # A run whose failures are the expected outcome (a known-bad replay, a
    # discrimination run): only which items failed is read, never how.
    failures_expected: bool = False
    # Without the distribution the user's config asks for (`-n 0`): its xdist
    # workers collected different items (see `run_pytest`).
    xdist_off: bool = False
    hypothesis_seed: int | None = None
    junit_name: str | None = None
    shard: Shard | None = None
    environment: RunEnvironment = field(default_factory=RunEnvironment)
    # Only these items run (a replay's timed-out item, rerun alone), or all but these.
    only_items: tuple[str, ...] | None = None
    skip_items: tuple[str, ...] = ()
    item_timeout: float | None = None  # this run's limit, when not the environment's

    @property
    def item_limit(self) -> float | None:
        return self.item_timeout if self.item_timeout is not None else self.environment.item_timeout


@dataclass(frozen=True, slots=True)
class CollectedItem:
    facts: ItemFacts
    cls: str
    why: str
    skip_mark: str | None = None  # the reason a skip/skipif mark skips it here
    params: str | None = None  # digest of its parameter values (plain data only)


@dataclass(frozen=True)
class RunResult:
    """What a pytest process recorded, or why it recorded nothing usable."""

    label: str
    exit_code: int | None
    seconds: float
    items: tuple[CollectedItem, ...] = ()
    reports: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    seeds: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    collection_errors: tuple[tuple[str, str], ...] = ()
    error: str | None = None
    log: Path | None = None
    junit: Path | None = None
    # Modules imported from the worktree that are not a plain Python source file
    # there: (module, path, target, why), see `redirect.unscanned_modules`.
    unscanned: tuple[tuple[str, str, str, str], ...] = ()

    def selected(self, role: str) -> tuple[CollectedItem, ...]:
        return tuple(i for i in self.items if i.cls == role)

    def outcome(self, nodeid: str) -> Outcome:
        return item_outcome(self.reports.get(nodeid))

    def message(self, nodeid: str) -> str:
        entry = self.reports.get(nodeid, {})
        return str(entry.get("message") or entry.get("rerun_message") or "")


def pytest_argv(
    request: RunRequest, spec_path: Path, junit: Path | None, worktree: Path, config: Path
) -> list[str]:
    """pytest's arguments. rootdir, config file and conftest boundary are the
    worktree's, given explicitly: pytest must never pick up a `pytest.ini` or a
    `conftest.py` that something left in a folder above the worktree."""
    argv = [f"--andgate-run={spec_path}", f"--rootdir={worktree}", "-c", str(config)]
    argv.append(f"--confcutdir={worktree}")
    argv += ["-p", "no:cacheprovider", "-rfE", "--continue-on-collection-errors"]
    if request.role in TRUSTED_ROLES:
        for name in request.environment.head_only_plugins:
            argv += ["-p", f"no:{name}"]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        argv += ["-p", "andgate.plugin"]
    if request.collect_only:
        argv.append("--collect-only")
    if request.exitfirst:
        argv.append("-x")
    if request.xdist_off:
        argv += ["-n", "0"]
    if request.failures_expected:
        # pytest's default long traceback parses the failing test's source (ast,
        # tokenize, inspect.getmodule over every module): two thirds of a replay's
        # test time, for a log nobody reads. The native traceback is formatted from
        # the frames alone, and pytest's one-line crash message is the same.
        argv.append("--tb=native")
    if junit is not None:
        argv.append(f"--junitxml={junit}")
    if request.only_nodeids is not None:
        argv += selection_args(request.only_nodeids)
    return argv


def selection_args(nodeids: Sequence[str]) -> list[str]:
    """pytest's positional arguments for these node ids: each one's function or
    method without its parameters (an id's parameters can hold characters pytest's
    argument parser splits on; the plugin keeps the exact ids), once each."""
    args: dict[str, None] = {}
    for nodeid in nodeids:
        holder, sep, name = nodeid.rpartition("::")
        if sep and name.endswith("]") and "[" in name:
            nodeid = f"{holder}{sep}{name[: name.index('[')]}"
        args.setdefault(nodeid)
    return list(args)


def _config_file(worktree: Path, scratch: Path) -> Path:
    """The config file pytest would pick in the worktree's root, else an empty
    one of the gate's (never one from a folder above the worktree)."""
    chosen = root_config_file(worktree)
    if chosen is not None:
        return worktree / chosen
    empty = scratch / "no-config" / "pytest.ini"
    if not empty.exists():
        empty.parent.mkdir(parents=True, exist_ok=True)
        empty.write_text("[pytest]\n", encoding="utf-8")
    return empty


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
    # An earlier run's (same label) would look like a process that finished nothing.
    Path(f"{results}.progress").unlink(missing_ok=True)
    environment = request.environment
    spec = {
        "role": Role(request.role).value,
        "root": str(worktree),
        "results": str(results),
        "rules": request.rules.to_json(),
        "allow_files": None if request.allow_files is None else list(request.allow_files),
        "deny_files": list(request.deny_files),
        "first_files": list(request.first_files),
        "only_nodeids": None if request.only_nodeids is None else list(request.only_nodeids),
        "hypothesis_seed": request.hypothesis_seed,
        "shard": None if request.shard is None else request.shard.to_json(),
        "checkout": None if environment.checkout is None else str(environment.checkout),
        "project": environment.project.to_json(),
        "only_items": None if request.only_items is None else list(request.only_items),
        "skip_items": list(request.skip_items),
        "item_timeout": request.item_limit,
    }
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    args = pytest_argv(request, spec_path, junit, worktree, _config_file(worktree, scratch))
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
            f"in {watch.after:.0f}s, past the {limit:g} s item limit (an item blocked where "
            "the item timeout cannot stop it, such as C code that holds the GIL)"
        )
        return RunResult(request.label, None, seconds, error=error, log=log, junit=junit)
    if timed_out:
        error = f"the {request.label} pytest process ran past the {timeout:.0f}s timeout"
        return RunResult(request.label, None, seconds, error=error, log=log, junit=junit)
    if code is None:
        error = (
            f"the fork server that started the {request.label} pytest process ended "
            f"during the run, so its exit status is unknown: {_log_tail(log)}"
        )
        return RunResult(request.label, None, seconds, error=error, log=log, junit=junit)
    result = read_results(request.label, code, seconds, results, log, junit)
    if not request.xdist_off and _xdist_collections_differ(result):
        # The contract: whatever the config loads, the same per-item facts as without
        # it. Here xdist ran nothing, because its workers collected different items;
        # without distribution one process collects, once, as `pytest` without `-n`.
        return run_pytest(replace(request, xdist_off=True), worktree, scratch, timeout, stop)
    return result


def _xdist_collections_differ(result: RunResult) -> bool:
    return any(m.startswith(XDIST_COLLECTIONS_DIFFER) for _, m in result.collection_errors)


_RUNNING: set[subprocess.Popen[bytes] | ForkedChild] = set()
_RUNNING_LOCK = threading.Lock()
# Set while run_parallel unwinds: a worker between its `git checkout` and
# starting pytest must not start a process the interrupt already missed.
_STOPPING = threading.Event()


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


FORK_SERVER_START_TIMEOUT = 60.0
FORK_SERVER_REPLY_TIMEOUT = 30.0


class ForkServer:
    """The gate's side of `andgate.process.forkserver`: one server process (in the gate's
    session, so `kill_orphans` leaves it alone, in a process group of its own, so
    a terminal's Ctrl-C does not reach it), a thread reading its replies, and
    the children it started. Any surprise marks it dead: later runs use Popen."""

    def __init__(self, env: dict[str, str], scratch: Path) -> None:
        """Start the server: it imports pytest meanwhile, and waits for `configure`."""
        from andgate.process.forkserver import SERVER

        self.env = env
        self.alive = False
        self.why = "not started"
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._children: dict[str, ForkedChild] = {}
        self.top: frozenset[str] = frozenset()  # top-level modules it imported early
        replies, reply_w = os.pipe()
        try:
            with open(scratch / "fork-server.log", "ab") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-P", "-c", SERVER],
                    cwd=scratch,
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(reply_w,),
                    process_group=0,
                )
        except BaseException:
            os.close(replies)
            raise
        finally:
            os.close(reply_w)
        self.replies = os.fdopen(replies, "rb")
        self.reply_fd = reply_w  # its number in the server (pass_fds keeps it)
        self._reader = threading.Thread(target=self._read, name="andgate-fork-server", daemon=True)
        self._reader.start()

    def configure(self, environment: RunEnvironment) -> bool:
        """Tell the server the runs' checkout and project; whether it can fork them."""
        config = {
            "replies": self.reply_fd,
            "checkout": None if environment.checkout is None else str(environment.checkout),
            "names": list(environment.project.names),
            "distributions": list(environment.project.distributions),
        }
        if self._send(config) and wait_event(self._ready, FORK_SERVER_START_TIMEOUT) and self.alive:
            return True
        self.why = self.why if self.why != "not started" else "no answer"
        self.stop()
        return False

    def _send(self, message: dict[str, Any]) -> bool:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode("utf-8", "surrogateescape"))
            self.proc.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def _read(self) -> None:
        try:
            for line in self.replies:
                message = json.loads(line)
                if "ready" in message:
                    self.top = frozenset(str(n) for n in message.get("top", ()))
                    self.alive = bool(message["ready"])
                    self.why = str(message.get("why", ""))
                    self._ready.set()
                elif "status" in message:
                    with self._lock:
                        child = self._children.pop(str(message["id"]), None)
                    if child is not None:
                        child.finish(int(message["status"]))
                else:
                    with self._lock:
                        child = self._children.get(str(message["id"]))
                    if child is not None:
                        child.pid = int(message["pid"])
                        child.started.set()
        except (OSError, ValueError, KeyError, TypeError):
            pass
        self._lost("the fork server ended")

    def _lost(self, why: str) -> None:
        with self._lock:
            if self.alive:
                self.why = why
            self.alive = False
            children, self._children = list(self._children.values()), {}
        self._ready.set()
        for child in children:
            child.finish(None)

    def start(self, cwd: Path, log: Path, env: dict[str, str], launch: str) -> ForkedChild | None:
        """A fork running the bootstrap with `launch`; None (use Popen) when this
        server cannot start one. The child is known before the request is sent:
        a status that arrives right after the pid is never missed."""
        if shadows(cwd, self.top):
            return None
        ident = secrets.token_hex(16)
        child = ForkedChild(0)
        with self._lock:
            if not self.alive or env != self.env:
                return None
            self._children[ident] = child
        request = {"id": ident, "cwd": str(cwd), "log": str(log), "env": env}
        request["launch"] = json.loads(launch)
        if not self._send(request):
            self._lost("the fork server stopped reading")
            return None  # it never got the request, so nothing was forked: Popen
        if not wait_event(child.started, FORK_SERVER_REPLY_TIMEOUT):
            # It may have forked: fail this run closed rather than start another.
            self._lost("the fork server did not answer")
            self.stop()
        return child

    def busy(self) -> bool:
        with self._lock:
            return bool(self._children)

    def stop(self) -> None:
        """End of file on its requests: it kills what is left and exits."""
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=KILL_WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=KILL_WAIT)
        self._reader.join(timeout=KILL_WAIT)
        with contextlib.suppress(OSError, ValueError):
            self.replies.close()
        with self._lock:
            self.alive = False


def shadows(root: Path, names: frozenset[str]) -> bool:
    """Whether `root` (first on a run's sys.path) holds a module or folder named
    like one of `names`: a fresh process would import that one instead of the
    standard library's the server already holds. A folder counts even without
    `__init__.py`: a false alarm costs a Popen start, a miss a different run."""
    if not names:
        return False
    try:
        entries = os.listdir(root)
    except OSError:
        return True
    return any(e.partition(".")[0] in names for e in entries)


_SERVER: dict[str, Any] = {}
_SERVER_LOCK = threading.Lock()


def fork_server_enabled(env: Mapping[str, str]) -> bool:
    """Linux only (fork, /proc), on unless ANDGATE_FORK_SERVER=0 in the gate's
    environment, and never under coverage's subprocess measurement."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return False
    if os.environ.get("ANDGATE_FORK_SERVER", "1").strip() == "0":
        return False
    return "COVERAGE_PROCESS_START" not in env


def prestart_fork_server(scrub_env: Sequence[str], scratch: Path) -> None:
    """Start the server now for runs with `test_environment(scrub_env)`: it imports
    pytest while the gate scans and plans, and the first run only configures it."""
    env = test_environment(scrub_env)
    if not fork_server_enabled(env):
        return
    with _SERVER_LOCK:
        if _SERVER:
            return  # one is running, or already starting
        _become_subreaper()
        with contextlib.suppress(OSError):  # then the first run starts one as before
            _SERVER["pending"] = ForkServer(env, scratch)


def fork_server(
    env: dict[str, str], environment: RunEnvironment, scratch: Path
) -> ForkServer | None:
    """The server for runs with `env` and `environment`, started on first use (or
    the prestarted one, if it has that `env`); None when there is none (then runs
    use Popen)."""
    if not fork_server_enabled(env):
        return None
    key = json.dumps(
        [sorted(env.items()), str(environment.checkout), environment.project.to_json()],
        default=str,
    )
    with _SERVER_LOCK:
        current = _SERVER.get("server")
        if _SERVER.get("key") == key:
            return current if current is not None and current.alive else None
        if current is not None:
            if current.busy():
                return None
            current.stop()
        pending = _SERVER.pop("pending", None)
        _become_subreaper()
        _SERVER.clear()
        _SERVER["key"] = key
        if pending is not None and pending.env != env:
            pending.stop()
            pending = None
        try:
            server = pending if pending is not None else ForkServer(env, scratch)
        except OSError:
            return None
        _SERVER["server"] = server
        return server if server.configure(environment) else None


def stop_fork_server() -> None:
    """Stop the server (the end of a check); the next run starts a new one."""
    with _SERVER_LOCK:
        servers = [_SERVER.pop("server", None), _SERVER.pop("pending", None)]
        _SERVER.clear()
    for server in servers:
        if server is not None:
            server.stop()


@contextlib.contextmanager
def fork_server_session() -> Iterator[None]:
    try:
        yield
    finally:
        stop_fork_server()


atexit.register(stop_fork_server)


def kill_all_running() -> None:
    """Kill every pytest process the gate started (Ctrl-C, SIGTERM, gate error)."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for proc in running:
        _kill_group(proc)


def run_parallel(tasks: list[Callable[[], T]], jobs: int) -> list[T]:
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
            _STOPPING.set()
            kill_all_running()
        raise
    finally:
        with deferred_signals():
            executor.shutdown(wait=True, cancel_futures=True)
            _STOPPING.clear()
            kill_orphans(thorough=True)


def test_environment(scrub_globs: Sequence[str] = ()) -> dict[str, str]:
    """os.environ for a pytest process: no GIT_* variable, no CI credential, none
    of the manifest's `scrub_env` names, no pytest configuration."""
    patterns = (*SCRUBBED_ENV, *PYTEST_ENV_CONFIG, *scrub_globs)
    env = {k: v for k, v in clean_env().items() if not any(fnmatchcase(k, p) for p in patterns)}
    env.pop("LC_ALL", None)
    # Bytecode caches only save work (pytest's rewritten-assert caches above
    # all): without them every process re-compiles the test suite and plugins.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


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
    _become_subreaper()
    env = test_environment() if env is None else env
    with open(log, "wb") as out:
        # Started and registered under the lock that kill_orphans holds: a process
        # between fork and registration must never look like an orphan.
        with _RUNNING_LOCK:
            if _STOPPING.is_set():
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
            _RUNNING.add(proc)
            stopping = _STOPPING.is_set()
        if isinstance(proc, subprocess.Popen):
            _feed(proc, stdin)
        code: int | None
        try:
            if stopping:
                _signal_group(proc)
            code = _wait(proc, timeout, watch, stop)
            timed_out = False
        except subprocess.TimeoutExpired:
            code, timed_out = -1, True
        finally:
            _kill_group(proc)
            with _RUNNING_LOCK:
                _RUNNING.discard(proc)
            kill_orphans()  # a no-op while another run is active
    return code, timed_out


class StallWatch:
    """Whether a pytest process stopped finishing items: its progress file (written
    once collection is done and as items finish) has not changed for `after` s."""

    def __init__(self, progress: Path, after: float) -> None:
        self.progress, self.after = progress, after
        self.stalled = False

    def check(self) -> bool:
        with contextlib.suppress(OSError):
            age = time.time() - self.progress.stat().st_mtime
            self.stalled = age > self.after
        return self.stalled


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


def _kill_group(proc: subprocess.Popen[bytes] | ForkedChild) -> None:
    """Kill the process and everything left in its process group (daemons a
    test forked). The wait is bounded: a process stuck in the kernel must not
    hang the gate."""
    _signal_group(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_WAIT)


def _signal_group(proc: subprocess.Popen[bytes] | ForkedChild) -> None:
    if proc.pid <= 0:
        return  # never os.killpg(0): that is the gate's own group
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


_SUBREAPER: list[bool] = []


def _become_subreaper() -> bool:
    """Linux: orphans of our descendants are re-parented to this process, so a
    test's detached daemon cannot outlive the gate's runs by leaving its session."""
    if not _SUBREAPER:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _SUBREAPER.append(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
        except (OSError, AttributeError):
            _SUBREAPER.append(False)
    return _SUBREAPER[0]


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
    with _RUNNING_LOCK:
        if _RUNNING:
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


def read_results(
    label: str, code: int, seconds: float, results: Path, log: Path, junit: Path | None
) -> RunResult:
    """Parse the plugin's results file; anything malformed is an error, never a pass."""
    base = {"label": label, "exit_code": code, "seconds": seconds, "log": log, "junit": junit}
    if code == EXIT_CANNOT_IMPORT and not results.exists():
        return RunResult(
            **base,
            error=(
                f"the {label} pytest process could not start: {_bootstrap_problem(log)} "
                f"(python {sys.executable}); install pytest in the environment andgate "
                "runs tests with"
            ),
        )
    if code in (EXIT_INTERNAL_ERROR, EXIT_USAGE_ERROR):
        kind = "an internal error" if code == EXIT_INTERNAL_ERROR else "a usage error"
        return RunResult(
            **base, error=f"pytest stopped with {kind} in the {label} run: {_log_tail(log)}"
        )
    try:
        return _parse_results(_read_regular_file(results), base)
    except FileNotFoundError:
        error = (
            f"the {label} pytest process (exit {code}) wrote no results: was the andgate "
            f"plugin disabled or the process killed? {_log_tail(log)}"
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        # OSError: a test replaced the file by a folder or an unreadable file.
        error = f"the {label} results file is malformed ({exc.__class__.__name__}: {exc})"
    return RunResult(**base, error=error)


def _read_regular_file(path: Path) -> str:
    """The text of a regular file. Opened non-blocking: a FIFO a test left in
    place of its results file must not hang the gate."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError(f"{path.name} is not a regular file")
        return fh.read().decode("utf-8")


def _parse_results(text: str, base: dict[str, Any]) -> RunResult:
    """A results file's run. Its items and reports are decoded one element at a
    time and compacted as they come (`_Compact`): the whole document as dicts
    never exists (packaging's 53,632-item oracle shard: a 99 MiB peak for
    json.loads and records, 19 MiB this way)."""
    compact = _Compact()
    streamed = {"items": ("[", compact.items), "reports": ("{", compact.reports)}
    payload, done = _decode_object(text, streamed)
    if payload.get("schema") != "andgate.results/1":
        raise ValueError(f"unknown results schema {payload.get('schema')!r}")
    items = payload["items"] if "items" in done else compact.items(payload["items"])
    reports = payload["reports"]
    if "reports" not in done:
        reports = compact.reports(reports.items())
    seeds = {str(k): tuple(v) for k, v in payload["seeds"].items()}
    errors = tuple((str(e["nodeid"]), str(e["message"])) for e in payload["collection_errors"])
    foreign = [str(f) for f in payload.get("foreign_imports", ())]
    error = None
    if foreign:
        error = (
            f"the {base['label']} pytest process imported {foreign[0]}"
            f"{f' (and {len(foreign) - 1} more)' if len(foreign) > 1 else ''}, not from its "
            "worktree, so it did not test head; install the project so that andgate can "
            "redirect it (pip install -e . or pip install .), or report the layout"
        )
    unscanned = tuple(
        (str(u["module"]), str(u["path"]), str(u["target"]), str(u["why"]))
        for u in payload.get("unscanned_imports", ())
    )
    return RunResult(
        **base,
        items=items,
        reports=reports,
        seeds=seeds,
        collection_errors=errors,
        error=error,
        unscanned=unscanned,
    )


class _Compact:
    """One results file's values, each repeated value held once: node ids are
    interned (the oracle run, base's collection and the replays name the same
    items), paths, names, classes, reasons and marker sets are shared within the
    file, and so are identical report entries (read-only everywhere: `reports`
    is a Mapping). Values of other types than str stay as they were, so a
    malformed file fails exactly as it did."""

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}
        self.marker_sets: dict[tuple[str, ...], frozenset[Any]] = {}
        self.entries: dict[tuple[Any, ...], dict[str, Any]] = {}

    def share(self, value: Any) -> Any:
        return self.strings.setdefault(value, value) if type(value) is str else value

    def items(self, raw: Iterable[Any]) -> tuple[CollectedItem, ...]:
        return tuple(self.item(i) for i in raw)

    def item(self, i: Any) -> CollectedItem:
        share, skip, params = self.share, i.get("skip_mark"), i.get("params")
        facts = ItemFacts(
            _intern(i["nodeid"]), share(i["path"]), share(i["name"]), self.markers(i["markers"])
        )
        return CollectedItem(
            facts,
            share(str(i["class"])),
            share(str(i["why"])),
            None if skip is None else share(str(skip)),
            None if params is None else str(params),
        )

    def markers(self, raw: Any) -> frozenset[Any]:
        if type(raw) is not list or not all(type(m) is str for m in raw):
            return frozenset(raw)
        key = tuple(raw)
        found = self.marker_sets.get(key)
        if found is None:
            found = self.marker_sets[key] = frozenset(self.share(m) for m in raw)
        return found

    def reports(self, raw: Iterable[tuple[Any, Any]]) -> dict[str, Mapping[str, Any]]:
        return {_intern(str(k)): self.entry(v) for k, v in raw}

    def entry(self, raw: Any) -> dict[str, Any]:
        entry = dict(raw)
        # The types are part of the key: 1 == True, but `reruns: 1` is no `wasxfail: true`.
        key = (*entry, *map(type, entry), *entry.values(), *map(type, entry.values()))
        try:
            return self.entries.setdefault(key, entry)
        except TypeError:  # a list in it (pytest-rerunfailures' attempts): not shared
            return entry


def _intern(value: Any) -> Any:
    return sys.intern(value) if type(value) is str else value


_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def _decode_object(
    text: str, streamed: Mapping[str, tuple[str, Callable[[Iterator[Any]], Any]]]
) -> tuple[dict[str, Any], set[str]]:
    """`json.loads(text)` for a JSON object (anything else is a ValueError), except
    that a member named in `streamed` whose value opens with the bracket given is
    handed to its function element by element (an array's values, an object's
    (key, value) pairs, each decoded on its own) and the function's answer is the
    member's value. Also returns which members were streamed (the last of
    duplicate keys counts, as for json.loads)."""
    out: dict[str, Any] = {}
    done: set[str] = set()
    idx = _skip(text, _expect(text, _skip(text, 0), "{"))
    if text.startswith("}", idx):
        idx += 1
    else:
        while True:
            key, idx = _member_key(text, idx)
            stream = streamed.get(key)
            if stream is not None and text.startswith(stream[0], idx):
                elements = _Elements(text, idx)
                out[key] = stream[1](iter(elements))
                if elements.end < 0:
                    raise ValueError(f"{key!r} was not read to its end")
                idx = elements.end
                done.add(key)
            else:
                out[key], idx = _DECODER.raw_decode(text, idx)
                done.discard(key)
            idx = _skip(text, idx)
            if text.startswith("}", idx):
                idx += 1
                break
            idx = _skip(text, _expect(text, idx, ","))
    if _skip(text, idx) != len(text):
        raise ValueError(f"extra data after the results object at {idx}")
    return out, done


class _Elements:
    """The elements of the array (values) or object ((key, value) pairs) that
    opens at `text[start]`, decoded one at a time; `end` is the index past its
    closing bracket once they are all read (-1 until then)."""

    def __init__(self, text: str, start: int) -> None:
        self.text, self.start, self.end = text, start, -1

    def __iter__(self) -> Iterator[Any]:
        text = self.text
        pairs = text[self.start] == "{"
        close = "}" if pairs else "]"
        idx = _skip(text, self.start + 1)
        if text.startswith(close, idx):
            self.end = idx + 1
            return
        while True:
            if pairs:
                key, idx = _member_key(text, idx)
                value, idx = _DECODER.raw_decode(text, idx)
                yield key, value
            else:
                value, idx = _DECODER.raw_decode(text, idx)
                yield value
            idx = _skip(text, idx)
            if text.startswith(close, idx):
                self.end = idx + 1
                return
            idx = _skip(text, _expect(text, idx, ","))


def _member_key(text: str, idx: int) -> tuple[str, int]:
    """An object member's key at `idx` and where its value starts."""
    key, idx = json.decoder.scanstring(text, _expect(text, idx, '"'))
    return key, _skip(text, _expect(text, _skip(text, idx), ":"))


def _skip(text: str, idx: int) -> int:
    match = _SPACE.match(text, idx)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _expect(text: str, idx: int, char: str) -> int:
    """The index past `char`, which must be at `idx`."""
    if not text.startswith(char, idx):
        raise ValueError(f"expected {char!r} at {idx} in the results file")
    return idx + 1


def _bootstrap_problem(log: Path) -> str:
    with contextlib.suppress(OSError):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("andgate-bootstrap: "):
                return line.removeprefix("andgate-bootstrap: ").strip()
    return "pytest is not importable"


def _log_tail(log: Path, lines: int = 3) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])


def merge_results(label: str, parts: Sequence[RunResult]) -> RunResult:
    """One result from the shards of a class; any shard's error is the class's error."""
    if len(parts) == 1:
        return parts[0]
    errors = [p.error for p in parts if p.error]
    return RunResult(
        label=label,
        exit_code=max((p.exit_code for p in parts if p.exit_code is not None), default=None),
        seconds=max(p.seconds for p in parts),
        items=tuple(i for p in parts for i in p.items),
        reports={k: v for p in parts for k, v in p.reports.items()},
        seeds={k: v for p in parts for k, v in p.seeds.items()},
        collection_errors=tuple(e for p in parts for e in p.collection_errors),
        error="; ".join(errors) if errors else None,
        unscanned=tuple(u for p in parts for u in p.unscanned),
    )


def collection_error_line(nodeid: str, message: str, where: str = "") -> str:
    """A collection error in one line: where, and pytest's last line (the error)."""
    last = (message.splitlines() or [""])[-1]
    return f"{nodeid or '<session>'}{where}: {last}"[:300]


def collection_error_lines(result: RunResult) -> tuple[str, ...]:
    """One line per collection error of a process, naming the process."""
    where = f" ({result.label} process)"
    return tuple(collection_error_line(n, m, where) for n, m in result.collection_errors)


def class_facts(result: RunResult | None, role: Role) -> ClassFacts:
    """A class process's facts: each of its items' outcome, its collection errors,
    and why it could not run (None: it never ran, which is no pass either)."""
    if result is None:
        return ClassFacts()
    return ClassFacts(
        results=tuple(
            ItemResult(
                i.facts.nodeid, result.outcome(i.facts.nodeid), result.message(i.facts.nodeid)
            )
            for i in result.selected(role)
        ),
        collection_errors=collection_error_lines(result),
        error=result.error,
    )
