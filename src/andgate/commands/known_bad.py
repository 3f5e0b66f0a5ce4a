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

What both start from (the judged tree, its config, the proposals folder, the
replayer with the oracle class proven green): `known_bad_session.py`.
Candidates go to a proposals folder, never into `known_bad_dir`. Exit codes:
0 done (misses and survivors are findings, not failures), 2 could not run.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from andgate.check.cache import default_cache_dir
from andgate.check.discrimination.mutate import Mutant, mutants_of
from andgate.commands import options
from andgate.commands.common import plural, table, target_pool
from andgate.commands.harvest import (
    Fate,
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
from andgate.commands.known_bad_session import Session, open_session, oracle_replayer, tree_name
from andgate.errors import AndgateError
from andgate.exitcodes import Exit
from andgate.process.run import run_parallel
from andgate.records import ReplayStatus
from andgate.trust.paths import matching

HARVEST_SCHEMA = "andgate.harvest/1"
MUTANTS_SCHEMA = "andgate.mutants/1"
DEFAULT_BUDGET = 600.0
DEFAULT_LIMIT = 50
PROCESS_TIMEOUT = 300.0
# the revert applies cleanly to HEAD
APPLIED = (Fate.KILLED, Fate.MISSED, Fate.UNPROVEN, Fate.COSMETIC)


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
        )
        tally = Tally("harvest", len(fixes), "commits", ("killed", "missed"))
        # Parallel over commits; within one, revert and replay share a worktree.
        results = run_parallel(_harvest_tasks(fixes, replayer, tally), jobs)
    seconds = time.monotonic() - started
    summary = HarvestSummary(session, since_sha, limit, budget, scanned, results, seconds)
    _write_harvest(summary)
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


@dataclass(frozen=True)
class HarvestSummary:
    session: Session
    since: str | None
    limit: int
    budget: float
    scanned: int
    results: Sequence[Harvested]
    seconds: float

    def of(self, fate: Fate) -> list[Harvested]:
        return [r for r in self.results if r.fate is fate]

    def payload(self) -> dict[str, Any]:
        return {
            "schema": HARVEST_SCHEMA,
            "head": self.session.head,
            "since": self.since,
            "limit": self.limit,
            "budget": self.budget,
            "commits_scanned": self.scanned,
            "commits": len(self.results),
            "applied": sum(r.fate in APPLIED for r in self.results),
            "counts": {fate.value: len(self.of(fate)) for fate in Fate},
            "seconds": round(self.seconds, 1),
            "results": [_harvested_json(r) for r in self.results],
        }

    def render_text(self) -> str:
        counts = self.payload()["counts"]
        lines = [
            f"andgate known-bad harvest: HEAD {self.session.head[:12]}, "
            f"{plural(len(self.results), 'commit')} that changed production code "
            f"(of {self.scanned} walked), {self.seconds:.1f}s",
            f"  {counts['killed']} killed (proposed), {counts['missed']} missed by the oracle "
            f"class, {counts[Fate.UNPROVEN.value]} let through but not shown to be a fix, "
            f"{counts['stale']} no longer apply, {counts['cosmetic']} cosmetic, "
            f"{counts['error']} errors, "
            f"{counts['over budget']} not tried (budget)",
        ]
        remembered = sum(r.remembered for r in self.results)
        if remembered:
            lines.append(
                f"  {remembered} let through in an earlier run under the same oracle files "
                "(not replayed; --no-cache replays them)"
            )
        for title, fate in (("proposed", Fate.KILLED), ("missed", Fate.MISSED)):
            rows = [(r.commit.sha[:10], r.commit.subject[:60]) for r in self.of(fate)]
            if rows:
                lines += ["", f"{title}:", *table(rows)]
        lines += ["", f"report: {self.session.out / 'report.md'}"]
        return "\n".join(lines) + "\n"

    def render_markdown(self) -> str:
        counts = self.payload()["counts"]
        lines = [
            "# Known-bad candidates from history",
            "",
            f"HEAD `{self.session.head[:12]}`; {len(self.results)} commits that changed "
            f"production code ({self.scanned} walked, limit {self.limit}, budget "
            f"{self.budget:.0f}s), {self.seconds:.1f}s.",
            "",
            "These are proposals. To promote one, an owner moves it into "
            f"`{self.session.config.manifest.known_bad_dir}` (a trust-root change).",
            "",
            f"## Proposed fixtures ({counts['killed']})",
            "",
        ]
        lines += _md_table(
            ("fixture", "commit", "subject", "files", "killed by", "time"),
            [
                (
                    f"`{r.fixture_name}.patch`",
                    r.commit.sha[:10],
                    r.commit.subject,
                    ", ".join(r.commit.files),
                    r.killers[0] if r.killers else "",
                    f"{r.seconds:.1f}s",
                )
                for r in self.of(Fate.KILLED)
            ],
        )
        lines += [
            "",
            f"## Fixes the oracle class misses ({counts['missed']})",
            "",
            "Each revert applies to HEAD, every oracle item still passes, and the tests the "
            "commit itself added or changed fail on it (and pass on HEAD): a bug the project "
            "once fixed that its oracles would let back in.",
            "",
        ]
        lines += _md_table(
            ("commit", "subject", "files", "shown by", "time", "revert"),
            [
                (
                    r.commit.sha[:10],
                    r.commit.subject,
                    ", ".join(r.commit.files),
                    ", ".join(r.evidence[:3]),
                    f"{r.seconds:.1f}s",
                    f"`missed/{r.fixture_name}.patch`",
                )
                for r in self.of(Fate.MISSED)
            ],
        )
        lines += [
            "",
            f"## Let through, not shown to be a fix ({counts[Fate.UNPROVEN.value]})",
            "",
            "Each revert applies to HEAD and every oracle item still passes, but nothing "
            "shows the commit fixed a bug: it changed no test outside the oracle files, or "
            "none of its tests fails on the revert (a refactor, a feature, maintenance).",
            "",
        ]
        lines += _md_table(
            ("commit", "subject", "files", "time"),
            [
                (
                    r.commit.sha[:10],
                    r.commit.subject,
                    ", ".join(r.commit.files),
                    f"{r.seconds:.1f}s" + (" (remembered)" if r.remembered else ""),
                )
                for r in self.of(Fate.UNPROVEN)
            ],
        )
        shown = (Fate.KILLED, Fate.MISSED, Fate.UNPROVEN)
        others = [r for r in self.results if r.fate not in shown]
        lines += ["", f"## Not replayed ({len(others)})", ""]
        lines += _md_table(
            ("commit", "subject", "why"),
            [(r.commit.sha[:10], r.commit.subject, r.problem or r.fate.value) for r in others],
        )
        return "\n".join(lines) + "\n"


def _harvested_json(result: Harvested) -> dict[str, Any]:
    return {
        "commit": result.commit.sha,
        "subject": result.commit.subject,
        "files": list(result.commit.files),
        "fate": result.fate.value,
        "killed_by": list(result.killers),
        "seconds": round(result.seconds, 2),
        "problem": result.problem,
        "fixture": f"{result.fixture_name}.patch" if result.fate is Fate.KILLED else None,
        "shown_by": list(result.evidence),
        "remembered": result.remembered,
    }


def _write_harvest(summary: HarvestSummary) -> None:
    folder = summary.session.folder
    assert folder is not None
    with folder:
        for result in summary.of(Fate.KILLED):
            folder.put(f"{result.fixture_name}.patch", result.patch)
        for result in summary.of(Fate.MISSED):
            folder.put(f"missed/{result.fixture_name}.patch", result.patch)
        folder.put("report.json", _json(summary.payload()))
        folder.put("report.md", summary.render_markdown().encode("utf-8"))


# -- mutants -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MutantRun:
    mutant: Mutant
    status: str  # killed, survived, error, not run
    killers: tuple[str, ...] = ()
    seconds: float = 0.0
    problem: str = ""


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
        )
        tally = Tally("mutants", len(mutants), "mutants", ("killed", "survived"))
        runs = run_parallel(_mutant_tasks(mutants, replayer, tally), jobs)
    summary = MutantsSummary(session, runs, time.monotonic() - started, budget)
    chosen = most_useful([r for r in runs if r.status == "killed"], write)
    if write:
        _write_mutants(summary, chosen)
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


def mutant_fixture_name(mutant: Mutant) -> str:
    stem = mutant.path.rsplit("/", 1)[-1].removesuffix(".py")
    function = mutant.function.replace(".", "_")
    return f"kb_mut_{stem}_{function}_{mutant.line}_{mutant.kind}.patch"


@dataclass(frozen=True)
class MutantsSummary:
    session: Session
    runs: Sequence[MutantRun]
    seconds: float
    budget: float

    def per_function(self) -> list[tuple[str, str, int, int, int]]:
        """(path, function, mutants, killed, survived) in source order."""
        rows: dict[tuple[str, str], list[int]] = {}
        for run in self.runs:
            counts = rows.setdefault((run.mutant.path, run.mutant.function), [0, 0, 0])
            counts[0] += 1
            counts[1] += run.status == "killed"
            counts[2] += run.status == "survived"
        return [(p, f, *c) for (p, f), c in rows.items()]  # type: ignore[misc]

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.runs)

    def payload(self, chosen: Sequence[MutantRun]) -> dict[str, Any]:
        return {
            "schema": MUTANTS_SCHEMA,
            "head": self.session.head,
            "budget": self.budget,
            "seconds": round(self.seconds, 1),
            "counts": {s: self.count(s) for s in ("killed", "survived", "error", "not run")},
            "functions": [
                {"path": p, "function": f, "mutants": n, "killed": k, "survived": s}
                for p, f, n, k, s in self.per_function()
            ],
            "mutants": [
                {
                    "path": r.mutant.path,
                    "function": r.mutant.function,
                    "line": r.mutant.line,
                    "kind": r.mutant.kind,
                    "description": r.mutant.description,
                    "status": r.status,
                    "killed_by": list(r.killers),
                    "seconds": round(r.seconds, 2),
                    "problem": r.problem,
                }
                for r in self.runs
            ],
            "written": [mutant_fixture_name(r.mutant) for r in chosen],
        }

    def render_text(self, chosen: Sequence[MutantRun]) -> str:
        lines = [
            f"andgate known-bad mutants: HEAD {self.session.head[:12]}, "
            f"{plural(len(self.runs), 'mutant')}: {self.count('killed')} killed, "
            f"{self.count('survived')} survived, {self.count('error')} errors, "
            f"{self.count('not run')} not run (budget), {self.seconds:.1f}s",
            "",
        ]
        rows = [("file", "function", "mutants", "killed", "survived")]
        rows += [(p, f, str(n), str(k), str(s)) for p, f, n, k, s in self.per_function()]
        lines += table(rows)
        survivors = [r for r in self.runs if r.status == "survived"]
        if survivors:
            lines += ["", "survivors (where the oracles are blind):"]
            lines += table([_where(r) for r in survivors])
        if chosen:
            lines += ["", f"proposed in {self.session.out}:"]
            lines += [f"  {mutant_fixture_name(r.mutant)}" for r in chosen]
        return "\n".join(lines) + "\n"


def _where(run: MutantRun) -> tuple[str, str, str]:
    m = run.mutant
    return (f"{m.path}:{m.line}", m.function, m.description)


def _write_mutants(summary: MutantsSummary, chosen: Sequence[MutantRun]) -> None:
    folder = summary.session.folder
    assert folder is not None
    with folder:
        for run in chosen:
            folder.put(mutant_fixture_name(run.mutant), run.mutant.patch)
        folder.put("mutants.json", _json(summary.payload(chosen)))


def _md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return ["(none)"]
    cells = [header, tuple("---" for _ in header), *rows]
    return ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]


def _json(payload: dict[str, Any]) -> bytes:
    return (json.dumps(payload, indent=2, sort_keys=False) + "\n").encode("utf-8")


# -- the command line ---------------------------------------------------------------------


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Find where known-bad fixtures come from, on the working tree as it is (uncommitted "
        "edits included; --rev for a commit) in temporary worktrees. Candidates go to a "
        "proposals folder, never into known_bad_dir. Exit 0 done, 2 could not run."
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
    }
