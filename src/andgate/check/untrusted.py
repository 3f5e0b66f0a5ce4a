"""The untrusted phase: the untrusted class, split by file over `--jobs`
processes, and the frozen_flake class beside it, all in worktrees of head."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from andgate.check.context import Beside, PhaseContext
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


def run_untrusted_phase(ctx: PhaseContext, beside: Sequence[Beside] = ()) -> UntrustedOutcome:
    """The untrusted and frozen_flake classes; `beside`: the discrimination report's
    runs and the approval evidence's head side (no more trusted), queued after
    theirs in the same pool, each told the phase's runs when the untrusted class's
    runs ended."""
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
    for other in beside:
        tasks = other.watching(tasks, ctx.runs)
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
        [*tasks, *(task for other in beside for task in other.tasks)],
        counted="untrusted",
    )
    ctx.merge_class(RunName.UNTRUSTED)
    flake_run = ctx.runs.get(RunKey(RunName.FLAKE))
    if flake_run is not None and flake_run.error:
        state.gate_errors.append(flake_run.error)
    facts = class_facts(ctx.runs.get(RunKey(RunName.UNTRUSTED)), Role.UNTRUSTED)
    return UntrustedOutcome(facts, ctx.results())
