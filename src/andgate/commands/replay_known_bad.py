"""`andgate replay-known-bad`: the known-bad proof on the working tree, alone.

The working tree as it is, uncommitted edits included (or `--rev REV`), is
judged as `check` judges a head (`commands.common.Target`). Each `*.patch`
under its `known_bad_dir` is applied in its own temporary worktree and the
oracle class runs; the fixture "bites" when at least
one oracle item fails (contract section 4, step 5, with the trusted tree being
HEAD itself). The user's working tree is never touched, dirty or not.

One more process runs the oracle class on HEAD without any fixture: a fixture
that "bites" an oracle which already fails proves nothing, so a failing oracle
on HEAD fails the command too.

Exit codes: 0 every fixture bit, 1 one stayed green or did not apply (or the
oracle class cannot be replayed), 3 no fixture at all.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from andgate.check.oracle.phase import judged_against_itself
from andgate.check.oracle.replay import replay_fixture
from andgate.check.plan.trees import Plan
from andgate.commands import options
from andgate.commands.common import (
    Target,
    generated_notes,
    head_plan,
    open_target,
    plural,
    run_environment,
    table,
    target_pool,
)
from andgate.exitcodes import Exit
from andgate.process.requests import DEFAULT_TIMEOUT, RunRequest
from andgate.process.results import RunResult
from andgate.process.run import run_parallel, run_pytest
from andgate.process.worktree import WorktreePool
from andgate.records import Outcome, ReplayFacts, ReplayStatus, Role
from andgate.trust.config import BaseConfig


@dataclass(frozen=True)
class Baseline:
    """The oracle class on HEAD with no fixture applied."""

    items: int
    files: int
    not_passing: tuple[tuple[str, str], ...]  # (node id, what it did)
    error: str | None


def run_replay_known_bad(
    repo: Path,
    *,
    manifest: str,
    jobs: int,
    timeout: float = DEFAULT_TIMEOUT,
    rev: str | None = None,
) -> int:
    target = open_target(repo, manifest, rev)
    config, head = target.config, target.commit
    folder = config.manifest.known_bad_dir
    print(target.first_line("replay-known-bad"))
    if not config.known_bad:
        print(
            f"andgate replay-known-bad: no *.patch fixture under {folder}; "
            f"add one (see {folder}/README.md, written by andgate init)"
        )
        return Exit.NO_FIXTURES
    with target_pool(target) as (scratch, pool):
        plan = head_plan(target.git, head, config, scratch)
        if not plan.trusted_oracle_files:
            return _no_oracle(config, head)
        environment = run_environment(target, plan)
        for note in generated_notes(target, environment):
            print(note)
        baseline, replays = _replay_all(plan, target, pool, scratch, (jobs, timeout))
    print(_render(config, head, baseline, replays), end="")
    ok = baseline.error is None and not baseline.not_passing and baseline.items > 0
    return Exit.OK if ok and all(_bites(r) for r in replays) else Exit.BLOCK


def _no_oracle(config: BaseConfig, head: str) -> int:
    print(
        f"andgate replay-known-bad: {head[:12]} has no file matching "
        f"classes.oracle.globs in {config.manifest.path}, so no fixture can bite; "
        "point the globs at human-owned tests"
    )
    return Exit.BLOCK


def _replay_all(
    plan: Plan,
    target: Target,
    pool: WorktreePool,
    scratch: Path,
    limits: tuple[int, float],
) -> tuple[Baseline, list[ReplayFacts]]:
    """`limits`: jobs and the timeout per process."""
    jobs, timeout = limits
    config = target.config
    request = RunRequest(
        "oracle",
        Role.ORACLE,
        plan.trusted_oracle_rules,
        allow_files=plan.trusted_oracle_files,
        environment=run_environment(target, plan),
    )

    def baseline() -> RunResult:
        with pool.lease(plan.trusted) as worktree:
            return run_pytest(request, worktree.path, scratch, timeout)

    tasks: list[Callable[[], RunResult | ReplayFacts]] = [baseline]
    for index, fixture in enumerate(config.known_bad):
        tasks.append(
            partial(
                replay_fixture,
                fixture,
                index,
                pool=pool,
                commit=plan.trusted,
                oracle_request=request,
                scratch=scratch,
                timeout=timeout,
            )
        )
    first, *rest = run_parallel(tasks, jobs)
    assert isinstance(first, RunResult)
    return _baseline(first), [r for r in rest if isinstance(r, ReplayFacts)]


def _baseline(result: RunResult) -> Baseline:
    """HEAD's oracle class judged as `check` judges it with base = HEAD: a skip
    that holds on base (a mark, a skip from code, a standard-library module this
    Python lacks) is not applicable there, so it is no failure here either; a
    skip for another missing module, an xfail, an xpass are."""
    items = result.selected("oracle")
    judged = judged_against_itself(result)
    not_passing = [(r.nodeid, r.outcome.value) for r in judged if r.outcome is not Outcome.PASSED]
    not_passing += [
        (nodeid or "<session>", "collection error") for nodeid, _ in result.collection_errors
    ]
    return Baseline(
        items=len(items),
        files=len({i.facts.path for i in items}),
        not_passing=tuple(not_passing),
        error=result.error,
    )


def _bites(replay: ReplayFacts) -> bool:
    return replay.status is ReplayStatus.BITES


def _status(replay: ReplayFacts) -> tuple[str, str]:
    """A short status word and what happened."""
    status = replay.status
    if status is ReplayStatus.ERROR:
        return "ERROR", f"applied; the oracle run failed: {replay.error}"
    if status is ReplayStatus.STALE:
        return "STALE", f"does not apply to HEAD (KNOWN_BAD_STALE): {replay.problem}"
    if status is ReplayStatus.GREEN:
        return "GREEN", "applied; every oracle item passed (ORACLE_NEUTRALIZED)"
    return "bites", f"applied; oracle failed: {', '.join(replay.failed)}"


def _render(config: BaseConfig, head: str, baseline: Baseline, replays: list[ReplayFacts]) -> str:
    lines = [
        f"{plural(len(replays), 'fixture')} from {config.manifest.known_bad_dir}, "
        f"oracle class {plural(baseline.items, 'item')} in {plural(baseline.files, 'file')}",
        "",
    ]
    rows = []
    for replay in replays:
        word, detail = _status(replay)
        rows.append((replay.name, word, f"{replay.seconds:.1f}s", detail))
    lines += [*table(rows), ""]
    lines += _baseline_lines(baseline)
    bit = sum(_bites(r) for r in replays)
    lines.append(f"result: {bit} of {plural(len(replays), 'fixture')} bit")
    return "\n".join(lines) + "\n"


def _baseline_lines(baseline: Baseline) -> list[str]:
    """Why the proof does not hold even when fixtures bite: a broken oracle."""
    if baseline.error:
        return [f"the oracle class could not run on HEAD: {baseline.error}", ""]
    if not baseline.items:
        return ["no oracle item was collected on HEAD (NO_ORACLE): no fixture can bite", ""]
    if baseline.not_passing:
        shown = [f"  {nodeid} {what}" for nodeid, what in baseline.not_passing[:10]]
        more = len(baseline.not_passing) - len(shown)
        return [
            "the oracle class does not pass on HEAD without any fixture, so a "
            "failure under a fixture proves nothing; fix these first:",
            *shown,
            *([f"  ... and {more} more"] if more > 0 else []),
            "",
        ]
    return []


# -- the command line ---------------------------------------------------------------------


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Apply each known-bad fixture to the working tree as it is (uncommitted edits "
        "included; --rev for a commit), each in its own temporary worktree, and run the "
        "oracle class (the working tree is never touched). Exit 0 every fixture bit, 1 one "
        "stayed green or did not apply, 3 no fixtures."
    )
    options.add_repo(parser)
    options.add_rev(parser)
    options.add_manifest(parser)
    options.add_jobs(parser)
    options.add_timeout(parser)
    options.handled_by(parser, _replay_known_bad)


def _replay_known_bad(args: argparse.Namespace) -> int:
    return run_replay_known_bad(
        args.repo, manifest=args.manifest, jobs=args.jobs, timeout=args.timeout, rev=args.rev
    )
