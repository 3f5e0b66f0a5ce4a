"""The approval evidence's two sides as the phases they are queued in see them: base's
side after the oracle phase's own runs (`oracle.phase.OracleBeside`: trusted, before
any test code the change wrote runs), head's side after the untrusted class's
(`context.Beside`: it runs head's test code). Each side's budget starts when the
runs it follows have ended."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from andgate.check.context import after_last
from andgate.check.evidence.runs import Evidence
from andgate.check.evidence.stage import stated
from andgate.check.state import RunKey, RunName
from andgate.process.results import RunResult

# Base's side may run on this share of the budget after the oracle phase's own runs
# end; head's side gets what is left after the untrusted class ends.
BASE_SHARE = 0.5


class OracleSide:
    """Base's side, queued after the oracle phase's own runs (`OracleBeside`)."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence

    @property
    def tasks(self) -> list[Callable[[], None]]:
        evidence = self.evidence
        ctx = evidence.ctx
        if not evidence.running or ctx is None:
            return []

        def jobs() -> list[Callable[[], None]]:
            made = [evidence.run_base_plain] if ctx.approved else []
            return made + [partial(evidence.base_side, m) for m in evidence.mutations()]

        evidence.base.jobs_from(jobs)
        return [partial(evidence.base.worker, evidence.fail) for _ in range(max(1, ctx.jobs))]

    def watching_class(
        self, tasks: list[Callable[[], None]], runs: Mapping[RunKey, RunResult]
    ) -> list[Callable[[], None]]:
        """Unapproved: the oracle class ran base's test side on head's code, so its
        runs (of the oracle phase's `runs`) are base's plain run."""
        evidence = self.evidence
        ctx = evidence.ctx
        if not evidence.running or ctx is None or ctx.approved:
            return tasks

        def ended() -> None:
            ran = list(runs.items())  # other tasks add to it
            evidence.base_plain_from([r for k, r in ran if k.kind == RunName.ORACLE])

        def told() -> None:
            try:
                stated(ended, evidence.fail)
            finally:
                evidence.base_ready.set()  # no job waits for ever

        return after_last(tasks, told)

    def watching_all(self, tasks: list[Callable[[], object]]) -> list[Callable[[], object]]:
        evidence = self.evidence
        if not evidence.running:
            return tasks
        return after_last(tasks, lambda: evidence.base.start(BASE_SHARE * evidence.budget))


class UntrustedSide:
    """Head's side, queued after the untrusted class's runs (`context.Beside`)."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence

    @property
    def tasks(self) -> list[Callable[[], None]]:
        return stated(self._tasks, self.evidence.fail) or []

    def _tasks(self) -> list[Callable[[], None]]:
        evidence = self.evidence
        ctx, inputs = evidence.ctx, evidence.inputs
        if not evidence.running or ctx is None or inputs is None:
            return []
        jobs: list[Callable[[], None]] = []
        if ctx.approved or not inputs.head_files:
            # the oracle class ran head's oracle files (or head edited none it kept)
            evidence.head_plain_from_class()
        else:
            jobs.append(evidence.run_head_plain)
        killed = [m for m in evidence.mutations() if m.base_killers and m.head_caught is None]
        jobs += [partial(evidence.head_side, m) for m in killed]
        if not jobs:
            return []
        evidence.head.jobs_from(lambda: jobs)
        workers = max(1, min(ctx.jobs, len(jobs)))
        return [partial(evidence.head.worker, evidence.fail) for _ in range(workers)]

    def watching(
        self, tasks: list[Callable[[], None]], runs: Mapping[RunKey, RunResult]
    ) -> list[Callable[[], None]]:
        evidence = self.evidence
        if not evidence.running:
            return tasks
        left = evidence.budget - evidence.base.extra()
        return after_last(tasks, lambda: evidence.head.start(left))
