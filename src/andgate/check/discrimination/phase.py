"""Do the tests a change adds discriminate anything? (AGENT_TESTS_DISCRIMINATE_NOTHING)

The untrusted test items in files the change added or edited run again against
broken versions of head: small mutants (`mutate.py`) of the production lines the
change touched, then each known-bad fixture, until every item has failed against one
of them. The report covers those items that passed on head; one that fails under none
of the broken versions would pass against broken code too.
These runs are untrusted like the untrusted phase, and run in its pool, queued after
its processes (worktrees of head, only the change's test files; the items that passed
on head are known once both are done). They are bounded by a wall-clock budget that
starts when the untrusted class's last process ends (before that they only take
cores the class leaves idle): by default a quarter of the time the classes took, from
5 s to a minute (`default_budget`). When it runs out, the breakages still running are
killed (within `run.STOP_POLL`) and those not started are not; the report names
them. They can only add a warning (or, with `require_discriminating_tests: true`, a
block, also when the budget ran out before an item was shown to discriminate: what
was not tried is not a pass): never turn a block into an allow.
"""

from __future__ import annotations

import difflib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from andgate.check.context import PhaseContext, after_last
from andgate.check.discrimination.changed_tests import changed_tests, item_name
from andgate.check.discrimination.mutate import mutants_of
from andgate.check.state import RunKey, RunName
from andgate.git import REGULAR_FILE_MODES, Change, Git
from andgate.process.limits import PlainRun, timed_out_seconds
from andgate.process.requests import RunRequest
from andgate.process.results import RunResult
from andgate.process.run import run_pytest
from andgate.records import DiscriminationFacts, Outcome, ReplayFacts, Role

MAX_MUTANTS = 4
BREAKS = {Outcome.FAILED, Outcome.ERROR, Outcome.RERUN_PASSED}
# The default budget: this share of the classes' wall time, at most MAX_BUDGET seconds.
# The report is a warning: it must not cost more than a fraction of the check.
BUDGET_SHARE = 0.25
MAX_BUDGET = 60.0
# At least this long: a quarter of a small suite's time is less than one pytest start-up,
# and a report that can try nothing only says so.
MIN_BUDGET = 5.0


def default_budget(classes_seconds: float) -> float:
    """The report's budget when none is given: a quarter of the classes' time, at least
    MIN_BUDGET and at most a minute (a 3-line fix once spent twenty suites' time on a
    warning)."""
    return max(MIN_BUDGET, min(MAX_BUDGET, BUDGET_SHARE * classes_seconds))


class Deadline:
    """When the report's budget runs out: unknown (never out) until head's results
    are in. A `run.Stop`: a breakage running when it passes is killed."""

    def __init__(self) -> None:
        self.at: float | None = None

    def is_set(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at

    def left(self) -> float | None:
        return None if self.at is None else self.at - time.monotonic()


@dataclass(frozen=True)
class Breakage:
    """One broken version of head: a known-bad fixture or a mutant."""

    name: str
    patch: bytes


@dataclass
class _Found:
    """What the breakages that ran did to the untrusted items of the touched files,
    and (once the untrusted class's processes ended) which of them passed on head."""

    budget: float | None  # seconds once head's results are in; None: default_budget
    started: float = field(default_factory=time.monotonic)  # when the classes started
    ran: list[str] = field(default_factory=list)
    failed: dict[str, set[str]] = field(default_factory=dict)  # breakage -> items that broke
    broken_files: dict[str, set[str]] = field(default_factory=dict)  # breakage -> files
    agent: frozenset[str] | None = None  # passed on head; None until the class ran
    skipped: list[str] = field(default_factory=list)  # not tried, or ended: the budget ran out
    deadline: Deadline = field(default_factory=Deadline)
    # head's untrusted class: its timed-out items are not run again, and the runs'
    # limit comes from what the others took (`process.limits`)
    plain: PlainRun = field(default_factory=PlainRun)
    spent: float | None = None  # the budget, in seconds, once it is known
    in_flight: int = 0  # breakages running now
    waiting: set[int] = field(default_factory=set)  # breakages waiting to start, by index
    lock: threading.Condition = field(default_factory=threading.Condition)

    def killed_by(self, nodeid: str) -> list[str]:
        path = nodeid.split("::", 1)[0]
        return [
            name
            for name in self.ran
            if nodeid in self.failed[name] or path in self.broken_files[name]
        ]

    def know(self, agent: Iterable[str], waited: float = 0.0) -> None:
        """The items the report covers: those that passed on head. The classes are
        done: the budget starts now. `waited`: the seconds the classes' runs spent on
        items that timed out, which the default budget leaves out (a hang is no
        measure of the suite, and would buy the report up to a quarter of it)."""
        with self.lock:
            now = time.monotonic()
            classes = max(0.0, now - self.started - waited)
            self.spent = default_budget(classes) if self.budget is None else self.budget
            self.deadline.at = now + self.spent
            self.agent = frozenset(agent)
            self.lock.notify_all()

    def files_left(self, files: frozenset[str]) -> frozenset[str]:
        """The touched files that still hold an item no breakage killed (all of them
        before head's results are in): a later breakage runs only those."""
        with self.lock:
            if self.agent is None:
                return files
            return frozenset(n.split("::", 1)[0] for n in self.agent if not self.killed_by(n))

    def skip(self, name: str) -> None:
        """`name` was not tried, or taught nothing: ended by the budget or by an error."""
        with self.lock:
            if name not in self.skipped:
                self.skipped.append(name)

    def nothing_left(self) -> bool:
        """Every item that passed on head has failed against something: the rest of
        the breakages need not run. Never before head's results are in."""
        with self.lock:
            return self._nothing_left()

    def _nothing_left(self) -> bool:
        return self.agent is not None and all(self.killed_by(n) for n in self.agent)

    def _enough_in_flight(self) -> bool:
        """One breakage more is running than items are left to kill (unknown before
        head's results are in). The one beside runs at once, so that a miss (the
        first mutant of a tautology misses, and so do all the rest) costs no wall
        time; more would only repeat what those find, and outlive the one that kills
        the last item, at the phase's end."""
        if self.agent is None:
            return False
        alive = sum(1 for n in self.agent if not self.killed_by(n))
        return self.in_flight > alive

    def start(self, index: int) -> bool:
        """Wait while the running breakages may still kill what is left, and while
        an earlier breakage waits (they start in their order: a later one must not
        take the place of the one waiting); then whether this one should run (it
        is counted as running if so)."""
        with self.lock:
            self.waiting.add(index)
            try:
                while (
                    not self._nothing_left()
                    and not self.deadline.is_set()
                    and (
                        (self.in_flight and self._enough_in_flight()) or index != min(self.waiting)
                    )
                ):
                    left = self.deadline.left()
                    self.lock.wait(timeout=1.0 if left is None else max(0.01, min(1.0, left)))
                if self._nothing_left() or self.deadline.is_set():
                    return False
                self.in_flight += 1
                return True
            finally:
                self.waiting.discard(index)
                self.lock.notify_all()

    def done(self) -> None:
        with self.lock:
            self.in_flight -= 1
            self.lock.notify_all()

    def out_of_time(self) -> bool:
        """The budget ran out (and something was left to learn)."""
        with self.lock:
            return self.deadline.is_set() and not self._nothing_left()

    def record(self, name: str, result: RunResult) -> None:
        collected = {i.facts.nodeid for i in result.selected(Role.UNTRUSTED)}
        with self.lock:
            self.ran.append(name)
            self.failed[name] = {n for n in collected if result.outcome(n) in BREAKS}
            self.broken_files[name] = {n.split("::", 1)[0] for n, _ in result.collection_errors}
            self.lock.notify_all()


# Told the untrusted phase's runs and the earlier phases' time waited (`watching`).
OnHead = Callable[[Mapping[RunKey, RunResult], float], None]


class Discrimination:
    """The report's runs, made before the untrusted phase so that they run beside it
    (the same trust: worktrees of head, only the change's test files), and what
    turns their results into the report once the untrusted class's are in."""

    def __init__(
        self,
        tasks: list[Callable[[], None]],
        finish: Callable[[RunResult | None], DiscriminationFacts | None],
        on_head: OnHead = lambda runs, waited: None,
        waited: float = 0.0,
    ) -> None:
        self.tasks = tasks
        self.finish = finish  # with the untrusted class's run, once the phase ended
        self._on_head = on_head
        self.waited = waited

    def after(self, waited: float) -> Discrimination:
        """This report, told the seconds the earlier phases' runs spent on items that
        timed out (`time_waited`): its default budget leaves them out."""
        return Discrimination(self.tasks, self.finish, self._on_head, waited)

    def watching(
        self, class_tasks: list[Callable[[], None]], runs: Mapping[RunKey, RunResult]
    ) -> list[Callable[[], None]]:
        """The untrusted class's tasks, telling the breakages which items passed on
        head once the last of them ended (the breakages only then stop early).
        `runs`: the untrusted phase's, which its tasks fill."""
        if not self.tasks:
            return class_tasks
        return after_last(class_tasks, lambda: self._on_head(runs, self.waited))


Side = tuple[bytes | None, bytes | None]
Sides = Mapping[Change, Side]


def prepare_discrimination(
    ctx: PhaseContext,
    git: Git,
    changes: Sequence[Change],
    *,
    budget: float | None,
    enabled: bool = True,
    started: float | None = None,
) -> Callable[[], Discrimination]:
    """The report's runs, planned in two steps: what the plan reads from the
    repository is read now, and the rest (diffs and mutants, computation only) is
    returned, for a thread beside the oracle phase. That phase runs the change's
    code, which could rewrite the repository's objects: nothing is read from git
    while it runs. `budget` in seconds from the end of the classes (None: a share
    of their time, counted from `started`, when the test phases began)."""
    config = ctx.config
    required = config.manifest.require_discriminating_tests
    if not enabled:
        return lambda: Discrimination([], lambda run: None)
    if ctx.work.recorded is not None:
        merged = merge_discrimination(ctx.work.recorded.discrimination, required)
        return lambda: Discrimination([], lambda run: merged)
    files = _touched_test_files(ctx, changes)
    sides = _python_sides(git, ctx.plan.base, ctx.plan.head, changes) if files else {}

    def plan() -> Discrimination:
        added = _added_tests(sides, changes, files)
        # Mutants of the lines the change touched first: they are what the agent's
        # tests are most likely to notice, and once every item has failed against
        # something the rest need not run (the report only ever needs one breakage
        # per item).
        breakages = _mutants(sides, changes, ctx) if files else []
        breakages += [Breakage(f"known-bad {f.name}", f.patch) for f in config.known_bad if files]
        found = _Found(budget, time.monotonic() if started is None else started)
        tasks = [_task(ctx, index, b, files, found) for index, b in enumerate(breakages)]
        order = {b.name: i for i, b in enumerate(breakages)}  # not the order they finished in

        def by_order(name: str) -> int:
            return order.get(name, len(order))

        def finish(run: RunResult | None) -> DiscriminationFacts:
            agent = _agent_items([run] if run is not None else [], files, added)
            if not agent:
                return DiscriminationFacts(required=required)
            return DiscriminationFacts(
                items=tuple((n, tuple(sorted(found.killed_by(n), key=by_order))) for n in agent),
                against=tuple(sorted(found.ran, key=by_order)),
                required=required,
                incomplete=bool(found.skipped),
                skipped=tuple(sorted(found.skipped, key=by_order)),
                budget=found.spent,
            )

        def on_head(runs: Mapping[RunKey, RunResult], waited: float) -> None:
            parts = [r for key, r in list(runs.items()) if key.kind == RunName.UNTRUSTED]
            found.plain.ended(parts)
            found.know(_agent_items(parts, files, added), waited=waited + time_waited([runs]))

        return Discrimination(tasks, finish, on_head)

    return plan


def time_waited(
    phases: Iterable[Mapping[RunKey, RunResult]], replays: Iterable[ReplayFacts] = ()
) -> float:
    """The seconds the classes' runs (of these phases' runs) and the known-bad replays
    spent on items that timed out (a replay's wait may overlap the oracle class's:
    counted twice, the budget errs short, never long)."""
    classes = {RunKey(RunName.ORACLE), RunKey(RunName.PROPERTY), RunKey(RunName.FLAKE)}
    runs = [
        run
        for phase in phases
        for key, run in list(phase.items())  # other tasks may add to it
        if key in classes or key.kind == RunName.UNTRUSTED
    ]
    return timed_out_seconds(runs) + sum(r.waited for r in replays)


def _python_sides(git: Git, base: str, head: str, changes: Sequence[Change]) -> dict[Change, Side]:
    """Both sides of every Python file the change touched: all the plan reads."""
    return {
        c: git.read_sides(base, head, c)
        for c in changes
        if any(path.endswith(".py") for path in c.paths)
    }


def merge_discrimination(
    parts: Sequence[DiscriminationFacts], required: bool
) -> DiscriminationFacts:
    """The report of N machines, each of which broke the code under the agent's
    items it ran: every machine tried the same breakages, in the same order."""
    against: list[str] = []
    for part in sorted(parts, key=lambda p: -len(p.against)):
        against += [a for a in part.against if a not in against]
    covering = [p for p in parts if p.items]
    skipped = [s for p in covering for s in p.skipped]
    budgets = [p.budget for p in covering if p.budget is not None]
    return DiscriminationFacts(
        items=tuple(sorted(item for part in parts for item in part.items)),
        against=tuple(against),
        required=required,
        incomplete=any(p.incomplete for p in covering),
        skipped=tuple(dict.fromkeys(skipped)),
        budget=max(budgets) if budgets else None,
    )


def _touched_test_files(ctx: PhaseContext, changes: Sequence[Change]) -> frozenset[str]:
    """The test-side files the change added or edited that this machine's untrusted
    units hold (any kind: pytest collects `test*.txt` doctests, and a plugin may
    collect more; a run that finds no item in them ends the search at once)."""
    touched = {c.new_path for c in changes if c.new_path and c.status in "AMRC"}
    units = [u for u in ctx.work.units_of(RunName.UNTRUSTED) if ctx.mine(u.name)]
    return frozenset(
        p
        for p in touched
        if p in ctx.plan.untrusted_sizes and any(u.shard is None or u.shard.owns(p) for u in units)
    )


def _added_tests(
    sides: Sides, changes: Sequence[Change], files: frozenset[str]
) -> dict[str, frozenset[str] | None]:
    """Per touched Python test file, the test functions the change added or edited
    (`changed_tests`); None: every item of the file counts (a new file, a file that
    does not parse, a doctest file). The report covers the tests the change adds,
    not the rest of a module it appended one to."""
    out: dict[str, frozenset[str] | None] = {}
    for change in changes:
        path = change.new_path
        if path not in files:
            continue
        if change.status not in "MR" or not path.endswith(".py") or not change.old_path:
            out[path] = None
            continue
        before, after = sides.get(change, (None, None))
        out[path] = changed_tests(before, after)
    return out


def _agent_items(
    runs: Sequence[RunResult],
    files: frozenset[str],
    added: Mapping[str, frozenset[str] | None] | None = None,
) -> tuple[str, ...]:
    """Untrusted items the change added in those files that passed on head (in
    these processes of the untrusted class); none when one of them failed to run."""
    if not files or not runs or any(run.error for run in runs):
        return ()
    added = added or {}

    def is_added(nodeid: str, path: str) -> bool:
        names = added.get(path)
        return names is None or item_name(nodeid) in names

    return tuple(
        sorted(
            i.facts.nodeid
            for run in runs
            for i in run.selected(Role.UNTRUSTED)
            if i.facts.path in files
            and is_added(i.facts.nodeid, i.facts.path)
            and run.outcome(i.facts.nodeid) is Outcome.PASSED
        )
    )


def _mutants(sides: Sides, changes: Sequence[Change], ctx: PhaseContext) -> list[Breakage]:
    """A few mutants of the production lines the change added or edited."""
    out: list[Breakage] = []
    for change in changes:
        path = change.new_path
        if not path or not path.endswith(".py") or ctx.config.test_side.holds(path):
            continue
        if change.new_mode not in REGULAR_FILE_MODES:
            continue  # a link's blob is the name it points to: no code to mutate
        if ctx.config.manifest.production_globs and path not in _production(ctx):
            continue
        before, after = sides.get(change, (None, None))
        old = (before or b"").decode("utf-8", "replace")
        new = (after or b"").decode("utf-8", "replace")
        lines = _added_lines(old, new)
        if not lines or len(out) >= MAX_MUTANTS:
            continue
        for mutant in mutants_of(path, new, lines=lines, limit=MAX_MUTANTS - len(out)):
            name = f"mutant {path}:{mutant.line} {mutant.description}"
            out.append(Breakage(name, mutant.patch))
    return out


def _production(ctx: PhaseContext) -> set[str]:
    from andgate.trust.paths import matching

    return set(matching(ctx.plan.head_paths, ctx.config.manifest.production_globs))


def _added_lines(old: str, new: str) -> set[int]:
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    added: set[int] = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            added.update(range(j1 + 1, j2 + 1))
    return added


def _task(
    ctx: PhaseContext, index: int, breakage: Breakage, files: frozenset[str], found: _Found
) -> Callable[[], None]:
    def run() -> None:
        if not found.start(index):
            if found.out_of_time():
                found.skip(breakage.name)  # the report says it was not tried
            return  # or every item already failed against broken code: nothing to learn
        try:
            _break(ctx, index, breakage, files, found)
        finally:
            found.done()

    return run


def _break(
    ctx: PhaseContext, index: int, breakage: Breakage, files: frozenset[str], found: _Found
) -> None:
    # Only the files whose items no breakage killed yet: head's run (the untrusted
    # class's own) and the breakages that ran are not repeated.
    left = found.files_left(files)
    if not left:
        return
    patch = ctx.scratch / f"discrimination-{index}.patch"
    patch.write_bytes(breakage.patch)
    ordered = tuple(sorted(left))
    environment = ctx.state.environment
    request = RunRequest(
        f"discrimination {index}",
        Role.UNTRUSTED,
        ctx.plan.head_rules,
        allow_files=ordered,
        failures_expected=True,
        environment=environment,
        # What timed out on head is no item the report covers, and proves nothing here.
        skip_items=tuple(
            sorted(n for n in found.plain.known_timeouts() if n.split("::")[0] in left)
        ),
        item_timeout=found.plain.limit(ordered, environment.item_timeout),
    )
    with ctx.pool.lease(ctx.plan.head, label=request.label) as worktree:
        if worktree.apply_patch(patch) is not None:
            return  # does not apply to head: nothing to learn from it
        if found.out_of_time():
            found.skip(breakage.name)  # the budget ran out while the worktree was made
            return
        result = run_pytest(request, worktree.path, ctx.scratch, ctx.timeout, found.deadline)
    if not result.error:
        found.record(breakage.name, result)
    else:
        # Ended by the budget, or by any other error (a crash, no results): nothing was
        # learnt, so it is not tried; never a breakage that silently drops out, which
        # would let require_discriminating_tests allow on nothing.
        found.skip(breakage.name)
