"""The oracle phase: the oracle class, the base pin of the oracle set, and one
known-bad replay per fixture, in parallel.

No code of the change's test side runs here, only head's production code (not
sandboxed) against base's test side: the trusted tree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from andgate.cache import KillerCache
from andgate.phases.context import PhaseContext, is_part_of
from andgate.records import ItemResult, OracleFacts, Outcome, Role
from andgate.replay import PlainRun, known_bad_facts, replay_fixture
from andgate.run import RunRequest, RunResult, class_facts, collection_error_lines
from andgate.shard import collect_only_weight
from andgate.state import RunName
from andgate.units import BASE_ORACLE


def run_oracle_phase(ctx: PhaseContext) -> None:
    plan, state = ctx.plan, ctx.state
    request = RunRequest(
        "oracle",
        Role.ORACLE,
        plan.trusted_oracle_rules,
        allow_files=plan.trusted_oracle_files,
        junit_name="oracle.xml",
        environment=state.environment,
    )
    tasks: list[Callable[[], object]] = []
    base_pin = _base_pin_task(ctx)
    plain = PlainRun()
    if plan.trusted_oracle_files:
        preload = collect_only_weight(plan.oracle_sizes) if base_pin is not None else 0
        class_tasks = ctx.class_tasks(
            RunName.ORACLE, request, plan.trusted, plan.oracle_sizes, last_preload=preload
        )
        tasks += _telling(plain, class_tasks, ctx)
    else:
        plain.ended(())
    if base_pin is not None:
        # After the shards, so every shard starts at once: the last one, lighter by the
        # pin's weight, ends first and takes it. Before it, a shard the sizes misjudge
        # (one heavily parametrised file) would wait behind the whole collection.
        tasks.append(base_pin)
    tasks += _replay_tasks(ctx, request, plain)
    ctx.run("oracle phase", tasks)
    ctx.merge_class(RunName.ORACLE)
    state.oracle = oracle_facts(
        state.runs.get(RunName.ORACLE), state.runs.get(RunName.BASE_ORACLE), approved=ctx.approved
    )
    order = {f.name: i for i, f in enumerate(ctx.config.known_bad)}
    state.replays.sort(key=lambda r: order.get(r.name, 0))
    state.known_bad = known_bad_facts(
        ctx.config, state.replays, has_oracle=bool(plan.trusted_oracle_files)
    )
    state.capture()


def _base_pin_task(ctx: PhaseContext) -> Callable[[], object] | None:
    """Base's collection of the oracle set, if this machine runs (or reads back) it."""
    if not (ctx.plan.base_oracle_files and ctx.mine(BASE_ORACLE)):
        return None
    if ctx.work.recorded is not None:
        return ctx.recorded_task(BASE_ORACLE, RunName.BASE_ORACLE)
    ctx.state.units_ran[BASE_ORACLE] = RunName.BASE_ORACLE
    return ctx.task(RunName.BASE_ORACLE, _base_pin_request(ctx), ctx.plan.base)


def _base_pin_request(ctx: PhaseContext) -> RunRequest:
    """Base's oracle collection: it pins the oracle set (unless an owner approved)
    and evaluates skip marks against base's code (platform skips)."""
    return RunRequest(
        "base oracle",
        Role.ORACLE,
        ctx.plan.base_oracle_rules,
        allow_files=ctx.plan.base_oracle_files,
        collect_only=True,
        environment=ctx.state.environment,
    )


def _telling(
    plain: PlainRun, class_tasks: list[Callable[[], None]], ctx: PhaseContext
) -> list[Callable[[], None]]:
    """The oracle class's tasks, telling the replays what each item took once the
    last of them ended (queued first, so a replay that waits for them never waits
    for a task that has not started)."""
    if not class_tasks:
        plain.ended(())
        return class_tasks
    left, lock = [len(class_tasks)], threading.Lock()

    def watched(task: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                task()
            finally:
                with lock:
                    left[0] -= 1
                    last = left[0] == 0
                if last:
                    runs = list(ctx.state.runs.items())  # other tasks add to it
                    plain.ended(r for name, r in runs if is_part_of(RunName.ORACLE, name))

        return run

    return [watched(t) for t in class_tasks]


def _replay_tasks(
    ctx: PhaseContext, request: RunRequest, plain: PlainRun
) -> list[Callable[[], object]]:
    manifest, plan = ctx.config.manifest, ctx.plan
    if not (manifest.oracle_must_fail_known_bad and plan.trusted_oracle_files):
        return []

    def replay(index: int) -> Callable[[], object]:
        fixture, unit = ctx.config.known_bad[index], f"known-bad/{index}"
        recorded = ctx.work.recorded
        if recorded is not None:
            return lambda: ctx.state.replays.append(recorded.replays[unit])
        return lambda: ctx.state.replays.append(
            replay_fixture(
                fixture,
                index,
                pool=ctx.pool,
                commit=plan.trusted,
                oracle_request=request,
                scratch=ctx.scratch,
                timeout=ctx.timeout,
                cache=KillerCache(ctx.cache_dir),
                oracle_digest=plan.trusted_oracle_digest,
                plain=plain,
            )
        )

    return [replay(i) for i in range(len(ctx.config.known_bad)) if ctx.mine(f"known-bad/{i}")]


def oracle_facts(
    oracle: RunResult | None, base: RunResult | None, *, approved: bool
) -> OracleFacts:
    """The oracle class's facts: its outcomes, the items base collects that head
    does not report (unless approved), and the platform skips that hold on base."""
    facts = class_facts(oracle, Role.ORACLE)
    collected = {r.nodeid for r in facts.results}
    missing: tuple[str, ...] = ()
    errors, error = facts.collection_errors, facts.error
    if base is not None:
        if base.error:
            # A timeout or crash, not a collection error: the gate could not run.
            error = "; ".join(e for e in (error, base.error) if e)
        errors += tuple(f"on base: {e}" for e in collection_error_lines(base))
        if not approved:
            pinned = [i.facts.nodeid for i in base.selected(Role.ORACLE)]
            missing = tuple(n for n in pinned if n not in collected)
    results, not_applicable = platform_skips(facts.results, oracle, base)
    if not approved:
        results = parameters_pinned(results, oracle, base)
    return OracleFacts(
        results=results,
        collection_errors=errors,
        error=error,
        pinned_missing=missing,
        not_applicable=not_applicable,
    )


def parameters_pinned(
    results: tuple[ItemResult, ...], head: RunResult | None, base: RunResult | None
) -> tuple[ItemResult, ...]:
    """An oracle item whose parameter values differ from those base collected for the
    same id did not pass: the same count and ids with trivial values (examples read
    from production code) is the cheat this catches."""
    if head is None or base is None:
        return results
    on_base = {i.facts.nodeid: i.params for i in base.selected(Role.ORACLE)}
    on_head = {i.facts.nodeid: i.params for i in head.selected(Role.ORACLE)}
    out = []
    for result in results:
        was, now = on_base.get(result.nodeid), on_head.get(result.nodeid)
        if was is not None and now is not None and was != now:
            result = ItemResult(result.nodeid, Outcome.FAILED, "parameters changed")
        out.append(result)
    return tuple(out)


def platform_skips(
    results: tuple[ItemResult, ...], head: RunResult | None, base: RunResult | None
) -> tuple[tuple[ItemResult, ...], tuple[str, ...]]:
    """Split off the oracle items a skip/skipif mark skipped on head that the same
    mark skips when evaluated against base too: not applicable on this machine
    (ORACLE_SKIPPED). A skip from code (`pytest.skip()`, `importorskip`) or a
    condition that only head's production code makes true still fails."""
    if head is None or base is None:
        return results, ()
    on_base = {i.facts.nodeid: i.skip_mark for i in base.selected(Role.ORACLE)}
    on_head = {i.facts.nodeid: i.skip_mark for i in head.selected(Role.ORACLE)}
    kept, skipped = [], []
    for result in results:
        mark = on_head.get(result.nodeid)
        by_mark = (
            result.outcome is Outcome.SKIPPED
            and mark is not None
            and head.reports.get(result.nodeid, {}).get("skip_when") == "setup"
            and result.message.strip() == mark.strip()
        )
        if by_mark and on_base.get(result.nodeid) is not None:
            skipped.append(f"{result.nodeid} skipped: {result.message} (skipped on base too)")
        else:
            kept.append(result)
    return tuple(kept), tuple(skipped)
