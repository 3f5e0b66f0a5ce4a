"""One side of the evidence's runs as a queue of jobs under a deadline, and how a
fault of the evidence's own is stated instead of ending the check."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from andgate.check.discrimination.phase import Deadline
from andgate.errors import Interrupted
from andgate.process.reaping import STOPPING

T = TypeVar("T")


@dataclass
class Stage:
    """One side's jobs, taken in order by its workers until none is left or its
    deadline passed; the deadline is unknown (never passed) until the phase's own
    runs ended (`start`). The jobs are made by the first worker (`jobs_from`): the
    mutants may still be in the making when the phase's tasks are listed."""

    jobs: collections.deque[Callable[[], None]] = field(default_factory=collections.deque)
    make: Callable[[], Iterable[Callable[[], None]]] | None = None
    deadline: Deadline = field(default_factory=Deadline)
    started: float | None = None  # when the phase's own runs ended
    ended: float | None = None  # when its last job ended
    cut: bool = False  # the deadline passed with jobs left
    lock: threading.Lock = field(default_factory=threading.Lock)

    def jobs_from(self, make: Callable[[], Iterable[Callable[[], None]]]) -> None:
        self.make = make

    def start(self, seconds: float) -> None:
        self.started = time.monotonic()
        self.deadline.at = self.started + max(0.0, seconds)

    def next(self) -> Callable[[], None] | None:
        with self.lock:
            if self.make is not None:
                make, self.make = self.make, None
                self.jobs.extend(make())
            if self.jobs and self.deadline.is_set():
                self.cut = True
            if STOPPING.is_set() or self.deadline.is_set() or not self.jobs:
                return None
            return self.jobs.popleft()

    def worker(self, fail: Callable[[str], None]) -> None:
        """Take jobs until none is left; a job's own fault is stated (`fail`), never
        the check's GATE_ERROR."""
        while (job := stated(self.next, fail)) is not None:
            try:
                stated(job, fail)
            finally:
                with self.lock:
                    self.ended = max(self.ended or 0.0, time.monotonic())

    def extra(self) -> float:
        """What its runs took after the phase's own ended."""
        if self.started is None or self.ended is None:
            return 0.0
        return max(0.0, self.ended - self.started)


def stated(work: Callable[[], T], fail: Callable[[str], None]) -> T | None:
    """`work()`; a fault of the evidence's own is stated (`fail`) and gives None, never
    the check's GATE_ERROR (an interruption still ends the check)."""
    try:
        return work()
    except Interrupted:
        raise
    except Exception as exc:
        fail(f"internal error: {error_line(exc)}")
        return None


def error_line(exc: BaseException) -> str:
    """An exception in one line: its class and its message's first line."""
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{exc.__class__.__name__}: {first}"
