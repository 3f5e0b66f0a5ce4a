"""The fork server: a forked pytest process is the process Popen would start."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

import andgate.process.forkserver
from andgate.plugin.classify import Rules
from andgate.process import argv, forkclient, reaping
from andgate.process import run as run_module
from andgate.process.forkclient import fork_server, stop_fork_server
from andgate.process.requests import RunEnvironment, RunRequest
from andgate.process.run import run_pytest
from andgate.records import Outcome

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the fork server is Linux only")

PROBE = """\
import gc, json, os, random, re, stat, sys, weakref


class Node:
    pass


def collects_a_cycle():
    node = Node()
    node.self = node
    ref = weakref.ref(node)
    del node
    gc.collect()
    return ref() is None

def fds():
    out = []
    for fd in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            link = os.readlink("/proc/self/fd/" + fd).split(":[")[0]
            out.append(re.sub(r"#[0-9]+|scratch[01]|pytest-[0-9]+", "", link))
        except OSError:
            pass  # the listing's own descriptor
    return out


def test_probe():
    stdin = os.fstat(0)
    null = os.stat(os.devnull)
    facts = {{
        "env": dict(os.environ),
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "path": sys.path,
        "sid": os.getsid(0),
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
        "stdin_is_null": stat.S_ISCHR(stdin.st_mode) and stdin.st_rdev == null.st_rdev,
        "safe_path": sys.flags.safe_path,
        "random": random.random(),
        "fds": fds(),
        "main": sorted(k for k in vars(sys.modules["__main__"]) if not k.startswith("__")),
        "collects": collects_a_cycle(),
        "frozen": gc.get_freeze_count() > 0,
    }}
    with open({out!r}, "w") as fh:
        json.dump(facts, fh)
"""


@pytest.fixture(autouse=True)
def fresh_server():
    stop_fork_server()
    yield
    stop_fork_server()


def project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {"pytest.ini": "[pytest]\n", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def oracle_request(name: str = "tests/test_probe.py") -> RunRequest:
    rules = Rules(oracle_files=frozenset({name}))
    return RunRequest("oracle", "oracle", rules, allow_files=(name,))


def test_the_off_switch_and_the_platforms(monkeypatch):
    monkeypatch.delenv("ANDGATE_FORK_SERVER", raising=False)
    assert forkclient.fork_server_enabled({}) is (sys.platform == "linux")
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "0")
    assert not forkclient.fork_server_enabled({})
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    assert not forkclient.fork_server_enabled({"COVERAGE_PROCESS_START": "x"})
    monkeypatch.setattr(forkclient.sys, "platform", "darwin")
    assert not forkclient.fork_server_enabled({})


def test_a_child_of_no_server_is_never_signalled_as_group_zero():
    child = reaping.ForkedChild(0)
    child.finish(None)
    reaping.kill_group(child)  # os.killpg(0) would kill the test run itself
    assert child.wait(0) is None


@linux_only
@pytest.mark.slow
def test_a_forked_child_sees_what_a_popen_process_sees(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    monkeypatch.setenv("ANDGATE_CACHE_DIR", str(tmp_path / "cache"))
    facts = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("ANDGATE_FORK_SERVER", mode)
        out = tmp_path / f"facts-{mode}.json"
        probe = {"tests/test_probe.py": PROBE.format(out=str(out))}
        root = project(tmp_path / f"proj{mode}", probe)
        if mode == "1":
            assert fork_server(argv.test_environment(), RunEnvironment(), tmp_path)
        result = run_pytest(oracle_request(), root, tmp_path / f"scratch{mode}", timeout=120)
        assert result.error is None, result.error
        facts[mode] = json.loads(out.read_text(encoding="utf-8"))
    forked, popen = facts["1"], facts["0"]
    assert forked["env"] == popen["env"]
    assert not [k for k in forked["env"] if k.startswith("ANDGATE_") or k == "GITHUB_TOKEN"]
    assert forked["argv"] == popen["argv"] == ["-c"]
    for mode, seen in facts.items():
        root = (tmp_path / f"proj{mode}").resolve()
        assert Path(seen["cwd"]).resolve() == root
        # pytest prepends the test's folder; the bootstrap put the worktree after it
        assert [Path(p).resolve() for p in seen["path"][:2]] == [root / "tests", root]
        assert seen["sid"] == seen["pid"] == seen["pgid"] != os.getsid(0)
        assert seen["stdin_is_null"] and seen["safe_path"]
    assert forked["path"][2:] == popen["path"][2:]
    assert forked["fds"] == popen["fds"]  # no descriptor of the server's reaches a test
    assert forked["main"] == popen["main"]
    assert forked["random"] != popen["random"]
    # The one difference on purpose: the server's objects are frozen (skipped by
    # collections); a run's own garbage is collected all the same.
    assert forked["frozen"] and not popen["frozen"]
    assert forked["collects"] and popen["collects"]


@linux_only
@pytest.mark.slow
def test_children_of_one_server_do_not_share_random_state(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    seen = []
    for i in range(2):
        out = tmp_path / f"facts-{i}.json"
        root = project(tmp_path / f"proj{i}", {"tests/test_probe.py": PROBE.format(out=str(out))})
        result = run_pytest(oracle_request(), root, tmp_path / "scratch", timeout=120)
        assert result.error is None, result.error
        seen.append(json.loads(out.read_text(encoding="utf-8")))
    assert seen[0]["random"] != seen[1]["random"]
    assert seen[0]["pid"] != seen[1]["pid"]


HANG = """\
import subprocess, sys, time

def test_hang():
    daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open({pids!r}, "w") as fh:
        fh.write(str(daemon.pid))
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return False


@linux_only
@pytest.mark.slow
def test_a_timeout_kills_the_forked_childs_whole_group(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    pids = tmp_path / "pids"
    root = project(tmp_path / "proj", {"tests/test_hang.py": HANG.format(pids=str(pids))})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert fork_server(argv.test_environment(), RunEnvironment(), scratch)
    started = time.monotonic()
    result = run_pytest(oracle_request("tests/test_hang.py"), root, scratch, timeout=4)
    assert "timeout" in (result.error or "")
    assert time.monotonic() - started < 60
    daemon = int(pids.read_text())
    deadline = time.monotonic() + 10
    while _alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(daemon)


@linux_only
@pytest.mark.slow
def test_runs_fall_back_to_popen_when_the_server_cannot_start(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    monkeypatch.setattr(andgate.process.forkserver, "SERVER", "raise SystemExit(3)")
    out = tmp_path / "facts.json"
    root = project(tmp_path / "proj", {"tests/test_probe.py": PROBE.format(out=str(out))})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert fork_server(argv.test_environment(), RunEnvironment(), scratch) is None
    result = run_pytest(oracle_request(), root, scratch, timeout=120)
    assert result.error is None, result.error
    assert result.outcome("tests/test_probe.py::test_probe").value == "passed"


KILL_PARENT = """\
import os, signal, time

def test_kill_parent():
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(1)
"""


@linux_only
@pytest.mark.slow
def test_a_run_whose_server_dies_is_an_error_and_later_runs_use_popen(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    server = fork_server(argv.test_environment(), RunEnvironment(), scratch)
    assert server is not None
    killer = project(tmp_path / "killer", {"tests/test_kill.py": KILL_PARENT})
    result = run_pytest(oracle_request("tests/test_kill.py"), killer, scratch, timeout=60)
    assert result.error is not None and "fork server" in result.error
    assert not server.alive
    out = tmp_path / "facts.json"
    root = project(tmp_path / "proj", {"tests/test_probe.py": PROBE.format(out=str(out))})
    result = run_pytest(oracle_request(), root, scratch, timeout=120)
    assert result.error is None, result.error
    assert json.loads(out.read_text(encoding="utf-8"))["sid"] != os.getsid(0)


@linux_only
@pytest.mark.slow
def test_the_server_ends_when_the_gate_closes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    server = fork_server(argv.test_environment(), RunEnvironment(), tmp_path)
    assert server is not None
    pid = server.proc.pid
    assert os.getsid(pid) == os.getsid(0)  # so kill_orphans never takes it for an orphan
    assert os.getpgid(pid) == pid  # and a terminal's Ctrl-C does not reach it
    stop_fork_server()
    assert server.proc.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


@linux_only
def test_the_sample_verdict_is_the_same_with_the_server_on_and_off(sample, monkeypatch):
    payloads = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("ANDGATE_FORK_SERVER", mode)
        run = sample.gate(artifacts=sample.tmp / f"artifacts-{mode}")
        payloads[mode] = run.payload
    on, off = payloads["1"], payloads["0"]
    assert on["verdict"] == off["verdict"]
    assert on["reasons"] == off["reasons"]
    assert on["counts"] == off["counts"]


def test_the_forked_bootstrap_is_the_bootstraps_own_lines():
    lines = argv.BOOTSTRAP.splitlines()
    rest = andgate.process.forkserver.BOOTSTRAP_REST.splitlines()
    assert rest[0] == lines[0]
    assert lines[2].strip() == rest[1]  # the imports, the same modules
    tail = lines[lines.index("sys.path.insert(0, os.getcwd())") : lines.index("os._exit(code)")]
    assert rest[2:] == tail


@linux_only
@pytest.mark.slow
def test_a_prestarted_server_is_the_one_the_first_run_uses(tmp_path, monkeypatch):
    """The gate starts the server before it knows the checkout (pytest imports
    meanwhile); the first run configures that process instead of starting one."""
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    forkclient.prestart_fork_server((), tmp_path)
    pending = forkclient._SERVER["pending"]
    forkclient.prestart_fork_server((), tmp_path)  # a second call starts nothing
    assert forkclient._SERVER["pending"] is pending
    out = tmp_path / "facts.json"
    root = project(tmp_path / "proj", {"tests/test_probe.py": PROBE.format(out=str(out))})
    result = run_pytest(oracle_request(), root, tmp_path / "scratch", timeout=120)
    assert result.error is None, result.error
    assert forkclient._SERVER["server"] is pending and pending.alive
    assert "pending" not in forkclient._SERVER
    assert json.loads(out.read_text(encoding="utf-8"))["sid"] != os.getsid(0)


@linux_only
@pytest.mark.slow
def test_a_prestarted_server_for_another_environment_is_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    monkeypatch.setenv("ANDGATE_TEST_SCRUBBED", "1")
    forkclient.prestart_fork_server(("ANDGATE_TEST_*", "HOME"), tmp_path)
    pending = forkclient._SERVER["pending"]
    server = fork_server(argv.test_environment(), RunEnvironment(), tmp_path)
    assert server is not None and server is not pending
    assert pending.proc.returncode is not None  # stopped, not left running


@linux_only
def test_a_prestarted_server_never_configured_ends_quietly(tmp_path, monkeypatch):
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    forkclient.prestart_fork_server((), tmp_path)
    pending = forkclient._SERVER["pending"]
    time.sleep(0.2)  # let it get past its imports
    stop_fork_server()
    assert pending.proc.returncode == 0
    assert "Traceback" not in (tmp_path / "fork-server.log").read_text(encoding="utf-8")


def test_a_run_asked_for_while_the_check_stops_starts_no_process(tmp_path):
    """Once an interrupt killed the running processes, a worker that picks up its
    next task (a discrimination run queued behind the untrusted shards) must not
    start one: a process started then raced the kill and ran to its timeout."""
    marker = tmp_path / "started"
    argv = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    reaping.STOPPING.set()
    try:
        code, timed_out = run_module._run_session(argv, tmp_path, tmp_path / "log", 60)
    finally:
        reaping.STOPPING.clear()
    assert (code, timed_out) == (-signal.SIGKILL, False)
    assert not marker.exists()
    code, _ = run_module._run_session(argv, tmp_path, tmp_path / "log", 60)
    assert code == 0 and marker.exists()


@linux_only
def test_a_forked_child_is_in_its_own_session_when_the_gate_learns_its_pid(tmp_path, monkeypatch):
    """The server replies with the pid only after the child's setsid: a kill of the
    child's process group right away must reach it."""
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "1")
    server = fork_server(argv.test_environment(), RunEnvironment(), tmp_path)
    assert server is not None
    sessions = []
    for _ in range(5):
        launch = json.dumps({"spec": "/nonexistent", "args": []}) + "\n"
        child = server.start(tmp_path, tmp_path / "log", server.env, launch)
        assert child is not None and child.pid > 0
        with contextlib.suppress(ProcessLookupError):
            sessions.append(os.getsid(child.pid) == child.pid)
        child.wait(30)
    assert sessions and all(sessions)


def test_the_server_preimports_only_what_no_repository_module_can_shadow():
    """The metadata parser loads in every run anyway, as a submodule of a package the
    bootstrap imported; a top-level module (pdb imports `code`) would take the place
    of a repository's `code.py`, and readline must load in the run itself (pytest
    binds it to the run's stdio)."""
    import subprocess

    probe = (
        "import sys, andgate.process.forkserver as f\n"
        "f._preimport()\n"
        "print(all(n in sys.modules for n in f.STDLIB_RUN), 'readline' in sys.modules,"
        " 'code' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-P", "-c", probe], capture_output=True, timeout=60)
    assert out.stdout.split() == [b"True", b"False", b"False"], out.stderr


def test_a_worktree_root_module_named_like_an_early_import_shadows_it(tmp_path):
    assert not forkclient.shadows(tmp_path, frozenset({"difflib"}))
    (tmp_path / "difflib.py").write_text("")
    assert forkclient.shadows(tmp_path, frozenset({"difflib"}))
    assert not forkclient.shadows(tmp_path, frozenset({"xml"}))
    (tmp_path / "xml").mkdir()  # a folder, with or without __init__.py
    assert forkclient.shadows(tmp_path, frozenset({"xml"}))
    assert not forkclient.shadows(tmp_path, frozenset())


@linux_only
@pytest.mark.slow
def test_a_repository_module_the_server_imported_early_runs_as_in_a_fresh_process(
    tmp_path, monkeypatch
):
    """The server imports `difflib` (pytest's plugins do) before any worktree exists;
    a fresh process imports the repository's `difflib.py` instead: such a run starts
    without the server."""
    files = {
        "difflib.py": "REPOSITORY = True\n",
        "tests/test_shadow.py": "import difflib\n\ndef test_shadow():\n"
        "    assert getattr(difflib, 'REPOSITORY', False)\n",
    }
    outcomes = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("ANDGATE_FORK_SERVER", mode)
        root = project(tmp_path / f"proj{mode}", files)
        if mode == "1":
            server = fork_server(argv.test_environment(), RunEnvironment(), tmp_path)
            assert server and "difflib" in server.top
        request = oracle_request("tests/test_shadow.py")
        result = run_pytest(request, root, tmp_path / f"scratch{mode}", timeout=120)
        assert result.error is None, result.error
        outcomes[mode] = result.outcome("tests/test_shadow.py::test_shadow")
    assert outcomes["1"] == outcomes["0"] == Outcome.PASSED
