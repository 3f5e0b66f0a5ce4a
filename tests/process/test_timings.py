"""`process.timings`: the check's timeline of steps (`check --profile`, timings.json)."""

from __future__ import annotations

import threading

import pytest

from andgate.process.timings import Timings


def test_a_step_is_recorded_with_its_start_and_length_in_order_of_start():
    timings = Timings()
    timings.add("second", started=2.0, seconds=0.5, kind="pytest")
    timings.add("first", started=1.0, seconds=3.0)
    steps = timings.records()
    assert [(s.name, s.kind, s.started, s.seconds) for s in steps] == [
        ("first", "step", 1.0, 3.0),
        ("second", "pytest", 2.0, 0.5),
    ]


def test_a_step_that_raises_still_took_its_time():
    timings = Timings()
    with pytest.raises(RuntimeError), timings.step("breaks"):
        raise RuntimeError("boom")
    assert [s.name for s in timings.records()] == ["breaks"]


def test_a_timed_step_starts_after_the_origin_and_lasts_what_it_blocked():
    timings = Timings()
    gate = threading.Event()
    with timings.step("waits"):
        gate.wait(0.05)
    (step,) = timings.records()
    assert step.started >= 0.0
    assert step.seconds >= 0.04  # it blocked 50 ms; a clock that stood still gives 0


def test_steps_from_many_threads_are_all_kept():
    timings = Timings()

    def record(n: int) -> None:
        for i in range(200):
            timings.add(f"{n}-{i}", started=float(i), seconds=0.0)

    threads = [threading.Thread(target=record, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(timings.records()) == 800


def test_a_clock_step_backwards_never_gives_a_negative_length():
    timings = Timings()
    timings.add("odd", started=1.0, seconds=-0.2)
    assert timings.records()[0].seconds == 0.0
