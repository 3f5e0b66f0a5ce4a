"""The fork server: one process per check that imports pytest once and forks a
child per pytest run.

PYTEST_DONT_REWRITE. Runs as `python -P -c SERVER` (see `forkclient.py`), with the
environment every run gets, so imports only the standard library before it
imports what the bootstrap imports (`andgate.plugin.hooks`, `andgate.plugin.redirect`,
`pytest`), then the `_pytest` modules `pytest.main` loads (`_preimport`; not
the `pytest11` plugins' modules, see there). No repository
code ever runs in the server: each child is a fresh fork of a process that
never ran any, and becomes what `python -P -c BOOTSTRAP` would be (own session,
the run's log on stdout and stderr, /dev/null on stdin, the worktree as its
cwd and first path entry, exactly the run's environment, `sys.argv == ['-c']`)
before it runs the bootstrap's steps. One difference is on purpose: the objects the
server made are in gc's permanent generation (`gc.freeze()` before each fork), so
`gc.get_objects()` in a run lists only what the run made.

Protocol, one JSON object a line: requests on the server's stdin (a pipe, as the
bootstrap's; the server then moves it off 0), replies on the descriptor the
configuration names (stdout and stderr are the server's log, a regular file as
a run's log is, so each child's `sys.stdout` was made for the same kind of
file): the server imports pytest, then reads the configuration line (which the
gate may send well after it started the server, once it knows the checkout), answers
`{"ready": true}` or `{"ready": false, "why": ...}`; then each request
`{"id", "cwd", "log", "env", "launch"}` is answered by `{"id", "pid"}` once
forked and `{"id", "pid", "status"}` once reaped (`status` as
`subprocess.Popen.returncode`: the exit code, or minus the signal). End of
file on the requests kills what is left and ends the server.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import sys
from typing import Any

# The bootstrap's exit code when pytest cannot be imported (run.EXIT_CANNOT_IMPORT).
EXIT_CANNOT_IMPORT = 121
# A child reaches its setsid microseconds after the fork; one that has not after
# this long was stopped, and is killed (its run then fails closed).
SESSION_WAIT = 5.0


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _module_files() -> dict[str, str]:
    out = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            out[name] = file
    return out


def _tainted(config: dict[str, Any], before: set[str]) -> list[str]:
    """Modules imported since `before` that are the project's or live in the
    checkout: they would have come from the worktree in a fresh process."""
    checkout = os.path.realpath(config["checkout"]) if config.get("checkout") else None
    names = set(config.get("names", ()))
    found = []
    for name, file in _module_files().items():
        if name in before:
            continue
        in_checkout = checkout is not None and _inside(os.path.realpath(file), checkout)
        if in_checkout or name.partition(".")[0] in names:
            found.append(f"{name} from {file}")
    return found


# Standard-library modules every pytest run imports (its entry-point scan parses
# distributions' metadata with them): submodules of a package the bootstrap has
# already imported, so no module of a repository can shadow them. Not top-level
# ones (pdb, code, queue...): a run imports those after the worktree went first
# on sys.path, where a repository's `code.py` is found first.
STDLIB_RUN = ("email.parser", "email.feedparser")


def _preimport() -> None:
    """The `_pytest` modules `pytest.main` imports anyway, before any repository
    code exists here. Not the `pytest11` plugins' modules: pytest marks every
    module of a plugin's distribution for assertion rewriting, under the run's
    own configuration (`--assert`, `enable_assertion_pass_hook`), so one
    imported here would be neither rewritten nor silent (a
    PytestAssertRewriteWarning, an error under `-W error`)."""
    import importlib

    import _pytest.config

    extra = [f"_pytest.{name}" for name in _pytest.config.default_plugins]
    for name in (*extra, "_pytest.assertion.rewrite", "_pytest.assertion.util", *STDLIB_RUN):
        try:
            importlib.import_module(name)
        except Exception:  # an optional module; pytest.main copes without it
            continue
    import _pytest.junitxml

    _pytest.junitxml.bin_xml_escape("")  # compiles (and caches) its pattern once, here


def _top(bootstrapped: set[str]) -> list[str]:
    """Top-level modules the server imported beyond what the bootstrap imports:
    a run whose worktree holds a module of that name would, as a fresh process,
    import the repository's (the gate then starts it without the server)."""
    return sorted({n.partition(".")[0] for n in sys.modules} - bootstrapped)


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def _unusable(config: dict[str, Any], before: set[str]) -> str | None:
    tainted = _tainted(config, before)
    if tainted:
        return f"a plugin imported the project: {tainted[0]}"
    if _threads() != 1:
        return "a plugin started a thread"
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return "a tracer is active"
    if "coverage" in sys.modules:
        return "coverage is loaded"
    return None


def _write(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message) + "\n").encode("utf-8")
    while data:
        data = data[os.write(fd, data) :]


def serve(initial_path: list[str]) -> None:
    """The server's main loop (`initial_path`: sys.path before anything was imported)."""
    from andgate.plugin import isolation

    # Its children are test processes: none may attach to the server that forks the
    # trusted runs, and none gains privileges (they set it again, as Popen's do).
    isolation.make_undumpable()
    isolation.no_new_privs()
    requests = os.dup(0)
    os.set_inheritable(requests, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    reader = os.fdopen(requests, "rb", buffering=0)
    # Imports first, configuration second: the gate may start the server before it
    # knows the checkout and the project's names (they matter only to `_unusable`).
    cannot_import = _import_bootstrap()
    before = set(_module_files())
    bootstrapped = set(sys.modules)
    if cannot_import is None:
        _preimport()
    line = _readline(reader)
    if not line:
        return  # the gate stopped before it needed a run
    config = json.loads(line)
    replies = int(config["replies"])
    os.set_inheritable(replies, False)
    if cannot_import is not None:
        _write(replies, {"ready": False, "why": cannot_import})
        return
    why = _unusable(config, before)
    if why is not None:
        _write(replies, {"ready": False, "why": why})
        return
    _write(replies, {"ready": True, "modules": len(sys.modules), "top": _top(bootstrapped)})
    _loop(reader, replies, initial_path)


def _import_bootstrap() -> str | None:
    """Import what the bootstrap imports, in its order; why not, if that fails."""
    import importlib

    try:
        for name in ("andgate.plugin.hooks", "andgate.plugin.redirect", "pytest"):
            importlib.import_module(name)
    except ImportError as exc:
        return f"cannot import: {exc}"
    return None


def _readline(reader: Any) -> bytes:
    """One line, read a byte at a time: nothing past it is consumed from the pipe."""
    out = bytearray()
    while True:
        byte = reader.read(1)
        if not byte:
            return bytes(out)
        out += byte
        if byte == b"\n":
            return bytes(out)


def _status(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return -os.WTERMSIG(wait_status)
    return os.waitstatus_to_exitcode(wait_status)


def _loop(reader: Any, replies: int, initial_path: list[str]) -> None:
    wake_r, wake_w = os.pipe()
    for fd in (wake_r, wake_w):
        os.set_blocking(fd, False)
        os.set_inheritable(fd, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, str] = {}
    buffer = b""
    requests = reader.fileno()
    open_requests = True
    while open_requests or children:
        try:
            ready, _, _ = select.select([requests, wake_r] if open_requests else [wake_r], [], [])
        except InterruptedError:
            ready = []
        if wake_r in ready:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
        _reap(children, replies)
        if requests in ready:
            chunk = os.read(requests, 65536)
            if not chunk:
                open_requests = False
                for pid in list(children):  # the gate is gone: nothing may outlive it
                    with contextlib.suppress(OSError):
                        os.killpg(pid, signal.SIGKILL)
                continue
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                request = json.loads(line)
                pid = _fork(request, initial_path)
                children[pid] = request["id"]
                _write(replies, {"id": request["id"], "pid": pid})
        _reap(children, replies)


def _reap(children: dict[int, str], replies: int) -> None:
    while children:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ident = children.pop(pid, None)
        if ident is not None:
            _write(replies, {"id": ident, "pid": pid, "status": _status(wait_status)})


def _fork(request: dict[str, Any], initial_path: list[str]) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    # As the gc docs advise before fork(): what the server made (pytest, the plugin)
    # goes to the permanent generation, so a child's collections skip it. pytest's
    # unconfigure alone collects twice (`gc_collect_harder`): ~50 ms less per run.
    gc.freeze()
    # The pid goes to the gate only once the child is in its own session: before
    # that, the gate's os.killpg(pid) would find no such group and miss it.
    in_session_r, in_session_w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(in_session_w)
        with contextlib.suppress(OSError):  # end of file once the child closed it (or died)
            ready, _, _ = select.select([in_session_r], [], [], SESSION_WAIT)
            if not ready:  # stopped before its setsid (SIGSTOP): it runs nothing, ever
                os.kill(pid, signal.SIGKILL)  # still our unreaped child: the pid is its own
        os.close(in_session_r)
        return pid
    code = 1
    try:
        os.setsid()
        os.close(in_session_w)
        os.close(in_session_r)
        _become_run(request, initial_path)
        code = _bootstrap(request["launch"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int | None):
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        _flush()
        os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):  # exiting regardless
            stream.flush()


def _become_run(request: dict[str, Any], initial_path: list[str]) -> None:
    """Turn this fresh fork, already in its own session, into the process `python
    -P -c BOOTSTRAP` would be. Nothing of the run's repository has run yet."""
    import random

    from andgate.plugin import isolation

    isolation.make_dumpable()  # as after Popen's exec; the server stays undumpable
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.closerange(3, _max_fd())  # the server's pipes above all: close_fds, as Popen does
    # As the bootstrap does, to the descriptor: /dev/null on 0, and left open on 3.
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv[:] = ["-c"]
    sys.path[:] = initial_path
    sys.path_importer_cache.clear()
    random.seed()


def _max_fd() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (OSError, ValueError):
        return 65536


# The bootstrap's lines after it read its launch line and put /dev/null on 0
# (run.BOOTSTRAP; a test keeps the two in step), run in `__main__` as there.
BOOTSTRAP_REST = (
    "import json, os, sys\n"
    "import andgate.plugin.hooks, andgate.plugin.redirect, pytest\n"
    "sys.path.insert(0, os.getcwd())\n"
    "andgate.plugin.hooks.activate(launch['spec'])\n"
    "code = int(pytest.main(launch['args']))\n"
    "sys.stdout.flush()\n"
    "sys.stderr.flush()\n"
)


def _bootstrap(launch: dict[str, Any]) -> int:
    """The rest of run.BOOTSTRAP, with `__main__` holding what it holds there."""
    namespace = vars(sys.modules["__main__"])
    for name in [n for n in namespace if not n.startswith("__")]:
        del namespace[name]
    namespace["launch"] = launch
    exec(compile(BOOTSTRAP_REST, "<string>", "exec"), namespace)
    return int(namespace["code"])


SERVER = (
    "import sys\n"
    "initial_path = list(sys.path)\n"
    "try:\n"
    "    import andgate.process.forkserver\n"
    "except ImportError:\n"
    f"    raise SystemExit({EXIT_CANNOT_IMPORT})\n"
    "andgate.process.forkserver.serve(initial_path)\n"
)
