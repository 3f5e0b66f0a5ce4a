"""The discrimination report's bookkeeping, without processes: which breakages
killed which items, and when the remaining breakages need not run."""

from __future__ import annotations

import time

from andgate.phases.discrimination import _Found

A = "tests/test_new.py::test_a"
B = "tests/test_new.py::test_b"


def _ran(
    found: _Found, name: str, failed: set[str], seen: set[str], broken: frozenset[str] = frozenset()
) -> None:
    found.ran.append(name)
    found.failed[name] = failed
    found.broken_files[name] = set(broken)
    found.seen |= seen


def test_nothing_is_left_only_once_a_run_saw_every_item_fail():
    found = _Found(budget=60)
    assert not found.nothing_left()  # no breakage ran yet: the items are unknown
    _ran(found, "mutant 1", failed={A}, seen={A, B})
    assert not found.nothing_left()  # B passed against it
    _ran(found, "mutant 2", failed={B}, seen={A, B})
    assert found.nothing_left()
    assert found.killed_by(A) == ["mutant 1"] and found.killed_by(B) == ["mutant 2"]


def test_a_run_that_collects_no_item_leaves_nothing_to_learn():
    """A change that edits only a test helper: the first run finds no item in the
    touched files, so the other K + 4 breakages do not start a process each."""
    found = _Found(budget=60)
    _ran(found, "mutant 1", failed=set(), seen=set())
    assert found.nothing_left()


def test_a_file_that_breaks_at_collection_kills_every_item_in_it():
    found = _Found(budget=60)
    _ran(found, "mutant 1", failed=set(), seen={A, B})
    _ran(found, "known-bad kb", failed=set(), seen=set(), broken={"tests/test_new.py"})
    assert found.killed_by(A) == found.killed_by(B) == ["known-bad kb"]
    assert found.nothing_left()


def test_the_budget_starts_with_the_first_breakage_not_when_planned():
    found = _Found(budget=0.05)
    time.sleep(0.1)  # the untrusted class running before any breakage did
    assert not found.out_of_time()
    time.sleep(0.1)
    assert found.out_of_time()


def test_a_breakage_waits_while_running_ones_may_kill_what_is_left():
    """One item left and one breakage running: the next waits for it (it would only
    repeat what that one finds), then does not run if that one killed the item."""
    import threading

    found = _Found(budget=60)
    assert found.start() and found.start()  # nothing ran yet: both may start
    _ran(found, "mutant 1", failed=set(), seen={A})
    found.done()  # mutant 1 missed A; mutant 2 is still running
    answer: list[bool] = []
    waiter = threading.Thread(target=lambda: answer.append(found.start()))
    waiter.start()
    waiter.join(timeout=0.3)
    assert waiter.is_alive()  # waiting for mutant 2
    _ran(found, "mutant 2", failed={A}, seen={A})
    found.done()
    waiter.join(timeout=5)
    assert answer == [False]


def test_a_breakage_starts_when_the_running_one_missed():
    import threading

    found = _Found(budget=60)
    assert found.start()
    _ran(found, "mutant 1", failed=set(), seen={A, B})  # two left, one running: start
    assert found.start()
    found.done()
    found.done()
    answer: list[bool] = []
    waiter = threading.Thread(target=lambda: answer.append(found.start()))
    waiter.start()
    waiter.join(timeout=5)
    assert answer == [True]
