"""Each test item's time limit, and which items are running now.

PYTEST_DONT_REWRITE (part of the plugin, loaded before pytest could rewrite it).

`ItemClock` enforces `--item-timeout` in the main thread with SIGALRM; `RunningItems`
keeps the node ids of the running items in a small shared memory map the gate's stall
watch reads (`process.run.StallWatch`). Part of the plugin: pytest and the standard
library only.
"""

from __future__ import annotations

import mmap
import signal
import threading
import time
from typing import Any

# After an item's time is up, its alarm fires again this often: code that swallows
# the first ItemTimeout (`except BaseException`) still stops.
REFIRE = 1.0


# A teardown after the item's time is up still gets this long to clean up.
TEARDOWN_GRACE = 5.0


class ItemTimeout(BaseException):
    """Raised in the main thread when a test item runs past its limit. Not an
    Exception: test code's `except Exception` must not swallow it."""


def timed_out_message(limit: float) -> str:
    return f"timed out after {limit:g} s"


class ItemClock:
    """One time limit for every item of a process, enforced in the main thread by
    SIGALRM (`setitimer`): the handler raises ItemTimeout between two bytecodes, so
    a loop that holds the GIL stops, and a sleep or a lock wait is interrupted.
    Armed only while a phase of an item runs, never while pytest reports."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.nodeid: str | None = None
        self.deadline = 0.0
        self.when = ""
        self.fired: dict[tuple[str, str], float] = {}  # (nodeid, phase) -> limit
        self.previous: Any = None  # the SIGALRM handler the suite had

    def start(self, nodeid: str) -> None:
        self.nodeid, self.deadline = nodeid, time.monotonic() + self.limit

    def stop(self) -> None:
        self.nodeid = None

    def fired_in(self, nodeid: str, when: str) -> float | None:
        return self.fired.get((nodeid, when))

    def arm(self, when: str) -> bool:
        """Start the alarm for this phase; False where no alarm can be set (not the
        main thread: signal handlers run only there)."""
        if self.nodeid is None or threading.current_thread() is not threading.main_thread():
            return False
        self.when = when
        left = self.deadline - time.monotonic()
        if left <= 0 and when == "teardown":
            left = TEARDOWN_GRACE
        self.previous = signal.signal(signal.SIGALRM, self._fire)
        signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))
        return True

    def disarm(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.previous or signal.SIG_DFL)

    def _fire(self, signum: int, frame: Any) -> None:
        if self.nodeid is None:
            return
        self.fired[(self.nodeid, self.when)] = self.limit
        signal.setitimer(signal.ITIMER_REAL, REFIRE)
        raise ItemTimeout(timed_out_message(self.limit))


class RunningItems:
    """The node ids of the items running now, one a line, in a small shared memory
    map of `path` (ended by a NUL): when an item blocks where no signal handler
    runs, the gate's stall watch names it (`process.run.StallWatch`). A map, not a
    write per item: the page is the file's, visible to the gate as soon as it is
    written, at about a microsecond an item (ext4 flushes a rewritten file on close:
    milliseconds an item). Where no map can be made, nothing is named."""

    SIZE = 4096

    def __init__(self, path: str) -> None:
        self.path = path
        self.now: dict[str, None] = {}  # in the order they started (xdist: one a worker)
        self.map: mmap.mmap | None = None
        self.broken = False

    def start(self, nodeid: str) -> None:
        self.now[nodeid] = None
        self._show()

    def finish(self, nodeid: str) -> None:
        """Forgotten; shown at once only while others run (xdist's workers), else with
        the next start: one write an item. Between two items of one process the map
        still names the one that just finished."""
        self.now.pop(nodeid, None)
        if self.now:
            self._show()

    def _show(self) -> None:
        if self.map is None and not self._open():
            return
        assert self.map is not None
        text = "".join(f"{n}\n" for n in self.now).encode("utf-8", "surrogateescape")
        data = text[: self.SIZE - 1] + b"\0"
        self.map[: len(data)] = data

    def _open(self) -> bool:
        if self.broken:
            return False
        try:
            with open(self.path, "w+b") as fh:
                fh.truncate(self.SIZE)
                self.map = mmap.mmap(fh.fileno(), self.SIZE)  # outlives the descriptor
        except (OSError, ValueError):
            self.broken = True
            return False
        return True


class armed:
    """The item's alarm around one phase (nothing without a limit)."""

    def __init__(self, clock: ItemClock | None, when: str) -> None:
        self.clock, self.when, self.on = clock, when, False

    def __enter__(self) -> None:
        self.on = self.clock is not None and self.clock.arm(self.when)

    def __exit__(self, *exc: object) -> None:
        if self.on and self.clock is not None:
            self.clock.disarm()
