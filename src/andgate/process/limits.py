"""What the later runs of a check learn from its plain runs (contract section 4, "Hangs").

A plain run runs head's code as it is: the oracle class, and the untrusted class.
Later runs run it again with a breakage applied: the known-bad replays (head's
production code and a fixture, against the oracle class) and the discrimination
report's runs (head and a mutant or a fixture, against the change's test files).
From the plain run they take two things, once it has ended:

- the items that timed out there are not run again (`PlainRun.known_timeouts`): a
  hang on head proves nothing about a breakage, and waiting for it once more would
  cost the item limit again in every later run;
- the item limit comes from what the items took there (`PlainRun.limit`): ten
  times the slowest of the run's files, at least the floor, at most the check's limit.

A later run that starts before the plain run ended runs with the check's limit and
skips nothing: it cannot know yet. The durations come from the plain run's results
file, never from a cache: a test could write one, and would set other items'
limits. What a results file says can only lower a limit to the floor or deselect an
item whose plain run already failed: both can block, never allow.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable

from andgate.process.requests import ITEM_TIMEOUT_FLOOR
from andgate.process.results import RunResult
from andgate.process.signals import wait_event

# A later run's limit: this many times what its items took in the plain run.
LATER_FACTOR = 10.0


def later_limit(limit: float, plain_seconds: float | None) -> float:
    """An item's limit in a later run, from what it took in the plain run (None:
    it did not run there): at least the floor, at most the check's `limit`."""
    if plain_seconds is None:
        return limit
    return min(limit, max(ITEM_TIMEOUT_FLOOR, LATER_FACTOR * plain_seconds))


def timed_out_seconds(runs: Iterable[RunResult]) -> float:
    """The seconds these runs spent on items that ran past their limit."""
    return sum(
        float(entry.get("seconds") or 0.0)
        for run in runs
        for entry in run.reports.values()
        if entry.get("timeout") is not None
    )


class PlainRun:
    """The items of a plain run (every process of a class), once all have ended:
    what each took and which timed out. A process that ended in an error (a crash,
    the stall watch) tells nothing: its items count as not run."""

    def __init__(self) -> None:
        self._ended = threading.Event()
        self._seconds: dict[str, float] = {}
        self._slowest: dict[str, float] = {}  # file -> its slowest item that did not time out
        self._timed_out: set[str] = set()

    def ended(self, runs: Iterable[RunResult]) -> None:
        for run in runs:
            if run.error:
                continue
            for nodeid, entry in run.reports.items():
                seconds = float(entry.get("seconds") or 0.0)
                self._seconds[nodeid] = seconds
                path = nodeid.partition("::")[0]
                if entry.get("timeout") is not None:
                    self._timed_out.add(nodeid)
                    self._slowest.setdefault(path, 0.0)
                else:
                    self._slowest[path] = max(self._slowest.get(path, 0.0), seconds)
        self._ended.set()

    def seconds(self, nodeid: str) -> float | None:
        """What the item took there (waits for the plain run to end); None: not run."""
        wait_event(self._ended, None)
        return self._seconds.get(nodeid)

    def timed_out(self, nodeid: str) -> bool:
        """Whether the item timed out there (waits for the plain run to end)."""
        wait_event(self._ended, None)
        return nodeid in self._timed_out

    def known_timeouts(self) -> frozenset[str]:
        """The items that timed out there; none while it still runs (never waits)."""
        return frozenset(self._timed_out) if self._ended.is_set() else frozenset()

    def limit(self, files: Collection[str] | None, limit: float | None) -> float | None:
        """The item limit of a later run of these files (None: every file of the
        plain run): from the slowest of their items there, or `limit` while the
        plain run still runs or when one of the files did not run there (never waits)."""
        if limit is None or not self._ended.is_set():
            return limit
        paths = self._slowest.keys() if files is None else files
        slowest = [self._slowest.get(p) for p in paths]
        if not slowest or None in slowest:
            return limit
        return later_limit(limit, max(s for s in slowest if s is not None))
