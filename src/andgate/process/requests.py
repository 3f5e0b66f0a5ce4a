"""What one pytest process is asked to do (`RunRequest`), in which environment, and
the timeouts it runs under.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from andgate.plugin.classify import Rules
from andgate.plugin.shard import Shard
from andgate.process.installed import InstalledProject
from andgate.process.integrity import ExpectedTestSide
from andgate.records import (
    Role,
)

# The spec path and pytest's arguments reach the process on its stdin, not its
# command line: code under test finds no andgate flag in sys.argv or in
# /proc/self/cmdline (xdist hands pytest's arguments to its workers over its own
# channel), and no ANDGATE_* variable in its environment.
# os._exit: by the time pytest.main returns, the results file, the JUnit file
# and the log are written and closed; skipping interpreter finalization saves
# 0.2-0.7 s per process, and a test's leftover non-daemon thread cannot keep
# the process alive until the timeout.
DEFAULT_TIMEOUT = 1800.0


# Each test item's limit (`check --item-timeout`): an item that loops forever fails,
# named, within a minute instead of costing the process its whole `--timeout`. A
# user may not go below the floor: a loaded CI machine slows honest items down.
DEFAULT_ITEM_TIMEOUT = 60.0


ITEM_TIMEOUT_FLOOR = 30.0


# Processes whose passes count: only the plugins base declares load there.
TRUSTED_ROLES = frozenset({Role.ORACLE, Role.PROPERTY})


class Stop(Protocol):
    """Something that says when a run must end (a `threading.Event`, a deadline)."""

    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class RunEnvironment:
    """What every pytest process of one check shares: the user's checkout (so
    imports pointing into it are redirected to the worktree), the project's
    installed import names, and the environment names kept from test code."""

    checkout: Path | None = None
    project: InstalledProject = field(default_factory=InstalledProject)
    scrub_env: tuple[str, ...] = ()
    # The project's own `pytest11` entry points that base does not declare: never
    # loaded by a trusted (oracle, property, replay) process (`project_plugins`).
    head_only_plugins: tuple[str, ...] = ()
    # What the project's installed distributions run at start-up besides the standard
    # editable hook (read while planning, before any test runs): PRODUCTION_SUSPICIOUS.
    startup_hooks: tuple[str, ...] = ()
    # Each test item's time limit in seconds (None: only the process's `--timeout`).
    item_timeout: float | None = None


@dataclass(frozen=True)
class RunRequest:
    """What one pytest process must do."""

    label: str
    role: Role
    rules: Rules
    allow_files: tuple[str, ...] | None = None
    deny_files: tuple[str, ...] = ()
    # Files whose items run first, in collection order, then the rest (a replay's
    # likely killers, `replay_order`): an ordering only, every item still runs.
    first_files: tuple[str, ...] = ()
    collect_only: bool = False
    exitfirst: bool = False
    # A run whose failures are the expected outcome (a known-bad replay, a
    # discrimination run): only which items failed is read, never how.
    failures_expected: bool = False
    # Without the distribution the user's config asks for (`-n 0`): its xdist
    # workers collected different items (see `run_pytest`).
    xdist_off: bool = False
    hypothesis_seed: int | None = None
    junit_name: str | None = None
    shard: Shard | None = None
    environment: RunEnvironment = field(default_factory=RunEnvironment)
    # Only these node ids run, and only they are recorded (the oracle items skipped on
    # head, run again on base; a replay's timed-out item, rerun alone): pytest collects
    # just their functions, the plugin keeps just these ids. Or all items but `skip_items`.
    only_items: tuple[str, ...] | None = None
    skip_items: tuple[str, ...] = ()
    item_timeout: float | None = None  # this run's limit, when not the environment's
    # A trusted run's test side (oracle, property, replay, every run of base): the
    # process compiles its worktree's modules from bytes it reads and records them,
    # the gate holds them against these files (`integrity.judge`), and a reused
    # worktree is verified before it runs (`WorktreePool.lease`). None: untrusted.
    integrity: ExpectedTestSide | None = None

    @property
    def item_limit(self) -> float | None:
        return self.item_timeout if self.item_timeout is not None else self.environment.item_timeout
