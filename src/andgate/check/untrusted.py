"""The untrusted phase: the untrusted class, split by file over `--jobs`
processes, and the frozen_flake class beside it, all in worktrees of head."""

from __future__ import annotations

from dataclasses import dataclass

from andgate.check.context import PhaseContext
from andgate.check.discrimination.phase import Discrimination
from andgate.check.state import PhaseRuns, RunKey, RunName
from andgate.check.units import FLAKE
from andgate.plugin.shard import STARTUP_BYTES
from andgate.process.requests import RunRequest
from andgate.process.results import class_facts
from andgate.records import ClassFacts, Role


@dataclass(frozen=True)
class UntrustedOutcome:
    """What the untrusted phase found, and its runs (untrusted, frozen_flake)."""

    facts: ClassFacts
    runs: PhaseRuns


def run_untrusted_phase(
    ctx: PhaseContext, beside: Discrimination | None = None, waited: float = 0.0
) -> UntrustedOutcome:
    """The untrusted and frozen_flake classes; `beside`: the discrimination report's
    runs (the same trust), queued after theirs in the same pool. `waited`: the seconds
    the earlier phases' runs spent on items that timed out (the report's budget
    leaves them out)."""
    plan, state = ctx.plan, ctx.state
    request = RunRequest(
        "untrusted",
        Role.UNTRUSTED,
        plan.head_rules,
        deny_files=plan.untrusted_deny,
        junit_name="untrusted.xml",
        environment=state.environment,
    )
    flake_weight = sum(plan.flake_sizes.values()) + STARTUP_BYTES if plan.flake_candidates else 0
    tasks = ctx.class_tasks(
        RunName.UNTRUSTED, request, plan.head, plan.untrusted_sizes, last_preload=flake_weight
    )
    if beside is not None:
        tasks = beside.watching(tasks, ctx.runs, waited)
    if plan.flake_candidates and ctx.mine(FLAKE):
        flake = RunRequest(
            "flake",
            Role.FROZEN_FLAKE,
            plan.head_rules,
            allow_files=plan.flake_candidates,
            junit_name="flake.xml",
            environment=state.environment,
        )
        if ctx.work.recorded is not None:
            task = ctx.recorded_task(FLAKE, RunKey(RunName.FLAKE))
        else:
            task = ctx.task(RunKey(RunName.FLAKE), flake, plan.head)
            ctx.units_ran[FLAKE] = RunKey(RunName.FLAKE)
        tasks.append(task)  # after the shards: the last, lighter one ends first and takes it
    ctx.run(
        "untrusted phase",
        [*tasks, *(beside.tasks if beside is not None else [])],
        counted="untrusted",
    )
    ctx.merge_class(RunName.UNTRUSTED)
    flake_run = ctx.runs.get(RunKey(RunName.FLAKE))
    if flake_run is not None and flake_run.error:
        state.gate_errors.append(flake_run.error)
    facts = class_facts(ctx.runs.get(RunKey(RunName.UNTRUSTED)), Role.UNTRUSTED)
    return UntrustedOutcome(facts, ctx.results())
