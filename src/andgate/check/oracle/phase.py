"""The oracle phase: the oracle class, the base pin of the oracle set, and one
known-bad replay per fixture, in parallel.

No code of the change's test side runs here, only head's production code (not
sandboxed) against base's test side: the trusted tree.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from andgate.check.cache import KillerCache
from andgate.check.context import PhaseContext, after_last
from andgate.check.oracle.replay import known_bad_facts, replay_fixture
from andgate.check.state import PhaseRuns, RunKey, RunName
from andgate.check.units import BASE_ORACLE
from andgate.plugin.shard import collect_only_weight
from andgate.process.limits import PlainRun
from andgate.process.requests import RunRequest
from andgate.process.results import RunResult, class_facts
from andgate.records import (
    ItemResult,
    KnownBadFacts,
    OracleFacts,
    Outcome,
    ReplayFacts,
    Role,
    Unpinned,
)
from andgate.trust.github import approves_head


@dataclass(frozen=True)
class OracleOutcome:
    """What the oracle phase found: the oracle class, the known-bad proof, each
    fixture's replay (in the manifest's order), and its runs (the oracle class, base's
    collection, the oracle skips run on base)."""

    oracle: OracleFacts
    known_bad: KnownBadFacts
    replays: tuple[ReplayFacts, ...]
    runs: PhaseRuns


class OracleBeside(Protocol):
    """Trusted runs queued after the oracle phase's own (the approval evidence's base
    side), told when the oracle class's runs ended and when all of the phase's did."""

    @property
    def tasks(self) -> Sequence[Callable[[], None]]: ...

    def watching_class(
        self, tasks: list[Callable[[], None]], runs: Mapping[RunKey, RunResult]
    ) -> list[Callable[[], None]]: ...

    def watching_all(self, tasks: list[Callable[[], object]]) -> list[Callable[[], object]]: ...


def run_oracle_phase(ctx: PhaseContext, beside: OracleBeside | None = None) -> OracleOutcome:
    """`beside`: trusted runs of base's test side against head's production code,
    queued after the phase's own in its pool (their results are in memory when it
    returns, before any code the change's tests wrote runs)."""
    plan, state = ctx.plan, ctx.state
    replays: list[ReplayFacts] = []  # appended to by the replay tasks, in any order
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
        if beside is not None:
            class_tasks = beside.watching_class(class_tasks, ctx.runs)
        tasks += _telling(plain, class_tasks, ctx)
    else:
        plain.ended(())
        if beside is not None:
            beside.watching_class([], ctx.runs)
    if base_pin is not None:
        # After the shards, so every shard starts at once: the last one, lighter by the
        # pin's weight, ends first and takes it. Before it, a shard the sizes misjudge
        # (one heavily parametrised file) would wait behind the whole collection.
        tasks.append(base_pin)
    tasks += _replay_tasks(ctx, request, plain, replays)
    if beside is not None:
        tasks = [*beside.watching_all(tasks), *beside.tasks]
    ctx.run("oracle phase", tasks, counted="oracle")
    ctx.merge_class(RunName.ORACLE)
    oracle = oracle_facts(
        ctx.runs.get(RunKey(RunName.ORACLE)),
        ctx.runs.get(RunKey(RunName.BASE_ORACLE)),
        # an owner's review of an earlier commit does not cover what head collects
        approved=approves_head(state.approvals),
        on_base=_skips_on_base(ctx),
        from_production=state.oracle_from_production,
    )
    order = {f.name: i for i, f in enumerate(ctx.config.known_bad)}
    replays.sort(key=lambda r: order.get(r.name, 0))
    known_bad = known_bad_facts(ctx.config, replays, has_oracle=bool(plan.trusted_oracle_files))
    ctx.capture()
    return OracleOutcome(oracle, known_bad, tuple(replays), ctx.results())


def _base_pin_task(ctx: PhaseContext) -> Callable[[], object] | None:
    """Base's collection of the oracle set, if this machine runs (or reads back) it."""
    if not (ctx.plan.base_oracle_files and ctx.mine(BASE_ORACLE)):
        return None
    if ctx.work.recorded is not None:
        return ctx.recorded_task(BASE_ORACLE, RunKey(RunName.BASE_ORACLE))
    ctx.units_ran[BASE_ORACLE] = RunKey(RunName.BASE_ORACLE)
    return ctx.task(RunKey(RunName.BASE_ORACLE), _base_pin_request(ctx), ctx.plan.base)


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


def _skips_on_base(ctx: PhaseContext) -> RunResult | None:
    """The oracle items a skip from code (`pytest.skip()`, unittest) skipped on head,
    run again against base, all of them in one process: not applicable when base
    skips them too, for the same reason. None when there are none, or when this
    machine holds only some of the oracle class (a shard: `combine` runs them)."""
    head = ctx.runs.get(RunKey(RunName.ORACLE))
    complete = ctx.work.split is None or ctx.work.recorded is not None
    if head is None or not complete:
        return None
    skipped = skips_to_run_on_base(class_facts(head, Role.ORACLE).results, head)
    # Only what base collected: pytest refuses an id it cannot find (a usage error,
    # "found no collectors"); an item base lacks is judged from its collection.
    nodeids = on_base_collection(skipped, ctx.runs.get(RunKey(RunName.BASE_ORACLE)))
    files = sorted({n.partition("::")[0] for n in nodeids})
    if not files:
        return None  # not collected on base: nothing there can skip the same way
    request = RunRequest(
        "oracle skips on base",
        Role.ORACLE,
        ctx.plan.base_oracle_rules,
        allow_files=tuple(files),
        only_items=nodeids,
        environment=ctx.state.environment,
    )
    skips = RunKey(RunName.BASE_SKIPS)
    ctx.run("oracle skips on base", [ctx.task(skips, request, ctx.plan.base)])
    ctx.capture()
    return ctx.runs.get(skips)


def _telling(
    plain: PlainRun, class_tasks: list[Callable[[], None]], ctx: PhaseContext
) -> list[Callable[[], None]]:
    """The oracle class's tasks, telling the replays what each item took once the
    last of them ended (queued first, so a replay that waits for them never waits
    for a task that has not started)."""

    def tell() -> None:
        runs = list(ctx.runs.items())  # other tasks add to it
        plain.ended(r for key, r in runs if key.kind == RunName.ORACLE)

    return after_last(class_tasks, tell)


def _replay_tasks(
    ctx: PhaseContext, request: RunRequest, plain: PlainRun, replays: list[ReplayFacts]
) -> list[Callable[[], object]]:
    manifest, plan = ctx.config.manifest, ctx.plan
    if not (manifest.oracle_must_fail_known_bad and plan.trusted_oracle_files):
        return []

    def replay(index: int) -> Callable[[], object]:
        fixture, unit = ctx.config.known_bad[index], f"known-bad/{index}"
        recorded = ctx.work.recorded
        if recorded is not None:
            return lambda: replays.append(recorded.replays[unit])
        return lambda: replays.append(
            replay_fixture(
                fixture,
                index,
                pool=ctx.pool,
                commit=plan.trusted,
                oracle_request=ctx.trusted(request, plan.trusted),
                scratch=ctx.scratch,
                timeout=ctx.timeout,
                cache=KillerCache(ctx.cache_dir),
                oracle_digest=plan.trusted_oracle_digest,
                plain=plain,
            )
        )

    return [replay(i) for i in range(len(ctx.config.known_bad)) if ctx.mine(f"known-bad/{i}")]


def oracle_facts(
    oracle: RunResult | None,
    base: RunResult | None,
    *,
    approved: bool,
    on_base: RunResult | None = None,
    from_production: Collection[str] = (),
) -> OracleFacts:
    """The oracle class's facts: its outcomes, the items base collects that head
    does not report (unless approved), the skips that hold on base too (`on_base`:
    the items skipped by code, run again on base), and the files base could not
    collect (`from_production`: oracle files parametrised over production values)."""
    facts = class_facts(oracle, Role.ORACLE)
    collected = {r.nodeid for r in facts.results}
    missing: tuple[str, ...] = ()
    unpinned: tuple[Unpinned, ...] = ()
    error = facts.error
    if base is not None:
        if base.error:
            # A timeout or crash, not a collection error: the gate could not run.
            error = "; ".join(e for e in (error, base.error) if e)
        unpinned = unpinned_files(base.collection_errors, () if approved else from_production)
        if not approved:
            pinned = [i.facts.nodeid for i in base.selected(Role.ORACLE)]
            missing = tuple(n for n in pinned if n not in collected)
    results, by_mark = platform_skips(facts.results, oracle, base)
    results, by_code = skips_by_code(results, oracle, on_base, base)
    if on_base is not None and on_base.error:
        error = "; ".join(e for e in (error, on_base.error) if e)
    if not approved:
        results = parameters_pinned(results, oracle, base)
    return OracleFacts(
        results=results,
        collection_errors=facts.collection_errors,
        error=error,
        pinned_missing=missing,
        not_applicable=by_mark + by_code,
        unpinned=unpinned,
    )


def unpinned_files(
    base_errors: Iterable[tuple[str, str]], from_production: Collection[str]
) -> tuple[Unpinned, ...]:
    """What base could not collect pins nothing (COLLECTION_ERROR is about head's
    runs only). A file whose items are parametrised over production values, or a
    folder (or the session) holding one, would leave head to decide the oracle set."""
    found = []
    for where, message in base_errors:
        path = where.partition("::")[0]  # a file, a class in it, a folder, "" (session)
        holds = any(not path or p == path or p.startswith(f"{path}/") for p in from_production)
        found.append(Unpinned(where, error_line(message), from_production=holds))
    return tuple(found)


def error_line(message: str) -> str:
    """pytest's last line of a collection error, without its "E   " gutter."""
    return re.sub(r"^E\s+", "", (message.strip().splitlines() or [""])[-1])[:300]


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


def _skipped_by_mark(result: ItemResult, head: RunResult, mark: str | None) -> bool:
    """Skipped in setup with the reason a skip/skipif mark gives on head."""
    return (
        result.outcome is Outcome.SKIPPED
        and mark is not None
        and head.reports.get(result.nodeid, {}).get("skip_when") == "setup"
        and result.message.strip() == mark.strip()
    )


def _missing_module(result: ItemResult, run: RunResult) -> bool:
    return bool(run.reports.get(result.nodeid, {}).get("skip_missing_module"))


def missing_names(nodeid: str, run: RunResult) -> tuple[str, ...]:
    """The modules a skip for a missing module named (the plugin records them)."""
    names = run.reports.get(nodeid, {}).get("skip_missing_names")
    return tuple(str(n) for n in names) if isinstance(names, list) else ()


def is_stdlib_module(name: str) -> bool:
    """A module of this Python's standard library (`dbm.gnu`, `_gdbm`, `winreg`)."""
    return bool(name) and name.partition(".")[0] in sys.stdlib_module_names


def _stdlib_missing(result: ItemResult, run: RunResult) -> bool:
    """A skip for a missing module whose every ImportError names a standard-library
    module (a C extension this interpreter was built without: gdbm, ndbm, tkinter).
    What is installed is the change's to control; how Python was built is not. It
    is a platform skip when base skips too, for the same modules and reason."""
    names = missing_names(result.nodeid, run)
    return _missing_module(result, run) and bool(names) and all(map(is_stdlib_module, names))


def skips_to_run_on_base(results: Iterable[ItemResult], head: RunResult) -> tuple[str, ...]:
    """The oracle items skipped on head by code (`pytest.skip()`, a unittest skip, a
    fixture's skip): neither by a mark (`platform_skips` decides those from base's
    collection) nor for a missing module (those always fail), unless the missing
    module is one of the standard library's (`_stdlib_missing`)."""
    marks = {i.facts.nodeid: i.skip_mark for i in head.selected(Role.ORACLE)}
    return tuple(
        r.nodeid
        for r in results
        if r.outcome is Outcome.SKIPPED
        and not _skipped_by_mark(r, head, marks.get(r.nodeid))
        and (not _missing_module(r, head) or _stdlib_missing(r, head))
    )


# An absolute path's folders ("/tmp/wt-3/tests/data.txt" -> "data.txt"): the same
# item skipped in two worktrees (and two pytest temp folders) names different ones.
_FOLDERS = re.compile(r"(?<![\w.~-])/(?:[^\s/'\"`:;,()\[\]]+/)+")


def normalised_reason(reason: str) -> str:
    """A skip reason with the folders of absolute paths dropped."""
    return _FOLDERS.sub("", reason.strip())


def on_base_collection(nodeids: Iterable[str], base: RunResult | None) -> tuple[str, ...]:
    """The node ids base's oracle collection (`base`) collected: the only ones a
    rerun on base may ask pytest for."""
    collected = _collected_on_base(base)
    return tuple(n for n in nodeids if n in collected)


def _collected_on_base(base: RunResult | None) -> frozenset[str]:
    if base is None or base.error:
        return frozenset()
    return frozenset(i.facts.nodeid for i in base.selected(Role.ORACLE))


def skips_by_code(
    results: tuple[ItemResult, ...],
    head: RunResult | None,
    on_base: RunResult | None,
    base: RunResult | None = None,
) -> tuple[tuple[ItemResult, ...], tuple[str, ...]]:
    """Split off the oracle items skipped on head by code that base skipped too, for
    the same reason (paths normalised) when run again (`on_base`): not applicable
    here (ORACLE_SKIPPED). Every other skip fails its item with pytest's reason and
    why: a skip for a missing module always (the change controls what is
    installed), unless the module is one of the standard library's that this
    Python lacks and base skips the same way (`_stdlib_missing`); any other when
    base did not skip it the same way, or when the skip could not be compared
    (`base`, base's oracle collection, did not collect it)."""
    if head is None:
        return results, ()
    wanted = set(skips_to_run_on_base(results, head))
    kept, skipped = [], []
    for result in results:
        stdlib = missing_names(result.nodeid, head) if _stdlib_missing(result, head) else ()
        if result.outcome is Outcome.SKIPPED and _missing_module(result, head) and not stdlib:
            result = _still_failed(result, "a skip for a missing module always fails an oracle")
        elif result.nodeid in wanted:
            missing = None if base is None else _not_collected_on_base(result.nodeid, base)
            same, why = (False, missing) if missing else _same_skip_on_base(result, on_base, stdlib)
            if same:
                skipped.append(
                    f"{result.nodeid} skipped: {result.message} "
                    f"({_lacking(stdlib)}skipped on base too)"
                )
                continue
            result = _still_failed(result, why)
        kept.append(result)
    return tuple(kept), tuple(skipped)


def _not_collected_on_base(nodeid: str, base: RunResult) -> str | None:
    """Why base's oracle collection has no such item, so the skip could not be
    compared; None when it collected it."""
    if base.error:
        return "could not compare: base's oracle collection did not complete"
    if nodeid in _collected_on_base(base):
        return None
    path = nodeid.partition("::")[0]
    for where, message in base.collection_errors:
        at = where.partition("::")[0]
        if not at or at == path or path.startswith(f"{at}/"):
            at_what = where or "the session"
            return f"could not compare: base could not collect {at_what}: {error_line(message)}"
    return "base has no such oracle item"


def _lacking(stdlib: tuple[str, ...]) -> str:
    if not stdlib:
        return ""
    if len(stdlib) == 1:
        return f"the standard-library module {stdlib[0]} is missing from this Python; "
    return f"the standard-library modules {', '.join(stdlib)} are missing from this Python; "


def _same_skip_on_base(
    result: ItemResult, on_base: RunResult | None, stdlib: tuple[str, ...] = ()
) -> tuple[bool, str]:
    """Whether base skipped the item for the same reason; if not, what base did.
    `stdlib`: the standard-library modules head's skip was for; base's skip must
    be for the same ones (any other skip for a missing module never matches)."""
    if on_base is None:
        return False, "base has no such oracle item"
    if on_base.error:
        return False, "it could not run again on base"
    outcome = on_base.outcome(result.nodeid)
    if outcome is not Outcome.SKIPPED:
        return False, f"not skipped on base: {outcome.value}"
    reason = on_base.message(result.nodeid)
    base_missing = bool(on_base.reports.get(result.nodeid, {}).get("skip_missing_module"))
    if base_missing and (not stdlib or missing_names(result.nodeid, on_base) != stdlib):
        return False, f"on base it skipped for a missing module: {reason}"
    if stdlib and not base_missing:
        return False, f"on base it skipped, not for a missing module: {reason}"
    if normalised_reason(reason) != normalised_reason(result.message):
        return False, f"on base it skipped for another reason: {reason}"
    return True, ""


def _still_failed(result: ItemResult, why: str) -> ItemResult:
    """The skip stays a failure; pytest's reason first, then why it counts."""
    return ItemResult(result.nodeid, result.outcome, f"{result.message} ({why})")


def judged_against_itself(run: RunResult) -> tuple[ItemResult, ...]:
    """An oracle run's items judged as `check` judges head with base = head (what
    the maintainer commands act on): a skip that holds on base (a mark, a skip from
    code, a standard-library module this Python lacks) is not applicable, so it is
    left out; a skip for another missing module, an xfail and an xpass stay."""
    results, _ = platform_skips(class_facts(run, Role.ORACLE).results, run, run)
    results, _ = skips_by_code(results, run, run)
    return results


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
        by_mark = _skipped_by_mark(result, head, on_head.get(result.nodeid))
        if by_mark and on_base.get(result.nodeid) is not None:
            skipped.append(f"{result.nodeid} skipped: {result.message} (skipped on base too)")
        else:
            kept.append(result)
    return tuple(kept), tuple(skipped)
