"""The signals that end a check: Ctrl-C (SIGINT), a CI runner cancelling the job
(SIGTERM) and a closed terminal (SIGHUP).

Python runs a signal's handler in the main thread only, and only when that thread
runs bytecode again. A signal sent to the gate's process is taken by whichever of
its threads the kernel picks: one taken by a pool worker or by the fork server's
reader leaves the main thread asleep on an untimed wait, so the check would go on
until its pytest runs end or time out (up to `--timeout`), and only then stop.
So the main thread never waits without a bound: it waits in slices of `WAKE`
seconds (`wait_event`, `wait_future`), and each time it wakes CPython runs the
handler of a signal any thread received (bpo-40010). Helper threads are not made
to block these signals instead: the pytest and git processes they start would
inherit that mask.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

STOP = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# The longest a signal another thread received waits for the main thread.
WAKE = 0.2

T = TypeVar("T")


def wait_event(event: threading.Event, timeout: float | None = None) -> bool:
    """`event.wait(timeout)`, awake every `WAKE` seconds for a signal's handler."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = WAKE if deadline is None else min(WAKE, deadline - time.monotonic())
        if left <= 0:
            return event.is_set()
        if event.wait(left):
            return True


def wait_future(future: Future[T]) -> T:
    """`future.result()`, awake every `WAKE` seconds for a signal's handler."""
    while not future.done():
        wait_futures([future], timeout=WAKE)
    return future.result()


def in_background(name: str, work: Callable[[], T]) -> Future[T]:
    """Start `work` in a daemon thread; `wait_future` joins it (and raises what it
    raised). A daemon: a check ended by a signal does not wait for it."""
    future: Future[T] = Future()
    future.set_running_or_notify_cancel()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as exc:  # handed to whoever joins
            future.set_exception(exc)

    threading.Thread(target=run, name=f"andgate-{name}", daemon=True).start()
    return future


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP until the block ends, then deliver the first one.

    Cleanup must not be cut short by the second Ctrl-C of an impatient user.
    Python runs signal handlers only in the main thread, so elsewhere (and for
    a handler not installed from Python) this holds nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = {}
    for signum in STOP:
        handler = signal.getsignal(signum)
        if handler is not None:
            previous[signum] = signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if held:
            signal.raise_signal(held[0])
