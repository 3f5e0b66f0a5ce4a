"""What later runs learn from a check's plain runs (`process.limits`; issue 37, item 3).

Pure bookkeeping on `RunResult`s: no pytest process starts here. The replays'
and the discrimination report's use of it are tested end to end in
`tests/plugin/test_item_timeouts.py`.
"""

from __future__ import annotations

import threading
from typing import Any

from andgate.process.limits import (
    LATER_FACTOR,
    PlainRun,
    later_limit,
    timed_out_seconds,
)
from andgate.process.requests import ITEM_TIMEOUT_FLOOR
from andgate.process.results import RunResult


def run(reports: dict[str, dict[str, Any]], error: str | None = None) -> RunResult:
    return RunResult("oracle", 0, 1.0, reports=reports, error=error)


HANG = "tests/test_a.py::test_hang"
FAST = "tests/test_a.py::test_fast"
SLOW = "tests/test_b.py::test_slow"
PLAIN = {
    HANG: {"call": "failed", "seconds": 60.0, "timeout": 60.0},
    FAST: {"call": "passed"},  # under 0.1 s: the plugin records no seconds
    SLOW: {"call": "passed", "seconds": 4.5},
}


def test_a_later_limit_is_ten_times_the_plain_run_within_the_floor_and_the_limit():
    assert later_limit(60.0, None) == 60.0  # not run plainly: the check's limit
    assert later_limit(60.0, 0.0) == ITEM_TIMEOUT_FLOOR
    assert later_limit(600.0, 4.5) == 4.5 * LATER_FACTOR
    assert later_limit(60.0, 12.0) == 60.0  # never above the check's limit
    assert later_limit(3.0, 0.0) == 3.0  # a limit under the floor (tests) stays


def test_nothing_is_known_while_the_plain_run_runs():
    plain = PlainRun()
    assert plain.known_timeouts() == frozenset()
    assert plain.limit(["tests/test_a.py"], 60.0) == 60.0


def test_once_it_ended_its_timeouts_are_known_and_each_files_limit_is_its_slowest_item():
    plain = PlainRun()
    plain.ended([run(PLAIN)])
    assert plain.known_timeouts() == {HANG}
    assert plain.timed_out(HANG) and not plain.timed_out(FAST)
    assert plain.seconds(SLOW) == 4.5 and plain.seconds(FAST) == 0.0
    assert plain.seconds("tests/test_c.py::test_new") is None
    # the hang is not run again: it does not set its file's limit
    assert plain.limit(["tests/test_a.py"], 60.0) == ITEM_TIMEOUT_FLOOR
    assert plain.limit(["tests/test_a.py", "tests/test_b.py"], 600.0) == 45.0
    assert plain.limit(None, 600.0) == 45.0  # every file of the plain run
    assert plain.limit(["tests/test_a.py"], None) is None  # no item limit at all


def test_a_file_the_plain_run_did_not_run_keeps_the_checks_limit():
    plain = PlainRun()
    plain.ended([run(PLAIN)])
    assert plain.limit(["tests/test_a.py", "tests/test_new.py"], 60.0) == 60.0
    empty = PlainRun()
    empty.ended([])  # no oracle file on this machine (a shard)
    assert empty.limit(["tests/test_a.py"], 60.0) == 60.0
    assert empty.known_timeouts() == frozenset()


def test_a_plain_run_that_ended_in_an_error_tells_nothing():
    """The stall watch stopped it, or it crashed: what its results file holds (if
    anything) is not a plain run's."""
    plain = PlainRun()
    plain.ended([run(PLAIN, error="stopped responding")])
    assert plain.known_timeouts() == frozenset()
    assert plain.limit(["tests/test_a.py"], 60.0) == 60.0
    assert plain.seconds(SLOW) is None


def test_the_blocking_questions_wait_for_the_plain_run_to_end():
    plain = PlainRun()
    answers: list[bool] = []
    asker = threading.Thread(target=lambda: answers.append(plain.timed_out(HANG)))
    asker.start()
    asker.join(timeout=0.2)
    assert asker.is_alive() and answers == []
    plain.ended([run(PLAIN)])
    asker.join(timeout=10)
    assert answers == [True]


def test_timed_out_seconds_sums_the_items_that_ran_past_their_limit():
    other = {"tests/test_c.py::test_x": {"call": "failed", "seconds": 30.2, "timeout": 30.0}}
    assert timed_out_seconds([run(PLAIN), run(other)]) == 90.2
    assert timed_out_seconds([]) == 0.0
