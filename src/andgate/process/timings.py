"""Where one check's wall time goes (`andgate check --profile`, `timings.json`).

Steps overlap: the production scan and the discrimination report run in threads
beside the oracle phase, and a class's pytest processes run `--jobs` at a time. So
the table is a timeline (each step's start and length), not a sum; what a step
waited for is named as a wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from andgate.records import StepTime


class Timings:
    """A thread-safe log of timed steps, each from this object's creation."""

    def __init__(self) -> None:
        self._origin = time.monotonic()
        self._lock = threading.Lock()
        self._steps: list[StepTime] = []

    def now(self) -> float:
        return time.monotonic() - self._origin

    @contextmanager
    def step(self, name: str, kind: str = "step") -> Iterator[None]:
        """Time the block as `name`; recorded even when the block raises (a step
        that failed still took its time)."""
        started = self.now()
        try:
            yield
        finally:
            self.add(name, started, self.now() - started, kind)

    def add(self, name: str, started: float, seconds: float, kind: str = "step") -> None:
        with self._lock:
            self._steps.append(StepTime(name, kind, started, max(seconds, 0.0)))

    def records(self) -> tuple[StepTime, ...]:
        """Every step so far, in order of start."""
        with self._lock:
            return tuple(sorted(self._steps, key=lambda s: (s.started, s.name)))
