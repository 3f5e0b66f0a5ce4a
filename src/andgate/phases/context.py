"""What every phase works with, and the tasks they hand to `run_parallel`."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from andgate.config import BaseConfig
from andgate.plan import Plan
from andgate.progress import Progress
from andgate.report import merge_junit
from andgate.run import RunRequest, merge_results, run_parallel, run_pytest
from andgate.shard import shards
from andgate.state import CheckState
from andgate.worktree import WorktreePool


@dataclass(frozen=True)
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
    progress: Progress | None = None

    def run(self, phase: str, tasks: list[Callable[[], object]]) -> None:
        """Run a phase's tasks in parallel, with a status line of items done of
        total (summed over the phase's pytest processes) while they run."""
        progress = self.progress
        if progress is None:
            run_parallel(tasks, self.jobs)
            return
        progress.start(phase)
        stop = threading.Event()
        before = set(self.scratch.glob("*.progress"))
        watcher = threading.Thread(target=self._watch, args=(before, stop), daemon=True)
        watcher.start()
        try:
            run_parallel(tasks, self.jobs)
        finally:
            stop.set()
            watcher.join(timeout=5)
            self._poll(progress, before)
            progress.finish()

    def _watch(self, before: set[Path], stop: threading.Event) -> None:
        while not stop.wait(0.5) and self.progress is not None:
            self._poll(self.progress, before)

    def _poll(self, progress: Progress, before: set[Path]) -> None:
        done = total = 0
        for path in set(self.scratch.glob("*.progress")) - before:
            with contextlib.suppress(OSError, ValueError):
                a, b = path.read_text(encoding="utf-8").split()
                done, total = done + int(a), total + int(b)
        progress.set(done, total or None)

    def task(self, name: str, request: RunRequest, commit: str) -> Callable[[], None]:
        """Run `request` in a pooled worktree of `commit`; keep its result as `name`."""

        def run() -> None:
            with self.pool.lease(commit) as worktree:
                result = run_pytest(request, worktree.path, self.scratch, self.timeout)
                self.state.runs[name] = result

        return run

    def shard_tasks(
        self,
        name: str,
        request: RunRequest,
        commit: str,
        sizes: Mapping[str, int],
        last_preload: int = 0,
    ) -> list[Callable[[], None]]:
        """One task per shard of a class; a single shard runs under the class's own name."""
        parts = shards(sizes, self.jobs, last_preload)
        if len(parts) == 1:
            return [self.task(name, request, commit)]
        return [
            self.task(
                f"{name}.{s.index}",
                replace(request, label=f"{request.label} {s.index}", shard=s),
                commit,
            )
            for s in parts
        ]

    def merge_shards(self, name: str, count: int) -> None:
        """Fold shard results into one per class; their JUnit files become one file."""
        state = self.state
        if count <= 1:
            state.capture()
            return
        names = [f"{name}.{i}" for i in range(count)]
        state.runs[name] = merge_results(name, [state.runs[n] for n in names])
        state.capture()
        documents = [state.captured.files.pop(f"{n}.junit", None) for n in names]
        if all(d is not None for d in documents):
            merged = merge_junit(documents)  # type: ignore[arg-type]
            if merged is not None:
                state.captured.files[f"{name}.junit"] = merged
        for n in names:
            del state.runs[n]
