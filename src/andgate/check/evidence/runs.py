"""The approval evidence's runs and its facts (`phase.py` says what it measures).

Base's side: base's edited oracle files on head's production code, without mutants
(the oracle class's runs, or one more trusted run once an owner approved), then with
each mutant. Head's side: head's edited oracle files without mutants (unapproved:
its test code runs, so after the untrusted class), then with each mutant base's
oracle killed. Each mutant runs as a known-bad replay (`replay.replay_applied`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import replace

from andgate.check.cache import KillerCache
from andgate.check.context import PhaseContext
from andgate.check.evidence.hidden import BaseOnHead, edited_items, hidden_failures, last_line
from andgate.check.evidence.inputs import Inputs
from andgate.check.evidence.mutations import (
    Mutation,
    caught_by_unedited,
    mutant_limit,
    remembered_first,
    slowest,
)
from andgate.check.evidence.stage import Stage, error_line
from andgate.check.evidence.targets import Function, choose_functions, mutants_for
from andgate.check.options import DEFAULT_EVIDENCE_BUDGET
from andgate.check.oracle.replay import replay_applied
from andgate.check.state import PhaseRuns, RunName
from andgate.plugin.classify import Rules
from andgate.process.limits import PlainRun
from andgate.process.requests import RunRequest
from andgate.process.results import RunResult
from andgate.process.run import run_pytest
from andgate.process.signals import in_background, wait_event, wait_future
from andgate.records import EvidenceFacts, HiddenFailure, Outcome, Role
from andgate.trust.config import KnownBad


class Evidence:
    """The evidence's runs on both sides, and its facts once both are done; where each
    side is queued is `sides.py`."""

    def __init__(
        self,
        ctx: PhaseContext | None = None,
        inputs: Inputs | None = None,
        *,
        budget: float = DEFAULT_EVIDENCE_BUDGET,
        facts: EvidenceFacts | None = None,
    ) -> None:
        self.ctx, self.inputs, self.budget = ctx, inputs, budget
        self._facts = facts  # when nothing runs: None, or what was not measured
        self.base = Stage()
        self.head = Stage()
        self.base_plain = PlainRun()
        self.head_plain = PlainRun()
        self.base_ready = threading.Event()
        self.head_ready = threading.Event()
        self.on_head = BaseOnHead()  # base's edited files on head's code
        self.head_outcomes: dict[str, Outcome] = {}  # head's oracle items on head's code
        self.head_failed = False  # an item of head's edited files did not pass, or errored
        self.plain_error: str | None = None  # a side's run without mutants failed
        self.plain_cut = False  # the budget ended a side's run without mutants
        self.errors: list[str] = []
        self.functions: list[Function] = []
        self.out_of_budget = False
        self.base_slowest = self.head_slowest = 0.0  # each side's slowest item without mutants
        self.lock = threading.Lock()
        # The oracle phase's runs, which the pipeline hands on once it ended (`oracle_ran`):
        # head's side and the facts read the oracle class's and base's collection there.
        self.oracle = PhaseRuns()
        self._mutations: Future[list[Mutation]] | None = None
        if ctx is not None and inputs is not None:  # computation only, beside the oracle phase
            self._mutations = in_background("evidence-mutants", lambda: self._make(ctx, inputs))

    @property
    def running(self) -> bool:
        return self.ctx is not None and self.inputs is not None

    # -- planning, beside the oracle phase ------------------------------------------------

    def _make(self, ctx: PhaseContext, inputs: Inputs) -> list[Mutation]:
        """The mutants, in the order they run: what was evidence last time first."""
        self.functions = choose_functions(
            inputs.production, inputs.imported, inputs.names, inputs.touched
        )
        mutants = mutants_for(self.functions, inputs.production)
        cache = KillerCache(ctx.cache_dir)
        ordered = remembered_first(mutants, cache, inputs.base_digest, inputs.head_digest)
        return [Mutation(i, m) for i, m in enumerate(ordered)]

    def mutations(self) -> list[Mutation]:
        return wait_future(self._mutations) if self._mutations is not None else []

    def fail(self, error: str, *, plain: bool = False) -> None:
        """Stated in the facts; a failed run without mutants ends the measure."""
        with self.lock:
            self.errors.append(error)
            if plain and self.plain_error is None:
                self.plain_error = error

    # -- base's side: trusted, after the oracle phase's own runs ----------------------------

    def base_plain_from(self, runs: Sequence[RunResult]) -> None:
        """Base's edited files on head's code: their outcomes, each item's time."""
        inputs = self.inputs
        assert inputs is not None
        files = set(inputs.base_files)
        self.base_plain.ended(runs)
        self.base_slowest = slowest(runs, files)
        for run in runs:
            if run.error:
                self._plain_failed(self.base, f"base's oracle files on head's code: {run.error}")
                continue
            for item in run.selected(Role.ORACLE):
                if item.facts.path in files:
                    self.on_head.outcomes[item.facts.nodeid] = run.outcome(item.facts.nodeid)
                    self.on_head.messages[item.facts.nodeid] = run.message(item.facts.nodeid)
            for where, message in run.collection_errors:
                if where.split("::", 1)[0] in files:
                    self.on_head.broken[where.split("::", 1)[0]] = last_line(message)
        self.base_ready.set()

    def run_base_plain(self) -> None:
        """Approved: the oracle class ran head's test side, so base's edited files run
        on head's code once more, in the tree the check trusts when unapproved."""
        ctx, inputs = self.ctx, self.inputs
        assert ctx is not None and inputs is not None
        request = self._base_request("evidence base")
        try:
            with ctx.pool.lease(inputs.base_tree, verified=True, label=request.label) as worktree:
                stop = self.base.deadline
                result = run_pytest(request, worktree.path, ctx.scratch, ctx.timeout, stop)
            if result.tampered:
                why = f"base's oracle run loaded other test-side code: {result.tampered[0]}"
                self.fail(why, plain=True)
            else:
                self.base_plain_from([result])
        finally:
            self.base_ready.set()  # whatever happened, no job waits for ever

    def _plain_failed(self, stage: Stage, error: str) -> None:
        """A side's run without mutants did not end: the budget (nothing more is
        tried) or an error (stated)."""
        if stage.deadline.is_set():
            self.out_of_budget = self.plain_cut = True
        else:
            self.fail(f"could not run {error}", plain=True)

    def _base_request(self, label: str) -> RunRequest:
        ctx, inputs = self.ctx, self.inputs
        assert ctx is not None and inputs is not None
        on_base = [p for p in inputs.base_files if p in ctx.plan.base_oracle_files]
        return RunRequest(
            label,
            Role.ORACLE,
            ctx.plan.base_oracle_rules,
            allow_files=tuple(on_base),
            environment=ctx.state.environment,
            integrity=inputs.base_expected,
        )

    def base_side(self, mutation: Mutation) -> None:
        """Base's edited files on head's code with the mutant: which items kill it."""
        ctx, inputs = self.ctx, self.inputs
        assert ctx is not None and inputs is not None
        wait_event(self.base_ready)
        if self.plain_error or self.plain_cut or not self._started(self.base):
            return
        outcomes = self.on_head.outcomes
        passing = {n for n, o in outcomes.items() if o is Outcome.PASSED}
        if not passing:
            mutation.base_killers = ()  # nothing of base's passes: nothing to kill it
            return
        request = replace(
            self._base_request(f"evidence base {mutation.index}"),
            skip_items=tuple(sorted(n for n in outcomes if n not in passing)),
            item_timeout=self._mutant_limit(self.base_slowest),
        )
        killers = self._replay(mutation, inputs.base_tree, request, inputs.base_digest, self.base)
        if killers is None:
            return
        mutation.base_killers = killers
        if caught_by_unedited(killers, inputs.edited):
            mutation.head_caught = True  # the same test, unchanged on head, catches it there

    def _mutant_limit(self, slowest: float) -> float:
        """An item's limit under a mutant (`mutant_limit`), within the check's."""
        ctx = self.ctx
        assert ctx is not None
        return mutant_limit(ctx.state.environment.item_timeout, slowest)

    def _started(self, stage: Stage) -> bool:
        if stage.deadline.is_set():
            self.out_of_budget = True
            return False
        return True

    def _replay(
        self,
        mutation: Mutation,
        commit: str,
        request: RunRequest,
        oracle_digest: str,
        stage: Stage,
    ) -> tuple[str, ...] | None:
        """One side's run on the mutant (as a known-bad replay): the items that failed,
        or None when it did not run to the end."""
        ctx = self.ctx
        assert ctx is not None
        mutant = mutation.mutant
        patch = ctx.scratch / f"evidence-{mutation.index}.patch"
        patch.write_bytes(mutant.patch)
        trusted = request.integrity is not None
        with ctx.pool.lease(commit, verified=trusted, label=request.label) as worktree:
            problem = worktree.apply_patch(patch)
            if problem is not None:
                self.fail(f"the mutant {mutant.name} does not apply: {problem}")
                return None
            if request.integrity is not None:
                expected = request.integrity.patched(worktree.path, worktree.patched)
                request = replace(request, integrity=expected)
            facts = replay_applied(
                KnownBad(mutant.name, mutant.path, mutant.patch),
                mutation.index,
                worktree.path,
                oracle_request=request,
                scratch=ctx.scratch,
                timeout=ctx.timeout,
                cache=KillerCache(ctx.cache_dir),
                oracle_digest=oracle_digest,
                plain=self.base_plain if stage is self.base else self.head_plain,
                label=request.label,
                stop=stage.deadline,
                # A mutant that makes an item hang is common; each would cost its limit
                # twice. Both sides run under the same short limit instead.
                confirm=False,
            )
        if facts.error:
            if stage.deadline.is_set():
                self.out_of_budget = True
            else:
                self.fail(f"{request.label} ({mutant.name}): {facts.error}")
            return None
        if facts.tampered:
            self.fail(f"{request.label} loaded other test-side code: {facts.tampered[0]}")
            return None
        return facts.failed

    # -- head's side: after the untrusted class's runs --------------------------------------

    def oracle_ran(self, runs: PhaseRuns) -> None:
        """The oracle phase's runs, as it returned them (before head's side starts)."""
        self.oracle = runs

    def run_head_plain(self) -> None:
        """Unapproved: head's edited oracle files on head's code (its test code runs)."""
        ctx, inputs = self.ctx, self.inputs
        assert ctx is not None and inputs is not None
        request = replace(self._head_request("evidence head"), allow_files=inputs.head_files)
        try:
            with ctx.pool.lease(ctx.plan.head, label=request.label) as worktree:
                stop = self.head.deadline
                result = run_pytest(request, worktree.path, ctx.scratch, ctx.timeout, stop)
            oracle = self.oracle.get(RunName.ORACLE)
            self.head_plain_from([r for r in (oracle, result) if r is not None], result)
        finally:
            self.head_ready.set()

    def head_plain_from_class(self) -> None:
        """Approved (or head kept none of the edited files): the oracle class's run is
        head's own."""
        ctx = self.ctx
        assert ctx is not None
        oracle = self.oracle.get(RunName.ORACLE)
        if oracle is not None:
            self.head_plain_from([oracle], oracle if ctx.approved else None)
        else:
            self.fail("the oracle class did not run", plain=True)
        self.head_ready.set()

    def head_plain_from(self, runs: Sequence[RunResult], own: RunResult | None) -> None:
        """Head's oracle items on head's code: `own` is the run of head's edited files
        (the oracle class itself once approved; None: head kept none of them); the
        other runs' items count for the files it did not run."""
        inputs = self.inputs
        assert inputs is not None
        self.head_plain.ended(runs)
        self.head_slowest = slowest(runs, None)
        if own is not None and own.error:
            self._plain_failed(self.head, f"head's edited oracle files: {own.error}")
            return
        # Unapproved, the oracle class ran base's versions of the edited files (and of
        # those head deleted or renamed): head's own run speaks for those.
        theirs = {*inputs.head_files, *inputs.base_files}
        for run in runs:
            for item in run.selected(Role.ORACLE):
                nodeid, path = item.facts.nodeid, item.facts.path
                if run is not own and path in theirs:
                    continue
                self.head_outcomes[nodeid] = run.outcome(nodeid)
        edited = set(inputs.head_files)
        self.head_failed = bool(own is not None and own.collection_errors) or any(
            o is not Outcome.PASSED
            for n, o in self.head_outcomes.items()
            if n.split("::", 1)[0] in edited
        )

    def _head_request(self, label: str) -> RunRequest:
        ctx = self.ctx
        assert ctx is not None
        rules = ctx.plan.head_rules
        return RunRequest(
            label,
            Role.ORACLE,
            Rules(oracle_files=rules.oracle_files, oracle_markers=rules.oracle_markers),
            allow_files=tuple(sorted(rules.oracle_files)),
            environment=ctx.state.environment,
        )

    def head_side(self, mutation: Mutation) -> None:
        """Head's oracle on head's code with the mutant base's oracle killed."""
        ctx, inputs = self.ctx, self.inputs
        assert ctx is not None and inputs is not None
        wait_event(self.head_ready)
        if self.plain_error or self.plain_cut or not self._started(self.head):
            return
        failing = sorted(n for n, o in self.head_outcomes.items() if o is not Outcome.PASSED)
        request = replace(
            self._head_request(f"evidence head {mutation.index}"),
            skip_items=tuple(failing),
            item_timeout=self._mutant_limit(self.head_slowest),
        )
        failed = self._replay(mutation, ctx.plan.head, request, inputs.head_digest, self.head)
        if failed is not None:
            mutation.head_caught = bool(failed)

    # -- facts ----------------------------------------------------------------------------

    def finish(self) -> EvidenceFacts | None:
        if not self.running:
            return self._facts
        ctx, inputs = self.ctx, self.inputs
        assert ctx is not None and inputs is not None
        try:
            mutations = self.mutations()
        except Exception as exc:  # a fault of the evidence's own is stated, never a GATE_ERROR
            self.fail(f"internal error while making the mutants: {error_line(exc)}")
            mutations = []
        errors = self.errors
        error = "" if not errors else errors[0]
        if len(errors) > 1:
            error += f" (and {len(errors) - 1} more)"
        return EvidenceFacts(
            edited=edited_items(inputs.edited, self.oracle.get(RunName.BASE_ORACLE)),
            files=inputs.base_files,
            error=error,
            hidden=self.hidden(),
            hidden_known=self.head_ready.is_set() and not (self.plain_error or self.plain_cut),
            weakened=tuple(m.as_weakened() for m in mutations if m.weakened),
            functions=tuple(f"{f.path}::{f.name}" for f in self.functions),
            mutants=len(mutations),
            tried=sum(m.decided for m in mutations),
            budget=self.budget,
            seconds=self.base.extra() + self.head.extra(),
            out_of_budget=self.out_of_budget or self.base.cut or self.head.cut,
            block=ctx.config.manifest.block_weakened_oracles,
        )

    def hidden(self) -> tuple[HiddenFailure, ...]:
        inputs = self.inputs
        assert inputs is not None
        if not self.head_ready.is_set() or self.plain_error or self.plain_cut:
            return ()
        deleted = {e.path for e in inputs.edited if e.head_path is None}
        return hidden_failures(self.on_head, self.head_outcomes, self.head_failed, deleted)
