"""Approval evidence: what an edit of oracle items gives up (contract section 6).

When a change edits or deletes oracle items (`edited.py`), the check runs both sides
to show an owner what approving the edit costs:

1. Failures the edit hides (`hidden.py`). Base's edited oracle files run against
   head's production code: the oracle class does that when no owner approved; once
   one did, the oracle class runs head's test side, and one more trusted run takes
   base's (the tree the check would have trusted unapproved). Each base item that
   fails there while head's edited oracle passes it, or deletes it, is evidence: on
   unchanged buggy code, this alone explains a rewrite that turns a red oracle green.
2. Mutants the edit lets through (`mutations.py`). Mutants of the production
   functions the edited items exercise and the change touched (`targets.py`) run
   base's edited files first: trusted runs, queued after the oracle phase's own, in
   memory before any test code the change wrote runs. Each mutant base's oracle kills
   then runs head's oracle files, queued after the untrusted class (they run test
   code the change wrote). One that head's oracle lets pass is evidence. Each side
   runs as a known-bad replay (`replay.replay_applied`): the killer cache's
   remembered killers (or the likely ones) first, `-x`, only the items that passed
   without the mutant, each item's limit from that run. The cache also puts the
   mutants that were evidence last time first.

It is bounded by `--evidence-budget` (`DEFAULT_EVIDENCE_BUDGET`): base's side may run
on for `sides.BASE_SHARE` of it after the oracle phase's own runs end (before that it
only takes cores they leave idle), head's side for what is left after the untrusted
class ends; a process still running at a deadline is killed, and the mutants not
decided are counted. It adds the warning ORACLE_WEAKENED (with block_weakened_oracles,
a block unless an owner approved head itself), never turns a block into an allow, and
an error in it is stated in its facts, never a GATE_ERROR (`stage.stated`). Nothing of
it runs when the change edits no oracle item.

Here: `prepare_evidence`, the entry point, and `EvidencePhase`, what the pipeline
holds. What it reads before any test runs is `inputs.py`; the runs and the facts they
give `runs.Evidence`; where each side queues `sides.py`; one side's jobs under its
deadline `stage.Stage`.
"""

from __future__ import annotations

from collections.abc import Sequence

from andgate.check.context import PhaseContext
from andgate.check.evidence.inputs import edited_in, read_inputs
from andgate.check.evidence.runs import Evidence
from andgate.check.evidence.sides import OracleSide, UntrustedSide
from andgate.check.evidence.stage import error_line
from andgate.check.options import DEFAULT_EVIDENCE_BUDGET
from andgate.errors import AndgateError
from andgate.git import Change, Git
from andgate.records import EvidenceFacts
from andgate.trust.paths import ConfigChanges


class EvidencePhase:
    """The evidence as the pipeline sees it: its two sides, each queued in its phase,
    and its facts once both are done."""

    def __init__(self, evidence: Evidence) -> None:
        self.oracle_side = OracleSide(evidence)
        self.untrusted_side = UntrustedSide(evidence)
        self.oracle_ran = evidence.oracle_ran  # the pipeline hands on the oracle phase's runs
        self.finish = evidence.finish


def prepare_evidence(
    ctx: PhaseContext,
    git: Git,
    changes: Sequence[Change],
    differs: ConfigChanges,
    *,
    budget: float | None = None,
    enabled: bool = True,
) -> EvidencePhase:
    """The evidence's runs, from what it reads now (before any test runs). Nothing
    runs when the change edits no oracle item; with `enabled` false, or on one shard
    of a check (`combine` measures it), the facts say it was not measured."""
    return EvidencePhase(_evidence(ctx, git, changes, differs, budget=budget, enabled=enabled))


def _evidence(
    ctx: PhaseContext,
    git: Git,
    changes: Sequence[Change],
    differs: ConfigChanges,
    *,
    budget: float | None,
    enabled: bool,
) -> Evidence:
    state, plan = ctx.state, ctx.plan
    if state.adopting or not plan.base_oracle_files:
        return Evidence()
    edited = edited_in(ctx, git, changes)
    if not edited:
        return Evidence()
    block = ctx.config.manifest.block_weakened_oracles
    paths = tuple(e.path for e in edited)
    if not enabled:
        facts = EvidenceFacts(files=paths, not_measured="--no-evidence", block=block)
        return Evidence(facts=facts)
    if ctx.work.split is not None and ctx.work.recorded is None:
        facts = EvidenceFacts(
            files=paths, not_measured="one shard of a check: `combine` measures it", block=block
        )
        return Evidence(facts=facts)
    budget = DEFAULT_EVIDENCE_BUDGET if budget is None else budget
    try:
        inputs = read_inputs(ctx, git, changes, differs, edited)
    except AndgateError:
        raise  # git failed: the gate's own failure
    except Exception as exc:  # a fault of the evidence's own is stated, never a GATE_ERROR
        error = f"internal error while reading its inputs: {error_line(exc)}"
        return Evidence(facts=EvidenceFacts(files=paths, error=error, budget=budget, block=block))
    return Evidence(ctx, inputs, budget=budget)
