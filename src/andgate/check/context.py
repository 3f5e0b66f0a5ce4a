"""What every phase works with, and the tasks they hand to `run_parallel`."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypeVar

from andgate.check.plan.trees import Plan
from andgate.check.state import CheckState, PhaseRuns, RunKey, RunName
from andgate.check.units import Unit
from andgate.check.work import Work
from andgate.plugin.shard import MIN_BYTES_PER_SHARD, shards
from andgate.process.requests import TRUSTED_ROLES, RunRequest
from andgate.process.results import RunResult, merge_results
from andgate.process.run import run_parallel, run_pytest
from andgate.process.worktree import WorktreePool
from andgate.report.artifacts import merge_junit
from andgate.report.progress import Progress
from andgate.trust.config import BaseConfig

T = TypeVar("T")


class Beside(Protocol):
    """Runs a phase queues after its own, in its pool (the discrimination report, the
    approval evidence), told when the phase's own runs end."""

    @property
    def tasks(self) -> Sequence[Callable[[], None]]: ...

    def watching(
        self, tasks: list[Callable[[], None]], runs: Mapping[RunKey, RunResult]
    ) -> list[Callable[[], None]]:
        """The phase's own tasks, wrapped to say when the last of them ended; `runs`:
        the phase's, which its tasks fill."""
        ...


@dataclass(frozen=True, kw_only=True)
class PhaseContext:
    """One check's plan, base config, worktrees, scratch folder, limits and state."""

    plan: Plan
    config: BaseConfig
    pool: WorktreePool
    scratch: Path
    state: CheckState
    jobs: int
    timeout: float
    cache_dir: Path | None
    approved: bool
    work: Work
    progress: Progress | None = None
    # The project's pytest config starts xdist workers: each unit then runs in one
    # process (its workers use the cores) instead of one per job with workers each.
    user_xdist: bool = False
    # What the phase given this context ran so far (`for_phase`: none), written by its
    # tasks and handed back by `results`; no other phase reads it.
    runs: dict[RunKey, RunResult] = field(default_factory=dict)
    units_ran: dict[str, RunKey] = field(default_factory=dict)  # unit -> its run

    def for_phase(self) -> PhaseContext:
        """This context for one phase: its runs are its own, from none."""
        return replace(self, runs={}, units_ran={})

    def results(self) -> PhaseRuns:
        """What this phase ran, read-only, for the pipeline to hand on."""
        return PhaseRuns.of(self.runs, self.units_ran)

    def capture(self) -> None:
        """This phase's logs and JUnit files, copied before a less trusted phase runs."""
        self.state.captured.collect(self.runs)

    def run(
        self, phase: str, tasks: Sequence[Callable[[], object]], counted: str | None = None
    ) -> None:
        """Run a phase's tasks in parallel, with a status line of items done of
        total while they run. `counted`: the class whose processes the line counts (its
        request label), so that the count is the class's items, the number the summary
        shows, and not the replays', base's collection's or the discrimination runs'
        beside them; None: every process of the phase."""
        progress = self.progress
        if progress is None:
            run_parallel(tasks, self.jobs)
            return
        progress.start(phase if counted is None else f"{phase}, {counted} items")
        stop = threading.Event()
        before = set(self.scratch.glob("*.progress"))
        watch = (before, counted)
        watcher = threading.Thread(target=self._watch, args=(watch, stop), daemon=True)
        watcher.start()
        try:
            run_parallel(tasks, self.jobs)
        finally:
            stop.set()
            watcher.join(timeout=5)
            self._poll(progress, watch)
            progress.finish()

    def _watch(self, watch: tuple[set[Path], str | None], stop: threading.Event) -> None:
        while not stop.wait(0.5) and self.progress is not None:
            self._poll(self.progress, watch)

    def _poll(self, progress: Progress, watch: tuple[set[Path], str | None]) -> None:
        before, counted = watch
        done = total = 0
        for path in set(self.scratch.glob("*.progress")) - before:
            if counted is not None and not _of_class(path.name, counted):
                continue
            with contextlib.suppress(OSError, ValueError):
                a, b = path.read_text(encoding="utf-8").split()
                done, total = done + int(a), total + int(b)
        progress.set(done, total or None)

    def task(self, name: RunKey, request: RunRequest, commit: str) -> Callable[[], None]:
        """Run `request` in a pooled worktree of `commit`; keep its result as `name`.
        A trusted run gets `commit`'s test side to be held to (`trusted`)."""
        request = self.trusted(request, commit)

        def run() -> None:
            verified = request.integrity is not None
            with self.pool.lease(commit, verified=verified, label=request.label) as worktree:
                result = run_pytest(request, worktree.path, self.scratch, self.timeout)
                self.runs[name] = result

        return run

    def trusted(self, request: RunRequest, commit: str) -> RunRequest:
        """An oracle or property request (every run of base included) with the test
        side of `commit` it must load (contract section 4, step 4); others unchanged."""
        if request.role not in TRUSTED_ROLES or request.integrity is not None:
            return request
        return replace(request, integrity=self.plan.test_side_files[commit])

    # -- units: a class split by file over CI machines, then over this one's cores ----

    def mine(self, unit: str) -> bool:
        """Whether this process runs (or, combining, reads back) `unit`."""
        return self.work.mine(unit)

    def unit_key(self, kind: RunName, unit: Unit) -> RunKey:
        """A class unit's run: the class's own when the class is one unit."""
        return RunKey(kind, None if self.work.single(kind) else unit.index)

    def class_tasks(
        self,
        kind: RunName,
        request: RunRequest,
        commit: str,
        sizes: Mapping[str, int],
        last_preload: int = 0,
        min_bytes: int = MIN_BYTES_PER_SHARD,
    ) -> list[Callable[[], None]]:
        """The tasks of this machine's units of a class: each unit split by file over
        `--jobs` processes (one process: it runs under the unit's own name), each
        with at least `min_bytes` of source."""
        tasks = []
        siblings = self.work.units_of(kind)
        for number, unit in enumerate(siblings, 1):
            key = self.unit_key(kind, unit)
            if not self.mine(unit.name):
                continue
            if self.work.recorded is not None:
                tasks.append(self.recorded_task(unit.name, key))
                continue
            label = (
                request.label
                if len(siblings) == 1
                else f"{request.label} part {number}/{len(siblings)}"
            )
            jobs = 1 if self.user_xdist else self.jobs
            parts = shards(sizes, jobs, last_preload, within=unit.shard, min_bytes=min_bytes)
            if len(parts) == 1:
                tasks.append(
                    self.task(key, replace(request, label=label, shard=unit.shard), commit)
                )
                continue
            tasks += [
                self.task(
                    replace(key, process=s.index),
                    replace(request, label=f"{label} {s.index}", shard=s),
                    commit,
                )
                for s in parts
            ]
        return tasks

    def recorded_task(self, unit: str, key: RunKey) -> Callable[[], None]:
        """Combining: the unit's result as its bundle recorded it."""
        recorded = self.work.recorded
        assert recorded is not None

        def load() -> None:
            self.runs[key] = recorded.runs[unit]
            self.units_ran[unit] = key

        return load

    def merge_class(self, kind: RunName) -> None:
        """Fold each unit's processes into one result, then the units into the
        class's; the JUnit files are folded alike. A class none of whose units ran
        here (another machine's) has no result."""
        self.capture()
        keys = []
        for unit in self.work.units_of(kind):
            key = self.unit_key(kind, unit)
            parts = sorted(
                (k for k in self.runs if k.process is not None and k.whole() == key),
                key=lambda k: k.process or 0,
            )
            if parts:
                self._fold(key, parts)
            if key in self.runs:
                self.units_ran.setdefault(unit.name, key)
                keys.append(key)
        if keys and keys != [RunKey(kind)]:
            self._fold(RunKey(kind), keys, keep_parts=True)

    def _fold(self, key: RunKey, parts: list[RunKey], keep_parts: bool = False) -> None:
        captured = self.state.captured
        self.runs[key] = merge_results(str(key), [self.runs[k] for k in parts])
        take = captured.files.get if keep_parts else captured.files.pop
        documents = [take(f"{k}.junit", None) for k in parts]
        if all(d is not None for d in documents):
            merged = merge_junit(documents)  # type: ignore[arg-type]
            if merged is not None:
                captured.put(key, "junit", merged)
        if not keep_parts:
            for k in parts:
                del self.runs[k]


def _of_class(progress_file: str, label: str) -> bool:
    """Whether a progress file is a process of the class `label` (`oracle`: the class
    itself, its shards `oracle 1` and its units `oracle part 1/2`; never `base oracle` or
    `known-bad 0`): as `process.run.run_pytest` names it from the request's label."""
    stem = progress_file.removesuffix(".results.json.progress")
    return stem == label or stem.startswith(f"{label}-")


def after_last(tasks: list[Callable[[], T]], then: Callable[[], None]) -> list[Callable[[], T]]:
    """`tasks`, each wrapped so that `then` runs once, when the last of them has ended
    (however it ended); at once when there are none."""
    if not tasks:
        then()
        return tasks
    left, lock = [len(tasks)], threading.Lock()

    def watched(task: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            try:
                return task()
            finally:
                with lock:
                    left[0] -= 1
                    last = left[0] == 0
                if last:
                    then()

        return run

    return [watched(t) for t in tasks]
