"""The discrimination report's bookkeeping, without processes: which breakages
killed which items, and when the remaining breakages need not run."""

from __future__ import annotations

import threading
import time

import pytest

from andgate.check.discrimination.phase import (
    MIN_BUDGET,
    Discrimination,
    _Found,
    default_budget,
)

A = "tests/test_new.py::test_a"
B = "tests/test_new.py::test_b"


def _ran(found: _Found, name: str, failed: set[str], broken: frozenset[str] = frozenset()) -> None:
    found.ran.append(name)
    found.failed[name] = failed
    found.broken_files[name] = set(broken)


def test_nothing_is_left_only_once_every_item_that_passed_on_head_failed():
    found = _Found(budget=60)
    _ran(found, "mutant 1", failed={A, B})
    assert not found.nothing_left()  # head's results are not in yet: never stop early
    found.know({A, B})
    assert found.nothing_left()
    assert found.killed_by(A) == ["mutant 1"]


def test_an_item_that_did_not_pass_on_head_keeps_no_breakage_running():
    """A skipped or xfail item can never fail: only the items that passed on head
    count, so one breakage that kills them ends the search."""
    found = _Found(budget=60)
    found.know({A})  # B was skipped on head
    _ran(found, "mutant 1", failed={A})
    assert found.nothing_left()


def test_a_breakage_that_collects_other_ids_does_not_end_the_search():
    """A mutant that renames parametrised ids (values from production code) reports
    none of head's items: they are not killed, so the next breakage still runs."""
    found = _Found(budget=60)
    found.know({A})
    _ran(found, "mutant 1", failed={"tests/test_new.py::test_a[renamed]"})
    assert not found.nothing_left()
    assert found.killed_by(A) == []


def test_no_item_passed_on_head_leaves_nothing_to_learn():
    """A change that edits only a test helper: no breakage starts a process."""
    found = _Found(budget=60)
    found.know(())
    assert found.nothing_left() and not found.start(0)


def test_a_file_that_breaks_at_collection_kills_every_item_in_it():
    found = _Found(budget=60)
    found.know({A, B})
    _ran(found, "mutant 1", failed=set())
    _ran(found, "known-bad kb", failed=set(), broken=frozenset({"tests/test_new.py"}))
    assert found.killed_by(A) == found.killed_by(B) == ["known-bad kb"]
    assert found.nothing_left()


def test_the_budget_starts_when_head_is_known_not_when_planned():
    found = _Found(budget=0.05)
    time.sleep(0.1)  # the untrusted class running beside the first breakages
    assert not found.out_of_time() and not found.deadline.is_set()
    found.know({A})
    assert not found.out_of_time()
    time.sleep(0.1)
    assert found.out_of_time() and found.deadline.is_set()


def test_the_default_budget_is_a_quarter_of_the_classes_time_within_5_s_and_a_minute():
    assert default_budget(40.0) == 10.0
    assert default_budget(8.0) == 5.0
    assert default_budget(0.0) == 5.0
    assert default_budget(1000.0) == 60.0
    found = _Found(budget=None, started=time.monotonic() - 40.0)  # classes took 40 s
    found.know({A})
    # a loaded machine may take a while between the lines: bounds, not exact times
    assert found.spent is not None and 10.0 <= found.spent < 10.5
    left = found.deadline.left()
    assert left is not None and found.spent - 2.0 < left <= found.spent


def test_the_default_budget_leaves_out_the_time_spent_on_items_that_timed_out():
    """A change whose oracle item hangs makes the classes a minute longer: that is no
    measure of the suite, and would buy the report 15 s more (issue 37, item 3)."""
    found = _Found(budget=None, started=time.monotonic() - 100.0)  # 60 s of it a hang
    found.know({A}, waited=60.0)
    assert found.spent is not None and 10.0 <= found.spent < 10.5
    waited_more = _Found(budget=None, started=time.monotonic() - 100.0)
    waited_more.know({A}, waited=150.0)  # replays waited beside the class: counted twice
    assert waited_more.spent == MIN_BUDGET
    given = _Found(budget=30.0, started=time.monotonic() - 100.0)
    given.know({A}, waited=60.0)
    assert given.spent == 30.0  # --discrimination-budget is the user's


def test_a_breakage_run_skips_what_timed_out_on_head_and_takes_its_limit_from_head(
    tmp_path, monkeypatch
):
    """What timed out on head is no item the report covers: a breakage run does not
    wait for it again; the run's limit comes from what the file's items took there."""
    import contextlib
    from types import SimpleNamespace

    from andgate.check.discrimination import phase as discrimination
    from andgate.process.requests import ITEM_TIMEOUT_FLOOR, RunEnvironment
    from andgate.process.results import RunResult

    hang = "tests/test_new.py::test_hang"
    worktree = SimpleNamespace(path=tmp_path, apply_patch=lambda patch: None)
    ctx = SimpleNamespace(
        scratch=tmp_path,
        timeout=60,
        plan=SimpleNamespace(head="h" * 40, head_rules=None),
        state=SimpleNamespace(environment=RunEnvironment(item_timeout=60.0)),
        pool=SimpleNamespace(lease=lambda commit, **_: contextlib.nullcontext(worktree)),
    )
    requests = []

    def fake_pytest(request, *args, **kwargs):
        requests.append(request)
        return RunResult(request.label, 0, 0.1)

    monkeypatch.setattr(discrimination, "run_pytest", fake_pytest)
    found = _Found(budget=60)
    breakage = discrimination.Breakage("mutant 1", b"patch")
    discrimination._break(ctx, 0, breakage, frozenset({"tests/test_new.py"}), found)
    head = {
        A: {"call": "passed", "seconds": 0.3},
        hang: {"call": "failed", "seconds": 60.0, "timeout": 60.0},
    }
    found.plain.ended([RunResult("untrusted", 1, 61.0, reports=head)])
    found.know({A})
    discrimination._break(ctx, 1, breakage, frozenset({"tests/test_new.py"}), found)
    before, after = requests
    assert before.skip_items == () and before.item_timeout == 60.0  # head not known yet
    assert after.skip_items == (hang,) and after.item_timeout == ITEM_TIMEOUT_FLOOR


def test_a_breakage_waiting_for_room_gives_up_when_the_budget_runs_out():
    """It is then not tried: the report names it (out_of_time), never counts it."""
    found = _Found(budget=0.2)
    found.know({A})
    assert found.start(0) and found.start(1)  # two running for one item left
    began = time.monotonic()
    assert not found.start(2)  # waited for room until the budget ran out
    assert time.monotonic() - began < 1.0
    assert found.out_of_time()


def test_nothing_left_to_learn_is_not_out_of_time():
    """A breakage not needed (every item already failed) is not 'not tried'."""
    found = _Found(budget=0.0)
    found.know({A})
    _ran(found, "mutant 1", failed={A})
    assert not found.out_of_time()


def test_a_later_breakage_runs_only_the_files_whose_items_are_left():
    other = "tests/test_other.py::test_c"
    files = frozenset({"tests/test_new.py", "tests/test_other.py"})
    found = _Found(budget=60)
    assert found.files_left(files) == files  # head unknown: every touched file
    found.know({A, other})
    _ran(found, "mutant 1", failed={A})
    assert found.files_left(files) == {"tests/test_other.py"}


def test_a_breakage_waits_while_running_ones_may_kill_what_is_left():
    """One item left: one breakage runs beside the one that may kill it (a miss then
    costs no wall time); a third waits for them (it would only repeat what they
    find), then does not run if one of them killed the item."""
    found = _Found(budget=60)
    assert found.start(0) and found.start(1) and found.start(2)  # head's results unknown
    found.know({A})
    _ran(found, "mutant 1", failed=set())
    found.done()  # mutant 1 missed A; mutants 2 and 3 are still running
    answer: list[bool] = []
    waiter = threading.Thread(target=lambda: answer.append(found.start(3)), daemon=True)
    waiter.start()
    waiter.join(timeout=0.3)
    assert waiter.is_alive()  # two running for one item left: waiting
    _ran(found, "mutant 2", failed=set())
    found.done()  # one running for one item left: room for one beside it
    waiter.join(timeout=5)
    assert answer == [True]
    _ran(found, "mutant 3", failed={A})
    found.done()
    assert not found.start(4)  # nothing left to kill


def test_head_is_known_once_the_last_untrusted_process_ended_even_by_an_error():
    calls: list[str] = []
    told = lambda runs, waited: calls.append(f"head {waited}")  # noqa: E731
    beside = Discrimination([lambda: None], lambda run: None, on_head=told)

    def fails() -> None:
        raise RuntimeError("interrupted")

    first, second = beside.after(2.0).watching([lambda: None, fails], {})
    first()
    assert calls == []
    with pytest.raises(RuntimeError):
        second()
    assert calls == ["head 2.0"]
    nothing = Discrimination([lambda: None], lambda run: None, on_head=told)
    assert nothing.watching([], {}) == [] and calls == ["head 2.0", "head 0.0"]


def test_a_waiting_breakage_is_not_overtaken_by_a_later_one():
    """Breakages start in their order: the worker whose breakage just ended takes
    the next task at once, and it must not take the place of the one already
    waiting (it did: the killer then ran last, after every known-bad fixture)."""
    found = _Found(budget=60)
    found.know({A})
    assert found.start(0) and found.start(1)  # two running, one item left
    order: list[int] = []

    def breakage(index: int) -> None:
        if found.start(index):
            order.append(index)

    waiting = threading.Thread(target=breakage, args=(2,), daemon=True)
    waiting.start()
    time.sleep(0.2)  # breakage 2 waits

    def ends_then_takes_the_next() -> None:
        with found.lock:  # as a worker does, before the woken one can run
            _ran(found, "mutant 1", failed=set())
            found.done()
            breakage(3)

    worker = threading.Thread(target=ends_then_takes_the_next, daemon=True)
    worker.start()
    waiting.join(timeout=5)
    time.sleep(0.2)
    assert order == [2] and worker.is_alive()  # 3 waits behind 2, then for room
    _ran(found, "mutant 2", failed={A})
    found.done()
    worker.join(timeout=5)
    assert order == [2]  # and breakage 3 had nothing left to learn


def test_a_running_process_is_killed_within_a_second_of_the_deadline(tmp_path):
    """The budget ends what is running, not only what has yet to start: a breakage
    that hangs is killed at the deadline (the check's --timeout is far away)."""
    import sys

    from andgate.check.discrimination.phase import Deadline
    from andgate.process.run import STOPPED, _run_session

    deadline = Deadline()
    deadline.at = time.monotonic() + 0.5
    hang = [sys.executable, "-c", "import time; time.sleep(120)"]
    began = time.monotonic()
    code, timed_out = _run_session(hang, tmp_path, tmp_path / "log", 300, stop=deadline)
    ended = time.monotonic()
    assert (code, timed_out) == (STOPPED, False)
    assert ended - deadline.at < 1.0 and ended - began < 2.0


def test_the_tests_a_change_adds_are_told_apart_from_the_rest_of_the_file():
    from andgate.check.discrimination.changed_tests import changed_tests, item_name

    before = b"def test_a():\n    assert 1\n\n\nclass TestB:\n    def test_c(self):\n        pass\n"
    after = before.replace(b"pass", b"assert 2") + b"\n\ndef test_new():\n    assert 3\n"
    assert changed_tests(before, after) == {"TestB.test_c", "test_new"}
    assert changed_tests(None, after) == {"test_a", "TestB.test_c", "test_new"}
    assert changed_tests(b"def (", after) is None  # cannot tell apart: every item counts
    assert item_name("t/test_x.py::TestB::test_c[1-2]") == "TestB.test_c"
    assert item_name("t/test_x.py::test_new") == "test_new"


def test_mutants_only_on_the_touched_lines_and_at_most_a_few():
    from andgate.check.discrimination.mutate import mutants_of

    text = "def f(a, b):\n    if a < b:\n        return 1\n    return a == b\n"
    every = mutants_of("m.py", text)
    touched = mutants_of("m.py", text, lines={4})
    assert touched and {m.line for m in touched} == {4}
    assert [m.patch for m in touched] == [m.patch for m in every if m.line == 4]
    assert len(mutants_of("m.py", text, limit=1)) == 1 < len(every)


def test_a_breakage_run_that_ends_in_an_error_counts_as_not_tried(tmp_path, monkeypatch):
    """Not a breakage that silently drops out: with require_discriminating_tests, a
    report where every breakage crashed would otherwise allow on nothing."""
    import contextlib
    from types import SimpleNamespace

    from andgate.check.discrimination import phase as discrimination
    from andgate.process.requests import RunEnvironment
    from andgate.process.results import RunResult

    worktree = SimpleNamespace(path=tmp_path, apply_patch=lambda patch: None)
    ctx = SimpleNamespace(
        scratch=tmp_path,
        timeout=60,
        plan=SimpleNamespace(head="h" * 40, head_rules=None),
        state=SimpleNamespace(environment=RunEnvironment()),
        pool=SimpleNamespace(lease=lambda commit, **_: contextlib.nullcontext(worktree)),
    )
    crashed = RunResult("discrimination 0", None, 0.1, error="no results file")
    request = SimpleNamespace(label="discrimination 0")  # the lease names its run
    monkeypatch.setattr(discrimination, "RunRequest", lambda *a, **k: request)
    monkeypatch.setattr(discrimination, "run_pytest", lambda *a, **k: crashed)
    found = _Found(budget=60)
    breakage = discrimination.Breakage("mutant 1", b"patch")
    discrimination._break(ctx, 0, breakage, frozenset({"tests/test_new.py"}), found)
    assert found.skipped == ["mutant 1"]
    assert "mutant 1" not in found.ran


def test_after_last_tells_once_when_the_last_task_ends_however_it_ended():
    from andgate.check.context import after_last

    told: list[str] = []

    def boom() -> None:
        raise RuntimeError("a task that fails still ends")

    tasks = after_last([lambda: told.append("a"), boom], lambda: told.append("told"))
    tasks[0]()
    assert told == ["a"]
    with pytest.raises(RuntimeError):
        tasks[1]()
    assert told == ["a", "told"]
    assert after_last([], lambda: told.append("at once")) == []
    assert told[-1] == "at once"


def test_the_time_waited_counts_the_classes_runs_and_the_replays_not_base_or_breakages():
    from andgate.check.discrimination.phase import time_waited
    from andgate.check.state import RunKey, RunName
    from andgate.process.results import RunResult
    from andgate.records import ReplayFacts

    def hung(seconds: float) -> RunResult:
        report = {"call": "failed", "seconds": seconds, "timeout": 60.0}
        return RunResult("x", 1, seconds, reports={"t.py::test_x": report})

    oracle_phase = {
        RunKey(RunName.ORACLE): hung(60.0),
        RunKey(RunName.ORACLE, process=1): hung(60.0),  # folded into the class's: once
        RunKey(RunName.BASE_SKIPS): hung(1000.0),  # base's code: not this check's classes
    }
    # a process of the untrusted class, not folded yet
    untrusted_phase = {RunKey(RunName.UNTRUSTED, process=1): hung(20.0)}
    replays = [ReplayFacts("kb", applied=True, waited=30.0)]
    assert time_waited([oracle_phase, untrusted_phase], replays) == 110.0
    assert time_waited([untrusted_phase]) == 20.0
