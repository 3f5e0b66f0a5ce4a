"""Faults: hanging tests, signals, tests that vandalise, a broken plugin.

Every fault must end in a block (GATE_ERROR when the gate could not run), the
user's working tree and index must stay byte-identical, and no worktree,
branch, stash or process of the run may be left behind. Hanging tests block
on an Event nobody sets; the gate's --timeout (a few seconds here) ends them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from andgate.check.pipeline import CheckOptions
from andgate.commands.sample import SAMPLE_TODAY, SampleRepo
from andgate.process import reaping
from andgate.process import run as run_module
from andgate.process.reaping import kill_orphans
from andgate.process.requests import DEFAULT_TIMEOUT
from andgate.process.results import read_results
from andgate.process.run import run_parallel
from andgate.process.signals import deferred_signals
from andgate.process.worktree import Worktree, worktree_pool

HANG = "import threading\n    threading.Event().wait()"


def pid_marker(folder: Path) -> str:
    """Python lines that record the running process's pid under `folder`."""
    return f"__import__('pathlib').Path({str(folder)!r}, str(__import__('os').getpid())).touch()"


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting to be reaped."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_line.rsplit(")", 1)[1].split()[0] != "Z"


def recorded_pids(folder: Path) -> list[int]:
    return [int(p.name) for p in folder.iterdir()] if folder.exists() else []


def kill_leftovers(folder: Path) -> None:
    """Test hygiene only: a failing test must not leave its daemons running."""
    for pid in recorded_pids(folder):
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


# -- timeouts -------------------------------------------------------------------------------


def test_default_timeout_is_half_an_hour_per_pytest_process():
    assert DEFAULT_TIMEOUT == 1800
    assert CheckOptions().timeout == DEFAULT_TIMEOUT


def test_hanging_production_code_times_out_oracle_and_flake_by_name(sample, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    hang = f"{pid_marker(pids)}\n    {HANG}"
    head = sample.change(
        lambda r: r.edit("minilib/mathx.py", "    return sum(xs) / len(xs)", f"    {hang}")
    )
    run = sample.gate(head, timeout=3)
    details = run.details("GATE_ERROR")
    assert "the oracle pytest process ran past the 3s timeout" in details
    # Each replay runs first the oracle file that imports what its fixture patches, so
    # both fixtures bite before a replay reaches the hanging test_mean (the timeout of
    # a replay by name is the next test's).
    assert not [d for d in details if d.startswith("known-bad")], details
    assert "the flake pytest process ran past the 3s timeout" in details
    assert run.decision == "block" and run.verdict.exit_code == 2
    assert recorded_pids(pids) and not any(alive(p) for p in recorded_pids(pids))


def test_hanging_property_and_known_bad_fixture_time_out_by_name(sample):
    sample.repo.run("checkout", "-q", "--detach", sample.base)
    patch = sample.repo.diff_of(
        [("minilib/mathx.py", "    return sum(xs) / len(xs)", f"    {HANG}")]
    )
    sample.repo.write({"tests/oracles/known_bad/kb_mean_hangs.patch": patch})
    sample.base = sample.repo.commit("known-bad fixture: mean never returns")
    head = sample.change(
        lambda r: r.edit(
            "tests/properties/test_chunk_property.py",
            "    rng = random",
            f"    {HANG}\n    rng = random",
        )
    )
    run = sample.gate(head, timeout=3)
    details = run.details("GATE_ERROR")
    assert "the property pytest process ran past the 3s timeout" in details
    assert (
        # Part 1/2: the likely killers' files (those importing minilib.mathx) run first.
        "known-bad kb_mean_hangs: the known-bad 1 part 1/2 pytest process ran past the 3s "
        "timeout" in details
    )
    assert run.payload["bits"]["oracle_ok"] is True
    assert run.verdict.exit_code == 2


# -- signals --------------------------------------------------------------------------------


@dataclass(frozen=True)
class UserState:
    """Everything of the user's checkout that andgate must leave alone."""

    files: dict[str, str]
    index: str
    status: str
    head: str
    branches: str
    stash: str
    worktrees: str


def user_state(repo: SampleRepo, fingerprint: Callable[[Path], dict[str, str]]) -> UserState:
    # Hash the index before any git command of ours could refresh it.
    index = hashlib.sha256((repo.path / ".git" / "index").read_bytes()).hexdigest()
    return UserState(
        files=fingerprint(repo.path),
        index=index,
        status=repo.run("status", "--porcelain", "--untracked-files=all"),
        head=repo.run("symbolic-ref", "HEAD") + " " + repo.run("rev-parse", "HEAD"),
        branches=repo.run("for-each-ref", "--format=%(refname) %(objectname)"),
        stash=repo.run("stash", "list"),
        worktrees=repo.run("worktree", "list", "--porcelain"),
    )


def dirty_user_checkout(repo: SampleRepo, head: str) -> None:
    """The user's checkout: a branch at head, a staged file, an edit, an untracked file."""
    repo.run("checkout", "-q", "-B", "work", head)
    repo.write({"minilib/staged.py": "STAGED = 1\n"})
    repo.run("add", "minilib/staged.py")
    repo.write({"minilib/text.py": (repo.path / "minilib/text.py").read_text() + "# wip\n"})
    repo.write({"notes.txt": "untracked\n"})
    repo.run("status", "--porcelain")  # let git settle the index's stat data first


def wait_until(proc: subprocess.Popen[bytes], condition: Callable[[], bool], what: str) -> None:
    """Poll `condition` while the gate runs; waiting on the gate process paces the loop."""
    for _ in range(2400):  # at most two minutes
        if condition():
            return
        if proc.poll() is not None:
            pytest.fail(f"the gate exited ({proc.returncode}) before {what}")
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)
    pytest.fail(f"timed out waiting until {what}")


def processes_inside(folder: Path) -> list[int]:
    """Processes whose working directory is under `folder` (a worktree of the run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = Path(os.readlink(entry / "cwd"))
            except OSError:
                continue
            if cwd == folder or folder in cwd.parents:
                found.append(int(entry.name))
    return found


def start_gate(sample, tmp_path: Path) -> subprocess.Popen[bytes]:
    """`python -m andgate check` in its own session, as a terminal would run it."""
    (tmp_path / "tmpdir").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmpdir")}
    argv = [sys.executable, "-m", "andgate", "check", "--repo", str(sample.path)]
    argv += ["--base", sample.base, "--today", SAMPLE_TODAY, "--jobs", "2", "--timeout", "120"]
    argv += ["--artifacts", str(tmp_path / "artifacts")]
    with open(tmp_path / "gate.log", "wb") as log:
        return subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def hanging_untrusted_test(pids: Path) -> Callable[[SampleRepo], None]:
    source = f"def test_waits_forever():\n    {pid_marker(pids)}\n    {HANG}\n"
    return lambda r: r.write({"tests/test_waits.py": source})


def hanging_production_code(pids: Path) -> Callable[[SampleRepo], None]:
    hang = f"    {pid_marker(pids)}\n    {HANG}"
    return lambda r: r.edit("minilib/mathx.py", "    return sum(xs) / len(xs)", hang)


SMUDGE = """\
import os, sys
from pathlib import Path

folder = Path(sys.argv[1])
if not (folder / "released").exists():
    (folder / "smudging").write_text(str(os.getpid()))
    with open(folder / "fifo") as fh:  # blocks until the test opens it for writing
        fh.read()
sys.stdout.buffer.write(sys.stdin.buffer.read())
"""


def release_smudge(folder: Path) -> None:
    (folder / "released").touch()
    try:
        fd = os.open(folder / "fifo", os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # nobody is waiting on it
        return
    os.close(fd)


def send_to_group(proc: subprocess.Popen[bytes], signum: int) -> None:
    os.killpg(proc.pid, signum)


def send_to_gate(proc: subprocess.Popen[bytes], signum: int) -> None:
    os.kill(proc.pid, signum)


@pytest.mark.parametrize(
    "phase, signum, send",
    [
        ("untrusted", signal.SIGINT, send_to_group),  # Ctrl-C in a terminal
        ("untrusted", signal.SIGTERM, send_to_gate),  # a CI runner cancelling the job
        ("oracle", signal.SIGTERM, send_to_gate),
        ("worktree creation", signal.SIGTERM, send_to_gate),
        ("untrusted", signal.SIGHUP, send_to_gate),  # the terminal was closed
    ],
)
def test_signal_removes_everything_and_leaves_the_checkout_byte_identical(
    sample, tmp_path, fingerprint, phase, signum, send
):
    pids = tmp_path / "pids"
    pids.mkdir()
    smudge = tmp_path / "smudge"
    if phase == "worktree creation":
        smudge.mkdir()
        os.mkfifo(smudge / "fifo")
        (smudge / "smudge.py").write_text(SMUDGE)
        head = sample.change(lambda r: r.write({".gitattributes": "minilib/text.py filter=slow\n"}))
    elif phase == "oracle":
        head = sample.change(hanging_production_code(pids))
    else:
        head = sample.change(hanging_untrusted_test(pids))
    dirty_user_checkout(sample.repo, head)
    if phase == "worktree creation":
        # Configured only now, so that the user's own checkouts above were not slowed.
        command = f"{sys.executable} {smudge / 'smudge.py'} {smudge}"
        sample.repo.run("config", "filter.slow.smudge", command)
    before = user_state(sample.repo, fingerprint)
    proc = start_gate(sample, tmp_path)
    try:
        if phase == "worktree creation":
            wait_until(proc, (smudge / "smudging").exists, "git checks out a worktree")
        else:
            wait_until(proc, lambda: bool(recorded_pids(pids)), f"the {phase} tests hang")
        send(proc, signum)
        if phase == "worktree creation":
            release_smudge(smudge)  # the interrupted `git worktree add` may now finish
        code = proc.wait(timeout=120)
    finally:
        if smudge.exists():
            release_smudge(smudge)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        kill_leftovers(pids)
    log = (tmp_path / "gate.log").read_text()
    assert code == 2, log
    verdict = json.loads((tmp_path / "artifacts" / "verdict.json").read_text())
    assert verdict["verdict"] == "block"
    assert any(
        r["code"] == "GATE_ERROR" and "interrupted by a signal" in r["detail"]
        for r in verdict["reasons"]
    )
    # Stopped by the signal, not by the end of its runs (their 120 s timeout).
    assert not [r for r in verdict["reasons"] if "timeout" in r["detail"]], verdict["reasons"]
    assert user_state(sample.repo, fingerprint) == before
    assert list((tmp_path / "tmpdir").iterdir()) == []  # scratch and worktrees removed
    assert not any(alive(p) for p in recorded_pids(pids))
    assert processes_inside(tmp_path / "tmpdir") == []


def test_stale_stat_data_in_the_users_index_is_not_refreshed(sample, tmp_path):
    """`git status` rewrites the index when a file's stat data went stale (same
    bytes, new mtime): andgate asks whether the checkout is dirty without that."""
    head = sample.change(lambda r: r.write({"NOTES.txt": "release notes\n"}))
    sample.repo.run("checkout", "-q", "-B", "work", head)
    sample.repo.run("status", "--porcelain")
    os.utime(sample.path / "minilib/text.py", (1_000_000_000, 1_000_000_000))
    index = sample.path / ".git" / "index"
    before = index.read_bytes()
    run = sample.gate("HEAD")
    assert run.decision == "allow" and run.payload["warnings"] == []  # same bytes: not dirty
    assert index.read_bytes() == before


def test_deferred_signals_hold_ctrl_c_until_the_block_ends():
    reached = []
    with pytest.raises(KeyboardInterrupt), deferred_signals():
        os.kill(os.getpid(), signal.SIGINT)
        reached.append("cleanup went on")
    assert reached == ["cleanup went on"]


def test_a_second_ctrl_c_does_not_cut_worktree_cleanup_short(sample, tmp_path, monkeypatch):
    git = sample.repo.git
    with pytest.raises(KeyboardInterrupt), worktree_pool(git, tmp_path / "wts") as pool:
        leases = [pool.lease(sample.base) for _ in range(3)]
        for lease in leases:
            lease.__enter__()
        real_drop = Worktree._drop_admin_dir

        def interrupted_remove(self):
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C again
            return real_drop(self)

        monkeypatch.setattr(Worktree, "_drop_admin_dir", interrupted_remove)
    monkeypatch.undo()
    assert git.out("worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (tmp_path / "wts").exists() or list((tmp_path / "wts").iterdir()) == []


def test_worktrees_created_at_once_by_parallel_jobs_all_succeed(sample, tmp_path):
    """Concurrent `git worktree add` in one repository can die reading another's
    half-written admin folder; --jobs N must never turn that into a GATE_ERROR."""
    for attempt in range(3):
        errors: list[BaseException] = []
        with worktree_pool(sample.repo.git, tmp_path / f"wts{attempt}") as pool:
            barrier = threading.Barrier(6)
            threads = [
                threading.Thread(target=lease_at_once, args=(pool, sample.base, barrier, errors))
                for _ in range(6)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
        assert errors == []


def lease_at_once(pool, commit: str, barrier: threading.Barrier, errors: list) -> None:
    barrier.wait(timeout=60)
    try:
        with pool.lease(commit):
            pass
    except BaseException as exc:  # asserted on by the main thread
        errors.append(exc)


def test_a_reused_worktree_never_runs_stale_bytecode(make_repo, tmp_path):
    """Python reuses a .pyc while its source keeps size and mtime second. A
    source git rewrites within the second it was compiled (simulated below by
    setting the old mtime back) must still run as the new source."""
    repo = make_repo({"m.py": "X = 1\n"})
    one = repo.run("rev-parse", "HEAD")
    patch = tmp_path / "three.patch"
    patch.write_text(repo.diff_of([("m.py", "X = 1", "X = 3")]))
    repo.write({"m.py": "X = 2\n"})
    two = repo.commit("two")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def value(worktree, module: str = "m") -> str:
        argv = [sys.executable, "-c", f"import {module}; print({module}.X)"]
        return subprocess.run(
            argv, cwd=worktree.path, env=env, capture_output=True, text=True, check=True
        ).stdout.strip()

    def as_old_as(worktree, compiled: os.stat_result) -> None:
        os.utime(worktree.path / "m.py", ns=(compiled.st_atime_ns, compiled.st_mtime_ns))

    with worktree_pool(repo.git, tmp_path / "wts") as pool:
        with pool.lease(one) as worktree:
            assert value(worktree) == "1"
            compiled = os.stat(worktree.path / "m.py")
        with pool.lease(two) as worktree:
            as_old_as(worktree, compiled)
            assert value(worktree) == "2"
        with pool.lease(one) as worktree:
            as_old_as(worktree, compiled)
            assert value(worktree) == "1"
            assert worktree.apply_patch(patch) is None
            as_old_as(worktree, compiled)
            assert value(worktree) == "3"
        with pool.lease(one) as worktree:  # the same commit again, after the patch
            as_old_as(worktree, compiled)
            assert value(worktree) == "1"
            (worktree.path / "m.py").write_text("X = 4\n")  # a test rewrites a source
            later = compiled.st_mtime_ns + 10**10  # not within the second of the last
            os.utime(worktree.path / "m.py", ns=(later, later))
            assert value(worktree) == "4"
            compiled = os.stat(worktree.path / "m.py")
        with pool.lease(one) as worktree:
            as_old_as(worktree, compiled)
            assert value(worktree) == "1"
            (worktree.path / "n.py").write_text("X = 5\n")  # and leaves a module behind
            assert value(worktree, "n") == "5"
            made = os.stat(worktree.path / "n.py")
        with pool.lease(one) as worktree:
            assert not (worktree.path / "n.py").exists()
            (worktree.path / "n.py").write_text("X = 6\n")
            os.utime(worktree.path / "n.py", ns=(made.st_atime_ns, made.st_mtime_ns))
            assert value(worktree, "n") == "6"


def test_a_worktree_whose_head_a_test_broke_is_still_reset(make_repo, tmp_path):
    """`git status` refuses a HEAD naming a blob; the reset then lists what to drop
    the old way, and the worktree is the commit again."""
    repo = make_repo({"m.py": "X = 1\n"})
    one = repo.run("rev-parse", "HEAD")
    blob = repo.run("rev-parse", "HEAD:m.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def value(worktree) -> str:
        argv = [sys.executable, "-c", "import n; print(n.X)"]
        done = subprocess.run(argv, cwd=worktree.path, env=env, capture_output=True, text=True)
        return done.stdout.strip()

    with worktree_pool(repo.git, tmp_path / "wts") as pool:
        with pool.lease(one) as worktree:
            (worktree.path / "m.py").write_text("X = 2\n")
            (worktree.path / "n.py").write_text("X = 5\n")  # an untracked module, compiled
            assert value(worktree) == "5"
            made = os.stat(worktree.path / "n.py")
            Path(worktree.admin_dir, "HEAD").write_text(blob + "\n")  # as a test could
        with pool.lease(one) as worktree:
            assert (worktree.path / "m.py").read_text() == "X = 1\n"
            assert not (worktree.path / "n.py").exists()
            (worktree.path / "n.py").write_text("X = 6\n")  # same size, same second
            os.utime(worktree.path / "n.py", ns=(made.st_atime_ns, made.st_mtime_ns))
            assert value(worktree) == "6"


def test_no_pytest_process_starts_once_an_interrupt_is_being_handled(tmp_path):
    """A worker between its `git checkout` and Popen when Ctrl-C arrives must not
    start a process that then runs to its timeout."""
    started: list[tuple[int | None, bool]] = []
    late_is_running = threading.Event()

    def interrupt() -> None:
        assert late_is_running.wait(timeout=60)
        raise KeyboardInterrupt

    def late_worker() -> None:
        late_is_running.set()
        assert reaping.STOPPING.wait(timeout=60), "the interrupt was never handled"
        argv = [sys.executable, "-c", "import signal; signal.pause()"]
        started.append(run_module._run_session(argv, tmp_path, tmp_path / "log", 30))

    with pytest.raises(KeyboardInterrupt):
        run_parallel([interrupt, late_worker], jobs=2)
    assert started == [(-signal.SIGKILL, False)]
    assert not reaping.STOPPING.is_set()


def test_a_signal_a_worker_thread_takes_still_stops_the_phase():
    """The kernel may hand a signal sent to the gate to any of its threads; Python
    runs the handler in the main thread, once that thread wakes. A worker takes this
    one (sent to itself), and the workers wait until the phase is being stopped: an
    untimed wait of the main thread would sleep through it until they time out."""
    stopped = []
    other_runs = threading.Event()

    def worker(takes_the_signal: bool) -> Callable[[], None]:
        def run() -> None:
            if takes_the_signal:
                assert other_runs.wait(timeout=20)
                time.sleep(0.3)  # the main thread is waiting by now (if not, this is moot)
                signal.pthread_kill(threading.get_ident(), signal.SIGINT)
            else:
                other_runs.set()
            stopped.append(reaping.STOPPING.wait(timeout=20))

        return run

    with pytest.raises(KeyboardInterrupt):
        run_parallel([worker(True), worker(False)], jobs=2)
    assert stopped == [True, True]


def test_a_run_the_main_thread_waits_on_is_stopped_by_a_signal_another_thread_takes():
    """With one job the main thread itself waits on the forked pytest process while
    the fork server's reader thread is the one the kernel may pick."""
    child, done, stopped_in_time = reaping.ForkedChild(1), threading.Event(), []

    def reader_takes_the_signal() -> None:
        time.sleep(0.3)  # the main thread is waiting by now (if not, this test is moot)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)
        stopped_in_time.append(done.wait(timeout=10))

    reader = threading.Thread(target=reader_takes_the_signal)
    reader.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            child.wait(timeout=30)
    finally:
        done.set()
        reader.join()
    assert stopped_in_time == [True]


@pytest.mark.parametrize("children_files", [True, False], ids=["children-files", "full-scan"])
def test_kill_orphans_kills_children_that_left_our_session_and_nothing_else(
    children_files, monkeypatch
):
    if not children_files:  # a kernel without /proc/<pid>/task/<tid>/children
        monkeypatch.setattr(reaping, "_children", lambda proc_root, me, thorough=False: None)
    detached = "import os, signal; os.setsid(); signal.pause()"
    started: queue.SimpleQueue[subprocess.Popen[bytes]] = queue.SimpleQueue()
    done = threading.Event()

    def start_and_stay() -> None:
        started.put(subprocess.Popen([sys.executable, "-c", detached]))
        done.wait(60)  # a live thread's children are listed under that thread

    starter = threading.Thread(target=start_and_stay)
    starter.start()
    mine = started.get(timeout=60)
    ours = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
    try:
        deadline = time.monotonic() + 30
        while os.getsid(mine.pid) == os.getsid(0) and time.monotonic() < deadline:
            time.sleep(0.01)  # until the child has called setsid
        assert kill_orphans() == 1
        with pytest.raises(ProcessLookupError):  # killed and reaped
            os.kill(mine.pid, 0)
        assert ours.poll() is None
    finally:
        done.set()
        starter.join()
        for proc in (mine, ours):
            proc.kill()
            proc.wait()


def test_no_andgate_variable_reaches_test_processes(monkeypatch):
    from andgate.process.argv import test_environment

    monkeypatch.setenv("ANDGATE_APPROVED_BY", "alice")
    monkeypatch.setenv("ANDGATE_CACHE_DIR", "/somewhere")
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "0")
    assert not [name for name in test_environment() if name.startswith("ANDGATE_")]


# -- tests that vandalise their worktree ------------------------------------------------------

VANDAL = '''\
"""Does everything a careless or hostile test can do to the tree it runs in."""

import os
import sys
import time
from pathlib import Path

PIDS = Path({pids!r})


def _scratch():
    """The gate's scratch folder: two levels above the worktree this runs in."""
    scratch = Path.cwd().resolve().parents[1]
    assert (scratch / "worktrees").is_dir(), "not run by andgate"
    return scratch


def _keep_writing(root, scratch):
    """A forked child, left in the process group, that never stops writing."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for name in ("flake.results.json", "oracle.results.json", "property.results.json"):
            try:
                (scratch / name).write_text("garbage")
            except OSError:
                pass
        try:
            (root / "minilib" / "text.py").write_text("raise SystemExit('vandalised')\\n")
        except OSError:
            pass


def test_vandal():
    root, scratch = Path.cwd(), _scratch()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        (PIDS / str(os.getpid())).touch()
        os.write(write, b"x")
        _keep_writing(root, scratch)
        os._exit(0)
    os.read(read, 1)
    (root / "junk.txt").write_text("junk")
    (root / "minilib" / "mathx.py").unlink()
    (root / "tests" / "oracles" / "test_math_oracle.py").write_text("def test_x(): pass\\n")
    (root / ".git").unlink()  # the worktree's link to its repository
    os.chdir("..")
    Path("escaped.txt").write_text("written next to the worktree")
'''


def test_vandal_test_reaches_neither_the_user_tree_nor_other_results(
    sample, tmp_path, fingerprint, monkeypatch
):
    """jobs=1, so the flake process reuses the worktree the vandal ran in; TMPDIR
    inside the user's repository, so a worktree whose `.git` file is gone lies
    inside the user's checkout as far as git's discovery is concerned."""
    pids = tmp_path / "pids"
    pids.mkdir()
    head = sample.change(lambda r: r.write({"tests/test_vandal.py": VANDAL.format(pids=str(pids))}))
    dirty_user_checkout(sample.repo, head)
    inner_tmp = sample.path / ".tmp"
    inner_tmp.mkdir()
    with open(sample.path / ".git" / "info" / "exclude", "a") as fh:
        fh.write(".tmp/\n")
    monkeypatch.setenv("TMPDIR", str(inner_tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    before = user_state(sample.repo, fingerprint)
    try:
        run = sample.gate("HEAD", jobs=1)
    finally:
        kill_leftovers(pids)
    assert run.decision == "allow", run.payload["reasons"]
    assert [w["code"] for w in run.payload["warnings"]] == ["UNCOMMITTED_CHANGES"]
    assert user_state(sample.repo, fingerprint) == before
    assert list(inner_tmp.iterdir()) == []
    assert recorded_pids(pids) and not any(alive(p) for p in recorded_pids(pids))


FORGER = '''\
"""Arbitrary code: finds the user's repository and forges its verdict.json."""

import json
import os
import subprocess
import time
from pathlib import Path

PIDS = Path({pids!r})
FORGED = json.dumps({{"schema": "andgate.verdict/1", "verdict": "allow", "reasons": []}})


def _forge_forever(target):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        tmp = target.with_name(f"forged-{{os.getpid()}}.tmp")
        try:
            target.parent.mkdir(exist_ok=True)
            tmp.write_text(FORGED)
            os.replace(tmp, target)
        except OSError:
            pass


def _spawn(target, detach):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        if detach:  # leave the process group and the session: killpg misses it
            os.setsid()
            if os.fork():
                os._exit(0)
        (PIDS / str(os.getpid())).touch()
        os.write(write, b"x")
        _forge_forever(target)
        os._exit(0)
    os.read(read, 1)
    if detach:
        os.waitpid(pid, 0)


def test_forger():
    common = subprocess.run(
        ["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    target = Path(common).resolve().parent / "artifacts" / "verdict.json"
    _spawn(target, detach=False)
    _spawn(target, detach=True)
'''


def test_forked_writers_die_before_the_verdict_is_written(sample, tmp_path):
    """Writing into the user's repository by absolute path is not sandboxed, but
    nothing a test starts outlives its pytest process, and the verdict is
    written from memory after the last one ended."""
    pids = tmp_path / "pids"
    pids.mkdir()

    def cheat(repo: SampleRepo) -> None:
        repo.write({"tests/test_forger.py": FORGER.format(pids=str(pids))})
        repo.edit("minilib/mathx.py", "return sum(xs) / len(xs)", "return 0")

    head = sample.change(cheat)
    try:
        run = sample.gate(head, artifacts=None, discrimination=True, discrimination_budget=300.0)
    finally:
        kill_leftovers(pids)
    # two forgers per run of the test: the untrusted phase, and each discrimination run
    assert len(recorded_pids(pids)) >= 2 and len(recorded_pids(pids)) % 2 == 0
    assert not any(alive(p) for p in recorded_pids(pids))
    written = json.loads((sample.path / "artifacts" / "verdict.json").read_text())
    assert written["verdict"] == "block" == run.verdict.decision.value
    assert "ORACLE_FAILED" in run.codes


# -- the plugin broken from inside -------------------------------------------------------------

SABOTAGE = {
    "unregistered": 'request.config.pluginmanager.unregister(name="andgate-recorder")',
    "crashing": 'request.config.stash[RECORDER_KEY].results_path = "/nonexistent/dir/r.json"',
}


@pytest.mark.parametrize("how", sorted(SABOTAGE))
def test_a_plugin_broken_by_a_test_is_gate_error_not_a_pass(sample, how):
    source = (
        "from andgate.plugin.hooks import RECORDER_KEY\n\n\n"
        f"def test_sabotage(request):\n    {SABOTAGE[how]}\n"
    )
    head = sample.change(lambda r: r.write({"tests/test_sabotage.py": source}))
    run = sample.gate(head)
    assert run.decision == "block"
    assert run.verdict.exit_code == 2
    [detail] = run.details("GATE_ERROR")
    assert detail.startswith("the untrusted pytest process (exit ")
    assert "wrote no results" in detail
    if how == "crashing":
        assert "FileNotFoundError" in detail  # the plugin's crash, from the log's tail


# -- malformed results files ---------------------------------------------------------------------

GOOD = {
    "schema": "andgate.results/1",
    "items": [
        {
            "nodeid": "t.py::a",
            "path": "t.py",
            "name": "a",
            "markers": [],
            "class": "oracle",
            "why": "w",
        }
    ],
    "reports": {"t.py::a": {"setup": "passed", "call": "passed", "teardown": "passed"}},
    "seeds": {},
    "collection_errors": [],
}


def _with(**changes: object) -> str:
    return json.dumps({**GOOD, **changes})


MALFORMED: dict[str, str | bytes | None] = {
    "missing file": None,
    "empty": "",
    "truncated": _with()[:40],
    "not an object": "[1, 2]",
    "unknown schema": _with(schema="andgate.results/0"),
    "no items key": json.dumps({k: v for k, v in GOOD.items() if k != "items"}),
    "item without nodeid": _with(items=[{"path": "t.py"}]),
    "reports not objects": _with(reports={"t.py::a": 3}),
    "seeds not lists": _with(seeds={"t.py::a": 3}),
    "collection error without message": _with(collection_errors=[{"nodeid": "x"}]),
    "not utf-8": b"\xff\xfe{",
    "nested too deep": "[" * 100_000,
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_results_file_is_an_error_never_a_pass(tmp_path, case):
    results = tmp_path / "oracle.results.json"
    content = MALFORMED[case]
    if isinstance(content, bytes):
        results.write_bytes(content)
    elif content is not None:
        results.write_text(content)
    result = read_results("oracle", 0, 1.0, results, tmp_path / "log", None)
    assert result.error
    assert result.items == () and result.reports == {}


def test_results_path_replaced_by_a_folder_is_an_error(tmp_path):
    results = tmp_path / "oracle.results.json"
    results.mkdir()
    result = read_results("oracle", 0, 1.0, results, tmp_path / "log", None)
    assert result.error and "malformed" in result.error


def test_results_path_replaced_by_a_fifo_is_an_error_and_does_not_block(tmp_path):
    """Were the read blocking, the writer below would have to unblock it (after
    ten seconds), and the test fails instead of hanging."""
    results = tmp_path / "oracle.results.json"
    os.mkfifo(results)
    done = threading.Event()
    had_to_unblock = []

    def unblock_a_blocked_reader() -> None:
        if not done.wait(timeout=10):
            had_to_unblock.append(True)
            with open(results, "w") as fh:
                fh.write(_with())

    writer = threading.Thread(target=unblock_a_blocked_reader)
    writer.start()
    try:
        result = read_results("oracle", 0, 1.0, results, tmp_path / "log", None)
    finally:
        done.set()
        writer.join()
    assert result.error and "not a regular file" in result.error
    assert had_to_unblock == []


@pytest.mark.parametrize("code, kind", [(3, "an internal error"), (4, "a usage error")])
def test_pytest_internal_or_usage_error_is_an_error_even_with_results(tmp_path, code, kind):
    results = tmp_path / "oracle.results.json"
    results.write_text(_with())
    result = read_results("oracle", code, 1.0, results, tmp_path / "log", None)
    assert result.error and kind in result.error
    assert result.items == ()


def test_well_formed_results_parse(tmp_path):
    """The control case for the malformed ones above."""
    results = tmp_path / "oracle.results.json"
    results.write_text(_with())
    result = read_results("oracle", 0, 1.0, results, tmp_path / "log", None)
    assert result.error is None
    assert [i.facts.nodeid for i in result.selected("oracle")] == ["t.py::a"]
