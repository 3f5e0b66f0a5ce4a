"""Do the tests a change adds discriminate anything? (AGENT_TESTS_DISCRIMINATE_NOTHING)

After the untrusted phase, the untrusted test items in files the change added or
edited (and that passed on head) run again against broken versions of head: small
mutants (`mutate.py`) of the production lines the change touched, then each known-bad
fixture, until every item has failed against one of them. An item that fails under
none of them would pass against broken code too.
These runs are untrusted like the untrusted phase (worktrees of head, only the
change's test files), bounded by a time budget, and they can only add a warning (or,
with `require_discriminating_tests: true`, a block): never turn a block into an allow.
"""

from __future__ import annotations

import difflib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from andgate.git import Change, Git
from andgate.mutate import mutants_of
from andgate.phases.context import PhaseContext
from andgate.records import DiscriminationFacts, Outcome, Role
from andgate.run import RunRequest, run_pytest
from andgate.state import RunName

MAX_MUTANTS = 4
BREAKS = {Outcome.FAILED, Outcome.ERROR, Outcome.RERUN_PASSED}


@dataclass(frozen=True)
class Breakage:
    """One broken version of head: a known-bad fixture or a mutant."""

    name: str
    patch: bytes


@dataclass
class _Found:
    killed_by: dict[str, list[str]] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)
    over_budget: bool = False  # a breakage that was needed did not run in time
    lock: threading.Lock = field(default_factory=threading.Lock)

    def every_item_killed(self, agent: Sequence[str]) -> bool:
        with self.lock:
            return all(n in self.killed_by for n in agent)


def run_discrimination(
    ctx: PhaseContext, git: Git, changes: Sequence[Change], *, budget: float
) -> None:
    state, config = ctx.state, ctx.config
    required = config.manifest.require_discriminating_tests
    if ctx.work.recorded is not None:
        state.discrimination = merge_discrimination(ctx.work.recorded.discrimination, required)
        return
    agent = _agent_items(ctx, changes)
    if not agent:
        state.discrimination = DiscriminationFacts(required=required)
        return
    # Mutants of the lines the change touched first: they are what the agent's tests
    # are most likely to notice, and once every item has failed against something the
    # rest need not run (the report only ever needs one breakage per item).
    breakages = _mutants(git, ctx.plan.base, ctx.plan.head, changes, ctx)
    breakages += [Breakage(f"known-bad {f.name}", f.patch) for f in config.known_bad]
    found = _Found()
    deadline = time.monotonic() + budget
    files = tuple(sorted({nodeid.split("::", 1)[0] for nodeid in agent}))
    tasks = [
        _task(ctx, index, breakage, files, agent, deadline, found)
        for index, breakage in enumerate(breakages)
    ]
    ctx.run("discrimination", tasks)
    order = {b.name: i for i, b in enumerate(breakages)}  # not the order they finished in
    state.discrimination = DiscriminationFacts(
        items=tuple(
            (n, tuple(sorted(found.killed_by.get(n, ()), key=order.get))) for n in sorted(agent)
        ),
        against=tuple(sorted(found.ran, key=order.get)),
        required=required,
        incomplete=found.over_budget,
    )


def merge_discrimination(
    parts: Sequence[DiscriminationFacts], required: bool
) -> DiscriminationFacts:
    """The report of N machines, each of which broke the code under the agent's
    items it ran: every machine tried the same breakages, in the same order."""
    against: list[str] = []
    for part in sorted(parts, key=lambda p: -len(p.against)):
        against += [a for a in part.against if a not in against]
    return DiscriminationFacts(
        items=tuple(sorted(item for part in parts for item in part.items)),
        against=tuple(against),
        required=required,
        incomplete=any(p.incomplete for p in parts if p.items),
    )


def _agent_items(ctx: PhaseContext, changes: Sequence[Change]) -> tuple[str, ...]:
    """Untrusted items in test files the change added or edited, that passed on head."""
    touched = {c.new_path for c in changes if c.new_path and c.status in "AMRC"}
    touched = {p for p in touched if ctx.config.test_side.holds(p)}
    run = ctx.state.runs.get(RunName.UNTRUSTED)
    if run is None or run.error or not touched:
        return ()
    return tuple(
        i.facts.nodeid
        for i in run.selected(Role.UNTRUSTED)
        if i.facts.path in touched and run.outcome(i.facts.nodeid) is Outcome.PASSED
    )


def _mutants(
    git: Git, base: str, head: str, changes: Sequence[Change], ctx: PhaseContext
) -> list[Breakage]:
    """A few mutants of the production lines the change added or edited."""
    out: list[Breakage] = []
    for change in changes:
        path = change.new_path
        if not path or not path.endswith(".py") or ctx.config.test_side.holds(path):
            continue
        if ctx.config.manifest.production_globs and path not in _production(ctx):
            continue
        new = (git.read_blob(head, path) or b"").decode("utf-8", "replace")
        old = (git.read_blob(base, change.old_path) or b"").decode("utf-8", "replace")
        lines = _added_lines(old, new)
        for mutant in mutants_of(path, new):
            if mutant.line in lines and len(out) < MAX_MUTANTS:
                name = f"mutant {path}:{mutant.line} {mutant.description}"
                out.append(Breakage(name, mutant.patch))
    return out


def _production(ctx: PhaseContext) -> set[str]:
    from andgate.paths import matching

    return set(matching(ctx.plan.head_paths, ctx.config.manifest.production_globs))


def _added_lines(old: str, new: str) -> set[int]:
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    added = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            added.update(range(j1 + 1, j2 + 1))
    return added


def _task(
    ctx: PhaseContext,
    index: int,
    breakage: Breakage,
    files: tuple[str, ...],
    agent: tuple[str, ...],
    deadline: float,
    found: _Found,
) -> Callable[[], None]:
    def run() -> None:
        if found.every_item_killed(agent):
            return  # every item already failed against broken code: nothing left to learn
        if time.monotonic() > deadline:
            found.over_budget = True  # this breakage is not tried (the report says so)
            return
        patch = ctx.scratch / f"discrimination-{index}.patch"
        patch.write_bytes(breakage.patch)
        request = RunRequest(
            f"discrimination {index}",
            Role.UNTRUSTED,
            ctx.plan.head_rules,
            allow_files=files,
            only_ids=agent,
            environment=ctx.state.environment,
        )
        with ctx.pool.lease(ctx.plan.head) as worktree:
            if worktree.apply_patch(patch) is not None:
                return  # does not apply to head: nothing to learn from it
            result = run_pytest(request, worktree.path, ctx.scratch, ctx.timeout)
        if result.error:
            return
        broken_files = {nodeid.split("::", 1)[0] for nodeid, _ in result.collection_errors}
        with found.lock:
            found.ran.append(breakage.name)
            for nodeid in agent:
                failed = result.outcome(nodeid) in BREAKS
                if failed or nodeid.split("::", 1)[0] in broken_files:
                    found.killed_by.setdefault(nodeid, []).append(breakage.name)

    return run
