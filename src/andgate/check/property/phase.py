"""The property phase: the change's accepted property files, sharded by file.

Property files are written by the change's author: they run only after every
oracle-side result is in memory (their import-time code could otherwise rewrite
a results file or a sibling worktree), and before any untrusted code can touch
their own results.
"""

from __future__ import annotations

from dataclasses import dataclass

from andgate.check.context import PhaseContext
from andgate.check.property.seeds import property_facts
from andgate.check.state import PhaseRuns, RunKey, RunName
from andgate.process.requests import RunRequest
from andgate.records import PropertyFacts, Role


@dataclass(frozen=True)
class PropertyOutcome:
    """What the property phase found, and its runs."""

    facts: PropertyFacts
    runs: PhaseRuns


def run_property_phase(ctx: PhaseContext) -> PropertyOutcome:
    plan, state, manifest = ctx.plan, ctx.state, ctx.config.manifest
    if plan.property_files:
        request = RunRequest(
            "property",
            Role.PROPERTY,
            plan.property_rules,
            allow_files=plan.property_files,
            hypothesis_seed=state.property_seed,
            junit_name="property.xml",
            environment=state.environment,
        )
        # The phase runs alone: a second process costs a start-up on a core that would
        # idle, and a property file's seeds or examples make its bytes slow to run.
        tasks = ctx.class_tasks(
            RunName.PROPERTY, request, plan.property_tree, plan.property_sizes, min_bytes=0
        )
        ctx.run("property phase", tasks, counted="property")
        ctx.merge_class(RunName.PROPERTY)
    facts = property_facts(
        ctx.runs.get(RunKey(RunName.PROPERTY)),
        plan.property_files,
        required=manifest.require_property_class,
        every_candidate_counts=not manifest.property.markers,
        empty_because=ctx.config.invariants_problem(f" (at {plan.base[:12]})") or "",
    )
    ctx.capture()
    return PropertyOutcome(facts, ctx.results())
