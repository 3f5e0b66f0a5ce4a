"""`andgate known-bad refresh`: re-derive stale known-bad fixtures for the current code.

A refactor that moves production code makes a fixture stop applying (`KNOWN_BAD_STALE`)
though the bug it puts back still makes sense. This command puts the same bug back into
the working tree as it is (uncommitted edits included), in a temporary worktree: `git
apply` (the fixture is not stale), else `git apply --3way` (git merges the fixture's
change into the moved code from the blobs it names), else the hunks re-located by their
removed lines (`commands.relocate`). Each refreshed fixture is replayed against the
oracle class first, as `replay-known-bad` does, and written over the stale one only when
an oracle item catches it (`--no-replay` writes it unreplayed). A fixture it cannot
re-derive is one line naming it and the fix; nothing else is written.

The refreshed fixture is a change to a known-bad fixture (oracle side): it lands in the
change that moved the code, and an owner's approval of that change makes `check` replay
head's fixtures (and judge `fixtures_dir` by head's lock). docs/troubleshooting.md,
KNOWN_BAD_STALE, has the loop.

Exit codes: 0 nothing stale, or every stale fixture refreshed (and caught), 1 one could
not be refreshed or is no longer caught, 2 could not run.
"""

from __future__ import annotations

import argparse
import enum
from dataclasses import dataclass, replace
from pathlib import Path

from andgate.commands import options
from andgate.commands.common import (
    Target,
    head_plan,
    open_target,
    plural,
    run_environment,
    table,
    target_pool,
    write_atomic,
)
from andgate.commands.relocate import CannotRelocate, parse_patch, relocate
from andgate.commands.replay_known_bad import _replay_all
from andgate.errors import BadInput
from andgate.exitcodes import Exit
from andgate.process.requests import DEFAULT_ITEM_TIMEOUT, DEFAULT_TIMEOUT
from andgate.process.worktree import Worktree, WorktreePool
from andgate.records import ReplayFacts, ReplayStatus
from andgate.trust.config import KnownBad
from andgate.trust.paths import is_under


class How(enum.StrEnum):
    APPLIES = "applies"  # not stale
    THREE_WAY = "three-way merge"
    RELOCATED = "hunks re-located"
    CANNOT = "cannot"


@dataclass(frozen=True)
class Refreshed:
    fixture: KnownBad
    how: How
    patch: bytes = b""  # the re-derived fixture (preamble kept)
    problem: str = ""


def run_refresh(
    repo: Path,
    names: list[str],
    *,
    manifest: str,
    jobs: int,
    timeout: float = DEFAULT_TIMEOUT,
    replay: bool = True,
    item_timeout: float | None = DEFAULT_ITEM_TIMEOUT,
) -> int:
    target = open_target(repo, manifest, None, takes_rev=False)  # it writes the working tree
    print(target.first_line("known-bad refresh"))
    fixtures = _chosen(target, names)
    with target_pool(target) as (scratch, pool):
        results = [_refresh(i, f, target, pool, scratch) for i, f in enumerate(fixtures)]
        stale = [r for r in results if r.how not in (How.APPLIES, How.CANNOT)]
        limits = (jobs, timeout, item_timeout)
        replays = _replays(target, stale, pool, scratch, limits) if replay else {}
    written = _write(target, stale, replays)
    print(_render(target, results, replays, written), end="")
    failed = any(r.how is How.CANNOT for r in results) or len(written) < len(stale)
    return Exit.BLOCK if failed else Exit.OK


def _chosen(target: Target, names: list[str]) -> list[KnownBad]:
    fixtures = list(target.config.known_bad)
    folder = target.config.manifest.known_bad_dir
    if not fixtures:
        raise BadInput(f"known-bad refresh: no *.patch fixture under {folder}; nothing to refresh")
    if not names:
        return fixtures
    # A fixture by its name (`kb_x`), its file name (`kb_x.patch`) or its path.
    by_name = {f.name: f for f in fixtures} | {f.path: f for f in fixtures}
    by_name |= {f"{f.name}.patch": f for f in fixtures}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        known = ", ".join(f.name for f in fixtures)
        raise BadInput(
            f"known-bad refresh: {', '.join(unknown)}: no such fixture under {folder}; "
            f"name one of: {known}"
        )
    return list(dict.fromkeys(by_name[n] for n in names))


def _refresh(
    index: int, fixture: KnownBad, target: Target, pool: WorktreePool, scratch: Path
) -> Refreshed:
    """The fixture as it applies to the target: as it is, merged, or re-located."""
    source = scratch / f"refresh-{index}.patch"
    source.write_bytes(fixture.patch)
    with pool.lease(target.commit) as worktree:
        if worktree.apply_patch(source) is None:
            return Refreshed(fixture, How.APPLIES)
    with pool.lease(target.commit) as worktree:
        if worktree.apply_3way(source) is None:
            return _derived(fixture, How.THREE_WAY, worktree)
    with pool.lease(target.commit) as worktree:
        problem = _relocate_in(worktree, fixture)
        if problem is None:
            return _derived(fixture, How.RELOCATED, worktree)
    return Refreshed(fixture, How.CANNOT, problem=problem)


def _relocate_in(worktree: Worktree, fixture: KnownBad) -> str | None:
    """Apply the fixture's hunks where their lines are now; why not, when they are not."""
    text = fixture.patch.decode("utf-8", "surrogateescape")
    files = parse_patch(text)
    if not files:
        return "it holds no `diff --git` file patch"
    for patch in files:
        path = worktree.path / patch.path
        if not patch.plain or not path.is_file() or path.is_symlink():
            return f"{patch.path}: not a text edit of a file the code still has"
        before = path.read_bytes().decode("utf-8", "surrogateescape")
        try:
            after = relocate(before, patch.hunks, patch.path)
        except CannotRelocate as exc:
            return str(exc)
        path.write_bytes(after.encode("utf-8", "surrogateescape"))
    return None


def _derived(fixture: KnownBad, how: How, worktree: Worktree) -> Refreshed:
    diff = worktree.diff_head()
    if not diff.strip():
        return Refreshed(fixture, How.CANNOT, problem="the bug it puts back is in the code already")
    preamble = fixture.patch.split(b"diff --git ", 1)[0]
    return Refreshed(fixture, how, preamble + diff)


def _replays(
    target: Target,
    stale: list[Refreshed],
    pool: WorktreePool,
    scratch: Path,
    limits: tuple[int, float, float | None],
) -> dict[str, ReplayFacts]:
    """Each refreshed fixture replayed against the oracle class, by fixture name, as
    `replay-known-bad` replays (`limits`: jobs, the process and the item timeout)."""
    if not stale:
        return {}
    refreshed = tuple(replace(r.fixture, patch=r.patch) for r in stale)
    config = replace(target.config, known_bad=refreshed)
    judged = replace(target, config=config)
    plan = head_plan(target.git, target.commit, config, scratch)
    if not plan.trusted_oracle_files:
        return {}
    jobs, timeout, item_timeout = limits
    environment = run_environment(judged, plan, item_timeout)
    _, replays = _replay_all(plan, judged, pool, scratch, (jobs, timeout), environment)
    return {r.name: r for r in replays}


def _write(target: Target, stale: list[Refreshed], replays: dict[str, ReplayFacts]) -> list[str]:
    """Write each refreshed fixture that an oracle item catches (any, unreplayed)."""
    written = []
    for r in stale:
        replay = replays.get(r.fixture.name)
        if replays and (replay is None or replay.status is not ReplayStatus.BITES):
            continue
        write_atomic(target.git.repo / r.fixture.path, r.patch, repo=target.git.repo)
        written.append(r.fixture.path)
    return written


def _render(
    target: Target,
    results: list[Refreshed],
    replays: dict[str, ReplayFacts],
    written: list[str],
) -> str:
    rows = [(r.fixture.name, *_status(r, replays.get(r.fixture.name), written)) for r in results]
    lines = ["", *table(rows), ""]
    manifest = target.config.manifest
    if written:
        locked = any(is_under(p, manifest.fixtures_dir) for p in written)
        lines += [
            f"Rewrote {plural(len(written), 'fixture')}. Commit "
            f"{'it' if len(written) == 1 else 'them'} in the change that moved the code; an "
            "owner approves that change (check then replays head's fixtures)"
            + (f"; run `andgate lock update` first ({manifest.fixtures_dir})." if locked else "."),
        ]
    refreshed = sum(1 for r in results if r.how not in (How.APPLIES, How.CANNOT))
    lines.append(
        f"result: {refreshed} of {plural(len(results), 'fixture')} refreshed, "
        f"{len(written)} written"
    )
    return "\n".join(lines) + "\n"


def _status(r: Refreshed, replay: ReplayFacts | None, written: list[str]) -> tuple[str, str]:
    if r.how is How.APPLIES:
        return "ok", "applies as it is: not stale"
    if r.how is How.CANNOT:
        return "CANNOT", (
            f"{r.problem}; write {r.fixture.path} again for the current code (its README), "
            "or pick a new one: andgate known-bad mutants --write 3"
        )
    if replay is None:
        return "refreshed", f"{r.how.value}; not replayed (--no-replay); written"
    if replay.status is ReplayStatus.BITES:
        return "refreshed", f"{r.how.value}; caught by {', '.join(replay.failed[:2])}; written"
    what = replay.error or replay.problem or "every oracle item passes under it"
    return "NOT CAUGHT", (
        f"{r.how.value}, but {what}: not written; strengthen the oracle or replace the fixture"
    )


# -- the command line ---------------------------------------------------------------------


def declare_refresh(actions: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = actions.add_parser(
        "refresh",
        help="re-derive stale fixtures (KNOWN_BAD_STALE) for the current code",
        description="For each fixture that no longer applies to the working tree as it is "
        "(uncommitted edits included), put the same bug back into the current code: git "
        "apply --3way, else its hunks re-located by the lines they change. Each refreshed "
        "fixture is replayed against the oracle class and written over the stale one when "
        "an oracle item catches it. Exit 0 nothing stale or all refreshed, 1 one could not "
        "be refreshed or is no longer caught, 2 could not run.",
    )
    parser.add_argument(
        "names", nargs="*", metavar="FIXTURE", help="fixtures to refresh (default: every one)"
    )
    options.add_repo(parser)
    options.add_manifest(parser)
    options.add_jobs(parser)
    options.add_timeout(parser)
    options.add_item_timeout(parser)
    parser.add_argument(
        "--no-replay",
        action="store_true",
        help="write refreshed fixtures without replaying them against the oracle class",
    )
    options.handled_by(parser, _refresh_command)


def _refresh_command(args: argparse.Namespace) -> int:
    return run_refresh(
        args.repo,
        list(args.names),
        manifest=args.manifest,
        jobs=args.jobs,
        timeout=args.timeout,
        replay=not args.no_replay,
        item_timeout=options.item_timeout(args),
    )
