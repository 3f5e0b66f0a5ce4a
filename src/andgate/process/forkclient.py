"""The gate's side of the fork server (`forkserver.py`): one server process per check
that imports pytest once; each run is a child forked from it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from andgate.process.argv import test_environment
from andgate.process.reaping import KILL_WAIT, ForkedChild, become_subreaper
from andgate.process.requests import RunEnvironment
from andgate.process.signals import wait_event

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
        become_subreaper()
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
        become_subreaper()
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


atexit.register(stop_fork_server)  # the server never outlives the gate


@contextlib.contextmanager
def fork_server_session() -> Iterator[None]:
    try:
        yield
    finally:
        stop_fork_server()
