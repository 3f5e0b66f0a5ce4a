"""`andgate known-bad harvest` and `andgate known-bad mutants`: where fixtures come from.

Both judge the working tree as it is, uncommitted edits included (or `--rev
REV`), with its own trust config, in temporary worktrees that import the
worktree's code as `check`'s do (the working tree is never touched), and both
first run the oracle class there alone: a patch that "bites" an oracle which
already fails proves nothing. harvest walks the history of HEAD (or REV).

- harvest: the reverse of each recent commit's production diff, re-targeted to
  HEAD, replayed against the oracle class. Reverts the oracle kills are written
  as candidate fixtures; reverts it misses are listed: each is a bug the project
  once fixed that its oracles would let back in.
- mutants: small mutants of HEAD's production functions, each replayed the same
  way; per file and function, how many survive. `--write N` proposes the N most
  useful killed mutants as fixtures.

Each test item has `--item-timeout` seconds, as in `check`; the candidates'
limit comes from what the items took in that first oracle run (`process.limits`),
and a kill by a timeout counts only when the item times out again alone.

What both start from (the judged tree, its config, the proposals folder, the
replayer with the oracle class proven green): `known_bad_session.py`; what they
print and write: `known_bad_reports.py`.
Candidates go to a proposals folder, never into `known_bad_dir`. Exit codes:
0 done (misses and survivors are findings, not failures), 2 could not run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from andgate.check.cache import default_cache_dir
from andgate.check.discrimination.mutate import Mutant, mutants_of
from andgate.commands import options
from andgate.commands.common import target_pool
from andgate.commands.harvest import (
    FixCommit,
    Harvested,
    Replayer,
    Tally,
    fix_commits,
    harvest_commit,
    production_filter,
    replay_patch,
    test_side_filter,
)
from andgate.commands.known_bad_reports import (
    HarvestSummary,
    MutantRun,
    MutantsSummary,
    write_harvest,
    write_mutants,
)
from andgate.commands.known_bad_session import Session, open_session, oracle_replayer, tree_name
from andgate.commands.refresh import declare_refresh
from andgate.errors import AndgateError
from andgate.exitcodes import Exit
from andgate.process.requests import DEFAULT_ITEM_TIMEOUT
from andgate.process.run import run_parallel
from andgate.records import ReplayStatus
from andgate.trust.paths import matching

DEFAULT_BUDGET = 600.0
DEFAULT_LIMIT = 50
PROCESS_TIMEOUT = 300.0


# -- harvest -------------------------------------------------------------------------------


def run_harvest(
    repo: Path,
    *,
    manifest: str,
    since: str | None = None,
    limit: int = DEFAULT_LIMIT,
    out: Path | None = None,
    budget: float = DEFAULT_BUDGET,
    jobs: int = 1,
    timeout: float = PROCESS_TIMEOUT,
    cache_dir: Path | None = None,
    rev: str | None = None,
    item_timeout: float | None = DEFAULT_ITEM_TIMEOUT,
) -> int:
    started = time.monotonic()
    session = open_session(repo, manifest, out, rev)
    print(session.target.first_line("known-bad harvest"))
    since_sha = session.git.resolve(since, what="--since") if since else None
    is_production = production_filter(session.config)
    fixes, scanned = fix_commits(
        session.git,
        session.target.history,
        since=since_sha,
        limit=limit,
        is_production=is_production,
        is_test=test_side_filter(session.config),
    )
    with target_pool(session.target) as (scratch, pool):
        replayer = oracle_replayer(
            session,
            pool,
            scratch,
            deadline=started + budget,
            timeout=timeout,
            cache_dir=cache_dir,
            item_timeout=item_timeout,
        )
        tally = Tally("harvest", len(fixes), "commits", ("killed", "missed"))
        # Parallel over commits; within one, revert and replay share a worktree.
        results = run_parallel(_harvest_tasks(fixes, replayer, tally), jobs)
    seconds = time.monotonic() - started
    summary = HarvestSummary(session, since_sha, limit, budget, scanned, results, seconds)
    write_harvest(summary)
    print(summary.render_text(), end="")
    return Exit.OK


def _harvest_tasks(
    fixes: Sequence[FixCommit], replayer: Replayer, tally: Tally
) -> list[Callable[[], Harvested]]:
    def task(fix: FixCommit, index: int) -> Harvested:
        result = harvest_commit(fix, index, replayer)
        tally.record(result.fate.value)
        return result

    return [partial(task, fix, index) for index, fix in enumerate(fixes)]


# -- mutants -------------------------------------------------------------------------------


def run_mutants(
    repo: Path,
    *,
    manifest: str,
    paths: Sequence[str] = (),
    budget: float = DEFAULT_BUDGET,
    write: int = 0,
    out: Path | None = None,
    jobs: int = 1,
    timeout: float = PROCESS_TIMEOUT,
    cache_dir: Path | None = None,
    rev: str | None = None,
    item_timeout: float | None = DEFAULT_ITEM_TIMEOUT,
) -> int:
    started = time.monotonic()
    session = open_session(repo, manifest, out, rev, writes=write > 0)
    print(session.target.first_line("known-bad mutants"))
    mutants = _mutants_at_head(session, paths)
    if not mutants:
        where = f" matching {' '.join(paths)}" if paths else ""
        raise AndgateError(
            f"no production function to mutate in {tree_name(session)}{where}; "
            "check --paths (gitignore-style globs relative to the repository root)"
        )
    with target_pool(session.target) as (scratch, pool):
        replayer = oracle_replayer(
            session,
            pool,
            scratch,
            deadline=started + budget,
            timeout=timeout,
            cache_dir=cache_dir,
            item_timeout=item_timeout,
        )
        tally = Tally("mutants", len(mutants), "mutants", ("killed", "survived"))
        runs = run_parallel(_mutant_tasks(mutants, replayer, tally), jobs)
    summary = MutantsSummary(session, runs, time.monotonic() - started, budget)
    chosen = most_useful([r for r in runs if r.status == "killed"], write)
    if write:
        write_mutants(summary, chosen)
    print(summary.render_text(chosen), end="")
    return Exit.OK


def _mutants_at_head(session: Session, globs: Sequence[str]) -> list[Mutant]:
    is_production = production_filter(session.config)
    entries = {
        e.path: e.sha
        for e in session.git.ls_tree(session.head)
        if e.kind == "blob" and e.mode != "120000" and e.path.endswith(".py")
    }
    files = sorted(p for p in entries if is_production(p))
    if globs:
        files = sorted(matching(files, globs))
    blobs = session.git.read_blobs(entries[p] for p in files)
    mutants = []
    for path in files:
        text = blobs.get(entries[path], b"").decode("utf-8", "replace")
        mutants += mutants_of(path, text)
    return mutants


def _mutant_tasks(
    mutants: Sequence[Mutant], replayer: Replayer, tally: Tally
) -> list[Callable[[], MutantRun]]:
    def task(mutant: Mutant, index: int) -> MutantRun:
        facts = replay_patch(mutant.name, mutant.patch, index, replayer)
        if facts is None:
            run = MutantRun(mutant, "not run")
        elif facts.status is ReplayStatus.BITES:
            run = MutantRun(mutant, "killed", facts.failed, facts.seconds)
        elif facts.status is ReplayStatus.GREEN:
            run = MutantRun(mutant, "survived", seconds=facts.seconds)
        else:
            why = facts.error or facts.problem
            run = MutantRun(mutant, "error", seconds=facts.seconds, problem=why)
        tally.record(run.status)
        return run

    return [partial(task, mutant, index) for index, mutant in enumerate(mutants)]


def most_useful(killed: Sequence[MutantRun], count: int) -> list[MutantRun]:
    """The `count` killed mutants that make the best fixtures: one per function
    first (a fixture per place the oracles guard), smallest diff first."""
    ranked = sorted(killed, key=lambda r: (r.mutant.size, r.mutant.path, r.mutant.line))
    seen: set[tuple[str, str]] = set()
    first: list[MutantRun] = []
    rest: list[MutantRun] = []
    for run in ranked:
        key = (run.mutant.path, run.mutant.function)
        (rest if key in seen else first).append(run)
        seen.add(key)
    return (first + rest)[:count]


# -- the command line ---------------------------------------------------------------------


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Find where known-bad fixtures come from, on the working tree as it is (uncommitted "
        "edits included; --rev for a commit) in temporary worktrees. Candidates go to a "
        "proposals folder, never into known_bad_dir; `refresh` rewrites stale fixtures in "
        "known_bad_dir for the current code. Exit 0 done, 2 could not run."
    )
    actions = parser.add_subparsers(dest="known_bad_command", metavar="ACTION", required=True)
    harvest = actions.add_parser(
        "harvest",
        help="revert past production changes on HEAD; propose those the oracle kills",
        description="Walk the history for commits that changed production code, revert "
        "each one's production diff on HEAD (three-way; only what applies cleanly) and run "
        "the oracle class against it. Reverts the oracle kills are written as candidate "
        "fixtures, with a report that also lists the fixes the oracle misses. Exit 0 "
        "done, 2 could not run.",
    )
    harvest.add_argument(
        "--since", metavar="REV", help="walk only commits after REV (default: all history)"
    )
    harvest.add_argument(
        "--limit",
        type=options.positive_int,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"at most N commits that changed production code (default: {DEFAULT_LIMIT})",
    )
    mutants = actions.add_parser(
        "mutants",
        help="mutate production functions; report where the oracle class is blind",
        description="Small mutants of HEAD's production functions (comparisons, and/or, "
        "not, constants, returns, removed statements), each run against the oracle "
        "class; report per file and function how many survive. Exit 0 done, 2 could "
        "not run.",
    )
    mutants.add_argument(
        "--paths",
        nargs="+",
        default=[],
        metavar="GLOB",
        help="production files to mutate (gitignore-style globs; default: all)",
    )
    mutants.add_argument(
        "--write",
        type=options.count,
        default=0,
        metavar="N",
        help="write the N most useful killed mutants as candidate fixtures (default: 0)",
    )
    for action, handler in ((harvest, _harvest), (mutants, _mutants)):
        _add_common_options(action)
        options.handled_by(action, handler)
    declare_refresh(actions)  # the stale fixtures of known_bad_dir, for the current code


def _add_common_options(action: argparse.ArgumentParser) -> None:
    options.add_repo(action)
    options.add_rev(action)
    options.add_manifest(action)
    action.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="proposals folder (default: artifacts/known_bad_proposals/ in the repo; never "
        "inside known_bad_dir)",
    )
    action.add_argument(
        "--budget",
        type=options.positive_float,
        default=DEFAULT_BUDGET,
        metavar="S",
        help="time budget in seconds; what is left undone is reported "
        f"(default: {DEFAULT_BUDGET:.0f})",
    )
    options.add_jobs(action)
    options.add_timeout(action, default=PROCESS_TIMEOUT)
    options.add_item_timeout(action)
    options.add_no_cache(
        action,
        "neither read nor write andgate's cache (remembered killers and, for harvest, "
        "reverts the oracle class let through)",
    )


def _harvest(args: argparse.Namespace) -> int:
    return run_harvest(args.repo, since=args.since, limit=args.limit, **_common(args))


def _mutants(args: argparse.Namespace) -> int:
    return run_mutants(args.repo, paths=tuple(args.paths), write=args.write, **_common(args))


def _common(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "manifest": args.manifest,
        "out": args.out,
        "budget": args.budget,
        "jobs": args.jobs,
        "timeout": args.timeout,
        "rev": args.rev,
        "cache_dir": None if args.no_cache else default_cache_dir(),
        "item_timeout": options.item_timeout(args),
    }
