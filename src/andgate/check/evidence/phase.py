"""Approval evidence: what an edit of oracle items gives up (contract section 6).

When a change edits or deletes oracle items (`edited.py`), the check runs both sides
to show an owner what approving the edit costs:

1. Failures the edit hides. Base's edited oracle files run against head's production
   code: the oracle class does that when no owner approved; once one did, the oracle
   class runs head's test side, and one more trusted run takes base's (the tree the
   check would have trusted unapproved). Each base item that fails there while head's
   edited oracle passes it, or deletes it, is evidence: on unchanged buggy code, this
   alone explains a rewrite that turns a red oracle green.
2. Mutants the edit lets through. Mutants of the production functions the edited
   items exercise and the change touched (`targets.py`) run base's edited files first:
   trusted runs, queued after the oracle phase's own, in memory before any test code
   the change wrote runs. Each mutant base's oracle kills then runs head's oracle
   files, queued after the untrusted class (they run test code the change wrote). One
   that head's oracle lets pass is evidence. Each side runs as a known-bad replay
   (`replay.replay_applied`): the killer cache's remembered killers (or the likely
   ones) first, `-x`, only the items that passed without the mutant, each item's limit
   from that run. The cache also puts the mutants that were evidence last time first.

It is bounded by `--evidence-budget` (`DEFAULT_EVIDENCE_BUDGET`): base's side may run on for
BASE_SHARE of it after the oracle phase's own runs end (before that it only takes
cores they leave idle), head's side for what is left after the untrusted class ends;
a process still running at a deadline is killed, and the mutants not decided are
counted. It adds the warning ORACLE_WEAKENED (with block_weakened_oracles, a block
unless an owner approved head itself), never turns a block into an allow, and an
error in it is stated in its facts, never a GATE_ERROR. Nothing of it runs when the
change edits no oracle item.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeVar

from andgate.check.cache import KillerCache, digest
from andgate.check.context import PhaseContext, after_last, is_part_of
from andgate.check.discrimination.changed_tests import changed_tests
from andgate.check.discrimination.mutate import Mutant
from andgate.check.discrimination.phase import Deadline
from andgate.check.evidence.edited import (
    EditedFile,
    conftest_reach,
    edited_files,
    helper_reach,
)
from andgate.check.evidence.imports import imported_files, parse
from andgate.check.evidence.targets import (
    Function,
    choose_functions,
    mutants_for,
    names_read_by,
    one_line,
    touched_lines,
)
from andgate.check.options import DEFAULT_EVIDENCE_BUDGET
from andgate.check.oracle.replay import replay_applied
from andgate.check.plan.trees import apply_overlay, listing, test_side_overlay
from andgate.check.state import RunName
from andgate.errors import AndgateError, Interrupted
from andgate.git import REGULAR_FILE_MODES, Change, Git, TreeEntry
from andgate.plugin.classify import Rules
from andgate.process.integrity import ExpectedTestSide, expected_files
from andgate.process.limits import LATER_FACTOR, PlainRun
from andgate.process.reaping import STOPPING
from andgate.process.requests import RunRequest
from andgate.process.results import RunResult
from andgate.process.run import run_pytest
from andgate.process.signals import in_background, wait_event, wait_future
from andgate.records import EvidenceFacts, HiddenFailure, Outcome, Role, WeakenedMutant
from andgate.trust.config import KnownBad
from andgate.trust.paths import ConfigChanges, matching

# Base's side may run on this share of the budget after the oracle phase's own runs
# end; head's side gets what is left after the untrusted class ends.
BASE_SHARE = 0.5
FAILING = {Outcome.FAILED, Outcome.ERROR}
# The least time limit of an item under a mutant (`mutant_limit`).
MUTANT_ITEM_FLOOR = 2.0
T = TypeVar("T")
Sides = Mapping[Change, tuple[bytes | None, bytes | None]]


@dataclass(frozen=True)
class Inputs:
    """What the evidence reads from git before any test runs."""

    edited: tuple[EditedFile, ...]
    head_files: tuple[str, ...]  # head's oracle files the change added or edited
    base_tree: str  # head's production code with base's test side
    base_expected: ExpectedTestSide  # what a trusted run of it may load
    production: Mapping[str, str]  # head's text of the production files read
    imported: frozenset[str]  # the production files the edited test files import
    names: frozenset[str]  # what the edited tests (and their modules' helpers) name
    touched: Mapping[str, frozenset[int]]  # production file -> lines the change touched
    base_digest: str  # the killer cache's keys: base's edited files, head's oracle files
    head_digest: str

    @property
    def base_files(self) -> tuple[str, ...]:
        """Base's edited oracle files (a deleted one included)."""
        return tuple(e.path for e in self.edited)


@dataclass
class _Mutation:
    index: int
    mutant: Mutant
    base_killers: tuple[str, ...] | None = None  # None: base's side did not run
    head_caught: bool | None = None  # None: head's side did not run

    @property
    def decided(self) -> bool:
        return self.base_killers == () or (bool(self.base_killers) and self.head_caught is not None)

    @property
    def weakened(self) -> bool:
        return bool(self.base_killers) and self.head_caught is False


@dataclass
class _Stage:
    """One side's jobs, taken in order by its workers until none is left or its
    deadline passed; the deadline is unknown (never passed) until the phase's own
    runs ended (`start`). The jobs are made by the first worker (`jobs_from`): the
    mutants may still be in the making when the phase's tasks are listed."""

    jobs: collections.deque[Callable[[], None]] = field(default_factory=collections.deque)
    make: Callable[[], Iterable[Callable[[], None]]] | None = None
    deadline: Deadline = field(default_factory=Deadline)
    started: float | None = None  # when the phase's own runs ended
    ended: float | None = None  # when its last job ended
    cut: bool = False  # the deadline passed with jobs left
    lock: threading.Lock = field(default_factory=threading.Lock)

    def jobs_from(self, make: Callable[[], Iterable[Callable[[], None]]]) -> None:
        self.make = make

    def start(self, seconds: float) -> None:
        self.started = time.monotonic()
        self.deadline.at = self.started + max(0.0, seconds)

    def next(self) -> Callable[[], None] | None:
        with self.lock:
            if self.make is not None:
                make, self.make = self.make, None
                self.jobs.extend(make())
            if self.jobs and self.deadline.is_set():
                self.cut = True
            if STOPPING.is_set() or self.deadline.is_set() or not self.jobs:
                return None
            return self.jobs.popleft()

    def worker(self, fail: Callable[[str], None]) -> None:
        """Take jobs until none is left; a job's own fault is stated (`fail`), never
        the check's GATE_ERROR."""
        while (job := stated(self.next, fail)) is not None:
            try:
                stated(job, fail)
            finally:
                with self.lock:
                    self.ended = max(self.ended or 0.0, time.monotonic())

    def extra(self) -> float:
        """What its runs took after the phase's own ended."""
        if self.started is None or self.ended is None:
            return 0.0
        return max(0.0, self.ended - self.started)


class Evidence:
    """The evidence's runs in their two places, and its facts once both are done.
    `oracle_side` is queued after the oracle phase's own runs, `untrusted_side` after
    the untrusted class's."""

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
        self.oracle_side = _OracleSide(self)
        self.untrusted_side = _UntrustedSide(self)
        self.base = _Stage()
        self.head = _Stage()
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
        self._mutations: Future[list[_Mutation]] | None = None
        if ctx is not None and inputs is not None:  # computation only, beside the oracle phase
            self._mutations = in_background("evidence-mutants", lambda: self._make(ctx, inputs))

    @property
    def running(self) -> bool:
        return self.ctx is not None and self.inputs is not None

    # -- planning, beside the oracle phase ------------------------------------------------

    def _make(self, ctx: PhaseContext, inputs: Inputs) -> list[_Mutation]:
        """The mutants, in the order they run: what was evidence last time first."""
        self.functions = choose_functions(
            inputs.production, inputs.imported, inputs.names, inputs.touched
        )
        mutants = mutants_for(self.functions, inputs.production)
        cache = KillerCache(ctx.cache_dir)
        ordered = remembered_first(mutants, cache, inputs.base_digest, inputs.head_digest)
        return [_Mutation(i, m) for i, m in enumerate(ordered)]

    def mutations(self) -> list[_Mutation]:
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
                    self.on_head.broken[where.split("::", 1)[0]] = _last_line(message)
        self.base_ready.set()

    def run_base_plain(self) -> None:
        """Approved: the oracle class ran head's test side, so base's edited files run
        on head's code once more, in the tree the check trusts when unapproved."""
        ctx, inputs = self.ctx, self.inputs
        assert ctx is not None and inputs is not None
        request = self._base_request("evidence base")
        try:
            with ctx.pool.lease(inputs.base_tree, verified=True) as worktree:
                stop = self.base.deadline
                result = run_pytest(request, worktree.path, ctx.scratch, ctx.timeout, stop)
            if result.tampered:
                why = f"base's oracle run loaded other test-side code: {result.tampered[0]}"
                self.fail(why, plain=True)
            else:
                self.base_plain_from([result])
        finally:
            self.base_ready.set()  # whatever happened, no job waits for ever

    def _plain_failed(self, stage: _Stage, error: str) -> None:
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

    def base_side(self, mutation: _Mutation) -> None:
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

    def _started(self, stage: _Stage) -> bool:
        if stage.deadline.is_set():
            self.out_of_budget = True
            return False
        return True

    def _replay(
        self,
        mutation: _Mutation,
        commit: str,
        request: RunRequest,
        oracle_digest: str,
        stage: _Stage,
    ) -> tuple[str, ...] | None:
        """One side's run on the mutant (as a known-bad replay): the items that failed,
        or None when it did not run to the end."""
        ctx = self.ctx
        assert ctx is not None
        mutant = mutation.mutant
        patch = ctx.scratch / f"evidence-{mutation.index}.patch"
        patch.write_bytes(mutant.patch)
        trusted = request.integrity is not None
        with ctx.pool.lease(commit, verified=trusted) as worktree:
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

    def run_head_plain(self) -> None:
        """Unapproved: head's edited oracle files on head's code (its test code runs)."""
        ctx, inputs = self.ctx, self.inputs
        assert ctx is not None and inputs is not None
        request = replace(self._head_request("evidence head"), allow_files=inputs.head_files)
        try:
            with ctx.pool.lease(ctx.plan.head) as worktree:
                stop = self.head.deadline
                result = run_pytest(request, worktree.path, ctx.scratch, ctx.timeout, stop)
            oracle = ctx.state.runs.get(RunName.ORACLE)
            self.head_plain_from([r for r in (oracle, result) if r is not None], result)
        finally:
            self.head_ready.set()

    def head_plain_from_class(self) -> None:
        """Approved (or head kept none of the edited files): the oracle class's run is
        head's own."""
        ctx = self.ctx
        assert ctx is not None
        oracle = ctx.state.runs.get(RunName.ORACLE)
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

    def head_side(self, mutation: _Mutation) -> None:
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
            self.fail(f"internal error while making the mutants: {_one_line(exc)}")
            mutations = []
        errors = self.errors
        error = "" if not errors else errors[0]
        if len(errors) > 1:
            error += f" (and {len(errors) - 1} more)"
        return EvidenceFacts(
            edited=edited_items(inputs.edited, ctx.state.runs.get(RunName.BASE_ORACLE)),
            files=inputs.base_files,
            error=error,
            hidden=self.hidden(),
            hidden_known=self.head_ready.is_set() and not (self.plain_error or self.plain_cut),
            weakened=tuple(_weakened(m) for m in mutations if m.weakened),
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


class _OracleSide:
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

    def watching_class(self, tasks: list[Callable[[], None]]) -> list[Callable[[], None]]:
        """Unapproved: the oracle class ran base's test side on head's code, so its
        runs are base's plain run."""
        evidence = self.evidence
        ctx = evidence.ctx
        if not evidence.running or ctx is None or ctx.approved:
            return tasks

        def ended() -> None:
            runs = list(ctx.state.runs.items())  # other tasks add to it
            evidence.base_plain_from([r for n, r in runs if is_part_of(RunName.ORACLE, n)])

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


class _UntrustedSide:
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

    def watching(self, tasks: list[Callable[[], None]]) -> list[Callable[[], None]]:
        evidence = self.evidence
        if not evidence.running:
            return tasks
        left = evidence.budget - evidence.base.extra()
        return after_last(tasks, lambda: evidence.head.start(left))


@dataclass
class BaseOnHead:
    """Base's edited oracle files on head's production code, without mutants."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)  # file -> its collection error

    def failure(self, nodeid: str, outcome: Outcome) -> str:
        if nodeid in self.broken:
            return f"collection error: {self.broken[nodeid]}"
        message = _last_line(self.messages.get(nodeid, ""))
        return f"{outcome.value}: {message}" if message else outcome.value


def hidden_failures(
    base: BaseOnHead,
    head: Mapping[str, Outcome],
    head_failed: bool,
    deleted: Collection[str],
) -> tuple[HiddenFailure, ...]:
    """Base's items (or files) that fail on head's code where head's oracle shows no
    failure: head passes the item, or has no such item (`deleted`: base's files
    head deleted) and passes everything it edited (`head_failed`: it did not)."""
    failing = [(n, o) for n, o in base.outcomes.items() if o in FAILING]
    failing += [(path, Outcome.ERROR) for path in base.broken]
    found = []
    for nodeid, outcome in sorted(failing):
        on_head = head.get(nodeid)
        if on_head is Outcome.PASSED:
            shown = "passes"
        elif on_head is None and (nodeid.split("::", 1)[0] in deleted or not head_failed):
            shown = "deleted"
        else:
            continue  # head's oracle shows a failure there too: nothing hidden
        found.append(HiddenFailure(nodeid, base.failure(nodeid, outcome), shown))
    return tuple(found)


def mutant_limit(check_limit: float | None, slowest: float) -> float:
    """An item's time limit under a mutant: LATER_FACTOR times the slowest item of the
    files without it, at least MUTANT_ITEM_FLOOR, at most the check's limit. Far below
    a check's own floor, and a timeout is not confirmed by a run alone: a mutant that
    loops forever is common, and would cost its limit on each side. An honest item that
    a loaded machine slows past ten times its own time (and the floor) is a wrong kill
    at worst, and head's side runs under the same limit."""
    limit = max(MUTANT_ITEM_FLOOR, LATER_FACTOR * slowest)
    return limit if check_limit is None else min(check_limit, limit)


def slowest(runs: Iterable[RunResult], files: Collection[str] | None) -> float:
    """The longest any item of `files` (None: all) took in these runs, timeouts aside."""
    return max(
        (
            float(entry.get("seconds") or 0.0)
            for run in runs
            for nodeid, entry in run.reports.items()
            if entry.get("timeout") is None and (files is None or nodeid.split("::", 1)[0] in files)
        ),
        default=0.0,
    )


def caught_by_unedited(killers: Iterable[str], edited: Sequence[EditedFile]) -> bool:
    """Whether one of base's killers is an item the change did not edit, in a file whose
    other code it did not change either: head has the same test, which catches the
    mutant there too, so head's side need not run."""
    by_path = {e.path: e for e in edited}
    for killer in killers:
        path, sep, _ = killer.partition("::")
        holder = by_path.get(path)
        if sep and holder is not None and holder.functions is not None and not holder.holds(killer):
            return True
    return False


def remembered_first(
    mutants: Sequence[Mutant], cache: KillerCache, base_digest: str, head_digest: str
) -> list[Mutant]:
    """The mutants in their order, those that were evidence last time first (base's
    side remembers a killer, head's none) and those head's oracle killed last; the
    cache only orders (a poisoned entry costs time, never a finding)."""

    def remembered(mutant: Mutant) -> int:
        base = cache.get(mutant.patch, base_digest)
        head = cache.get(mutant.patch, head_digest)
        return 0 if base and not head else 2 if head else 1

    return sorted(mutants, key=remembered)  # stable: the round-robin order within each


def _weakened(mutation: _Mutation) -> WeakenedMutant:
    mutant = mutation.mutant
    return WeakenedMutant(
        mutant.path,
        mutant.line,
        mutant.function,
        one_line(mutant),
        mutation.base_killers or (),
    )


def stated(work: Callable[[], T], fail: Callable[[str], None]) -> T | None:
    """`work()`; a fault of the evidence's own is stated (`fail`) and gives None, never
    the check's GATE_ERROR (an interruption still ends the check)."""
    try:
        return work()
    except Interrupted:
        raise
    except Exception as exc:
        fail(f"internal error: {_one_line(exc)}")
        return None


def _one_line(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0]
    return f"{exc.__class__.__name__}: {first}"


def _last_line(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[-1][:200] if lines else ""


def edited_items(edited: Sequence[EditedFile], base: RunResult | None) -> tuple[str, ...]:
    """Base's oracle items the change edits or deletes, from base's collection (the
    edited function names when it did not complete)."""
    if base is None or base.error:
        return tuple(
            f"{e.path}::{name.replace('.', '::')}"
            for e in edited
            for name in sorted(e.functions or ())
        )
    return tuple(
        i.facts.nodeid
        for i in base.selected(Role.ORACLE)
        if any(e.holds(i.facts.nodeid) for e in edited)
    )


# -- reading the inputs, before any test runs -------------------------------------------


def prepare_evidence(
    ctx: PhaseContext,
    git: Git,
    changes: Sequence[Change],
    differs: ConfigChanges,
    *,
    budget: float | None = None,
    enabled: bool = True,
) -> Evidence:
    """The evidence's runs, from what it reads now (before any test runs). Nothing
    runs when the change edits no oracle item; with `enabled` false, or on one shard
    of a check (`combine` measures it), the facts say it was not measured."""
    state, plan = ctx.state, ctx.plan
    if state.adopting or not plan.base_oracle_files:
        return Evidence()
    edited = _edited(ctx, git, changes)
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
        error = f"internal error while reading its inputs: {_one_line(exc)}"
        return Evidence(facts=EvidenceFacts(files=paths, error=error, budget=budget, block=block))
    return Evidence(ctx, inputs, budget=budget)


def _edited(ctx: PhaseContext, git: Git, changes: Sequence[Change]) -> tuple[EditedFile, ...]:
    plan, config = ctx.plan, ctx.config
    base_oracle = frozenset(plan.base_oracle_files)
    sides = {
        c: git.read_sides(plan.base, plan.head, c) for c in changes if c.old_path in base_oracle
    }
    reach = conftest_reach(changes)
    # base's oracle files can import only what base has: an added file reaches none
    helpers = [
        c.old_path
        for c in changes
        if c.old_path
        and c.status != "A"
        and c.old_path.endswith(".py")
        and config.test_side.holds(c.old_path)
        and c.old_path not in base_oracle
    ]
    if helpers:
        base_files = listing(git, plan.base)
        blobs = git.read_blobs(base_files[p].sha for p in base_oracle if p in base_files)
        sources = {p: blobs.get(base_files[p].sha, b"") for p in base_oracle if p in base_files}
        by_helper = helper_reach(sources, helpers, frozenset(base_files))

        def reached(path: str) -> bool:
            return reach(path) or by_helper(path)

        return edited_files(changes, base_oracle, sides, reached)
    return edited_files(changes, base_oracle, sides, reach)


def read_inputs(
    ctx: PhaseContext,
    git: Git,
    changes: Sequence[Change],
    differs: ConfigChanges,
    edited: tuple[EditedFile, ...],
) -> Inputs:
    plan = ctx.plan
    base_files, head_files = listing(git, plan.base), listing(git, plan.head)
    base_tree, expected = _base_tree(ctx, git, differs, base_files, head_files)
    head_oracle = frozenset(plan.head_rules.oracle_files)
    changed = {c.new_path for c in changes if c.new_path and c.status in "AMRCT"}
    ours = {e.head_path for e in edited if e.head_path}
    head_edited = tuple(sorted(p for p in head_oracle if p in changed or p in ours))
    production = _production_paths(ctx, head_files)
    tests = _test_sources(git, edited, base_files, head_files)
    imported: set[str] = set()
    names: set[str] = set()
    for path, source, functions in tests:
        tree = parse(source)
        if tree is not None:
            imported |= set(imported_files(path, tree, production))
            names |= names_read_by(tree, functions)
    touched = {
        c.new_path: frozenset(touched_lines(*git.read_sides(plan.base, plan.head, c)))
        for c in changes
        if c.new_path in production and c.status in "AMRCT"
    }
    wanted = sorted(imported | set(touched))
    blobs = git.read_blobs(head_files[p].sha for p in wanted)
    texts = {p: blobs.get(head_files[p].sha, b"").decode("utf-8", "replace") for p in wanted}
    return Inputs(
        edited=edited,
        head_files=head_edited,
        base_tree=base_tree,
        base_expected=expected,
        production=texts,
        imported=frozenset(imported),
        names=frozenset(names),
        touched=touched,
        base_digest=_digest("base", base_files, (e.path for e in edited)),
        head_digest=_digest("head", head_files, head_oracle),
    )


def _base_tree(
    ctx: PhaseContext,
    git: Git,
    differs: ConfigChanges,
    base_files: Mapping[str, TreeEntry],
    head_files: Mapping[str, TreeEntry],
) -> tuple[str, ExpectedTestSide]:
    """Head's production code with base's test side: the trusted tree of an
    unapproved check (once approved, built here, and held to its files)."""
    plan, config = ctx.plan, ctx.config
    if not ctx.approved:
        return plan.trusted, plan.test_side_files[plan.trusted]
    side = config.test_side
    overlay = test_side_overlay(base_files, head_files, side, differs)
    tree = git.commit_overlay(
        plan.head, overlay, ctx.scratch / "evidence.index", "andgate: base's test side"
    )
    files = apply_overlay(head_files, overlay)
    ctx.pool.listings[tree] = files
    expected = expected_files(git, "base", files, side, config.test_names, frozenset(base_files))
    return tree, expected


def _production_paths(ctx: PhaseContext, head_files: Mapping[str, TreeEntry]) -> frozenset[str]:
    """Head's Python production files (regular files: a link has no code to mutate)."""
    config = ctx.config
    paths = [
        p
        for p, e in head_files.items()
        if p.endswith(".py") and e.mode in REGULAR_FILE_MODES and not config.test_side.holds(p)
    ]
    if config.manifest.production_globs:
        return frozenset(matching(paths, config.manifest.production_globs))
    return frozenset(paths)


def _test_sources(
    git: Git,
    edited: Iterable[EditedFile],
    base_files: Mapping[str, TreeEntry],
    head_files: Mapping[str, TreeEntry],
) -> list[tuple[str, bytes, frozenset[str] | None]]:
    """Both sides of each edited oracle file, each with the test functions that count
    there (None: all): base's edited ones, and head's that are new or changed."""
    shas = [base_files[e.path].sha for e in edited if e.path in base_files]
    shas += [
        head_files[e.head_path].sha for e in edited if e.head_path and e.head_path in head_files
    ]
    blobs = git.read_blobs(shas)
    out: list[tuple[str, bytes, frozenset[str] | None]] = []
    for e in edited:
        before = blobs.get(base_files[e.path].sha) if e.path in base_files else None
        if before is not None:
            out.append((e.path, before, e.functions))
        if e.head_path and e.head_path in head_files:
            after = blobs.get(head_files[e.head_path].sha, b"")
            counted = None if e.functions is None else changed_tests(before, after)
            out.append((e.head_path, after, counted))
    return out


def _digest(side: str, files: Mapping[str, TreeEntry], paths: Iterable[str]) -> str:
    """The killer cache's key of one side: its files' blobs."""
    blobs = (f"{p} {files[p].sha}" for p in sorted(paths) if p in files)
    return digest([f"evidence {side}", *blobs])
