"""Progress of a long check, on stderr: which phase, items done of total, time.

On a terminal each phase has one status line, rewritten in place (`\\r`) at most
every `tty_interval` seconds; elsewhere (a CI log) plain lines, one when a phase
starts, then at most one every `interval` seconds, and one when it ends. `quiet`
writes nothing. The clock and the stream are arguments, so tests drive it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

CLEAR_TO_END = "\x1b[K"


class Progress:
    def __init__(
        self,
        stream: TextIO,
        *,
        tty: bool | None = None,
        quiet: bool = False,
        clock: Callable[[], float] = time.monotonic,
        interval: float = 5.0,
        tty_interval: float = 0.1,
    ) -> None:
        self._stream = stream
        self._tty = _isatty(stream) if tty is None else tty
        self._quiet = quiet
        self._clock = clock
        self._interval = tty_interval if self._tty else interval
        self._lock = threading.Lock()  # class processes report from several threads
        self._phase: str | None = None
        self._total: int | None = None
        self._done = 0
        self._started = 0.0
        self._shown = 0.0

    # -- the phase --------------------------------------------------------------------

    def start(self, phase: str, total: int | None = None) -> None:
        with self._lock:
            if self._phase is not None:
                self._end()
            self._phase, self._total, self._done = phase, total, 0
            self._started = self._shown = self._clock()
            self._show(final=False)

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self._done += n
            self._maybe_show()

    def set(self, done: int, total: int | None = None) -> None:
        """Absolute counts, for a caller that polls (lines in a result file)."""
        with self._lock:
            self._done = done
            if total is not None:
                self._total = total
            self._maybe_show()

    def finish(self) -> None:
        with self._lock:
            if self._phase is not None:
                self._end()

    @contextmanager
    def phase(self, name: str, total: int | None = None) -> Iterator[Progress]:
        self.start(name, total)
        try:
            yield self
        finally:
            self.finish()

    # -- text -------------------------------------------------------------------------

    def status(self) -> str:
        elapsed = self._clock() - self._started
        if self._total:
            share = f" ({100 * self._done / self._total:.0f}%)"
            count = f"{self._done:,} of {self._total:,}{share}"
        else:
            count = f"{self._done:,} done"
        return f"andgate: {self._phase}: {count}, {_seconds(elapsed)}"

    def _maybe_show(self) -> None:
        if self._phase is None or self._quiet:
            return
        if self._clock() - self._shown >= self._interval:
            self._show(final=False)

    def _end(self) -> None:
        self._show(final=True)
        self._phase = None

    def _show(self, *, final: bool) -> None:
        self._shown = self._clock()
        if self._quiet:
            return
        text = self.status()
        if self._tty:
            self._stream.write(f"\r{text}{CLEAR_TO_END}" + ("\n" if final else ""))
        else:
            self._stream.write(text + (" (done)" if final else "") + "\n")
        self._stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _seconds(elapsed: float) -> str:
    elapsed = max(0.0, elapsed)
    if elapsed < 60:
        return f"{elapsed:.0f}s"
    minutes, seconds = divmod(int(elapsed), 60)
    return f"{minutes}m{seconds:02d}s"
