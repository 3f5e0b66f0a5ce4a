"""Known-bad replay: proof that the oracles still bite.

Each fixture is a patch that reintroduces a real bug. It is applied with
`git apply` to the trusted tree (head's production code, base's tests) in a
worktree of its own, and the oracle class runs with `-x`: one failing oracle
item is the proof, so there is no need to run the rest.

Likely killers first: before the class runs, `replay_order.first_files` reads
the fixture's `diff --git` headers and hunks and the worktree's oracle files
(with `ast`, never importing them) and names the oracle files that import a
module the fixture patches, or import its package and name a function, class or
module-level name the hunks touch. Those files run first, alone, in a pytest
process that collects only them; the other files run in a second one only if
none of the first failed: on a cold cache a killer in the last oracle file is
found after a few items, without collecting the rest of the class. A part (the
first files, or the rest) in which a file fails to collect proves nothing (a
file may need what another oracle file sets up): the whole class then runs in
one process, in its own order.

Killers' files first: the oracle items that failed under a fixture last time
(the killer cache) name the files that run first instead of the guess, each
whole and in its own order, so a remembered killer runs after the items before
it, as in the class. It never runs alone: an item can fail alone with or without
the fixture (it relies on state an earlier item sets up), and the cache is only
a hint that anything can write. If those files catch nothing (the oracle
changed), the rest runs. The cache and the guess only pick which files run
first: every item still runs when none fails. Neither can rule out a file that
fails when run apart from the other oracle files: one that fails to collect
proves nothing (the whole class decides); one whose items fail is a limit
(docs/threat-model.md).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from andgate.check.cache import KillerCache
from andgate.check.oracle.replay_order import first_files
from andgate.process.requests import ITEM_TIMEOUT_FLOOR, RunRequest
from andgate.process.results import RunResult
from andgate.process.run import run_pytest
from andgate.process.signals import wait_event
from andgate.process.worktree import WorktreePool
from andgate.records import KnownBadFacts, Outcome, ReplayFacts
from andgate.trust.config import BaseConfig, KnownBad

# An attempt that failed and passed on rerun noticed the bug too.
BITES = {Outcome.FAILED, Outcome.ERROR, Outcome.RERUN_PASSED}
COLLECTION_ERROR = "collection error in "  # how a replay's collection error is listed
DIFF_HEADER = re.compile(rb"^diff --git a/.* b/(?P<path>.*)$")
# An oracle item that timed out under a fixture runs again alone with a limit of this
# many times what it took in the check's own run of the oracle class (within the floor
# and the check's item limit); the class runs again without one that does not time out
# again, at most this many times.
ALONE_FACTOR = 10.0
MAX_UNCONFIRMED = 3
# A symbolic link (mode 120000) created, re-targeted or re-moded by the patch.
SYMLINK_LINE = re.compile(rb"^(?:new file mode|new mode) 120000\s*$|^index \S+ 120000\s*$")


def refusal(patch: bytes) -> str | None:
    """Why a fixture is refused before `git apply` sees it, or None.

    `git apply` refuses paths outside the worktree and inside `.git`, but it
    happily creates a symbolic link pointing anywhere, which a later process
    would follow out of the worktree. A known-bad fixture reintroduces a bug in
    regular files; it has no reason to touch a link.
    """
    if not patch.strip():
        return "the fixture is empty; regenerate it with git diff"
    path = b"?"
    for line in patch.splitlines():
        header = DIFF_HEADER.match(line)
        if header:
            path = header["path"]
        elif SYMLINK_LINE.match(line):
            name = path.decode("utf-8", "backslashreplace").rstrip()
            return (
                f"the fixture makes {name} a symbolic link; known-bad fixtures may edit "
                "regular files only"
            )
    return None


def _explain(problem: str) -> str:
    """git's complaint, with a fix where git's own hint would mislead."""
    problem = problem.removeprefix("error: ")
    if "No valid patches in input" in problem:
        return "not a patch (git apply found no diff in it); regenerate it with git diff"
    if problem.startswith("invalid path"):
        return f"{problem}: a fixture may edit files inside the repository only"
    return f"{problem}; refresh it for the current code: andgate known-bad refresh"


def replay_fixture(
    fixture: KnownBad,
    index: int,
    *,
    pool: WorktreePool,
    commit: str,
    oracle_request: RunRequest,
    scratch: Path,
    timeout: float,
    cache: KillerCache | None = None,
    oracle_digest: str = "",
    plain: PlainRun | None = None,
) -> ReplayFacts:
    refused = refusal(fixture.patch)
    if refused is not None:
        return ReplayFacts(fixture.name, applied=False, problem=refused)
    patch = scratch / f"known-bad-{index}.patch"
    patch.write_bytes(fixture.patch)
    with pool.lease(commit) as worktree:
        problem = worktree.apply_patch(patch)
        if problem is not None:
            return ReplayFacts(fixture.name, applied=False, problem=_explain(problem))
        return replay_applied(
            fixture,
            index,
            worktree.path,
            oracle_request=oracle_request,
            scratch=scratch,
            timeout=timeout,
            cache=cache,
            oracle_digest=oracle_digest,
            plain=plain,
        )


def replay_applied(
    fixture: KnownBad,
    index: int,
    worktree: Path,
    *,
    oracle_request: RunRequest,
    scratch: Path,
    timeout: float,
    cache: KillerCache | None = None,
    oracle_digest: str = "",
    plain: PlainRun | None = None,
) -> ReplayFacts:
    """The oracle class (likely killers first, `-x`) in a worktree where the fixture
    is already applied (a harvest applies its revert three-way, and replays in the
    same worktree)."""
    cache = cache or KillerCache(None)
    killers = cache.get(fixture.patch, oracle_digest)
    request = replace(
        oracle_request,
        label=f"known-bad {index}",
        exitfirst=True,
        failures_expected=True,
        junit_name=None,
    )
    # Remembered killers name the files that run first; without them, the guess.
    allowed = request.allow_files or ()
    first = _files_of(killers, allowed) or first_files(fixture.patch, worktree, allowed)
    facts = _likely_first(fixture, request, first, worktree, scratch, timeout)
    facts = _confirm_timeouts(fixture, request, facts, worktree, scratch, timeout, plain)
    if facts.failed and not facts.error:
        cache.put(fixture.patch, oracle_digest, [f for f in facts.failed if "::" in f])
    return facts


def _likely_first(
    fixture: KnownBad,
    request: RunRequest,
    first: tuple[str, ...],
    worktree: Path,
    scratch: Path,
    timeout: float,
) -> ReplayFacts:
    """The class in two runs, the likely killers' files (remembered or guessed)
    alone first: a fixture that one of them catches never pays for collecting the
    other files (on a real suite, one parametrised file can hold most of the items).
    The rest runs only if none of them failed. With no likely killer, or only likely
    ones, one run."""
    rest = tuple(p for p in request.allow_files or () if p not in frozenset(first))
    if not first or not rest:
        return _run(fixture, replace(request, first_files=first), worktree, scratch, timeout)
    likely = replace(
        request, label=f"{request.label} part 1/2", allow_files=first, first_files=first
    )
    facts = _run(fixture, likely, worktree, scratch, timeout)
    if facts.error or _proves(facts):
        return facts
    if not facts.failed:
        others = replace(request, label=f"{request.label} part 2/2", allow_files=rest)
        facts = _run(fixture, others, worktree, scratch, timeout, spent=facts)
        if facts.error or _proves(facts) or not facts.failed:
            return facts
    # A part failed to collect: collected apart from the others, a file may miss what
    # another oracle file sets up (a registration, an import path), with or without
    # the fixture. The whole class decides, in its own order, which neither the cache
    # nor the guess chose.
    whole = replace(request, label=f"{request.label} whole")
    return _run(fixture, whole, worktree, scratch, timeout, spent=facts)


def _proves(part: ReplayFacts) -> bool:
    """Whether a run of some oracle files apart from the others proves a bite: an
    item failed, and no file failed to collect (with one that did, the failure may
    be the missing collection's, not the fixture's)."""
    return bool(part.failed) and not any(f.startswith(COLLECTION_ERROR) for f in part.failed)


def _files_of(killers: tuple[str, ...], allowed: tuple[str, ...]) -> tuple[str, ...]:
    """The oracle files the remembered killers are in (none that is not one)."""
    return tuple(sorted({k.split("::", 1)[0] for k in killers} & set(allowed)))


def _run(
    fixture: KnownBad,
    request: RunRequest,
    worktree: Path,
    scratch: Path,
    timeout: float,
    spent: ReplayFacts | None = None,
) -> ReplayFacts:
    result = run_pytest(request, worktree, scratch, timeout)
    seconds = result.seconds + (spent.seconds if spent else 0.0)
    if result.error:
        return ReplayFacts(fixture.name, applied=True, error=result.error, seconds=seconds)
    failed = [
        i.facts.nodeid for i in result.selected("oracle") if result.outcome(i.facts.nodeid) in BITES
    ]
    timed_out = tuple(n for n in failed if result.reports.get(n, {}).get("timeout") is not None)
    failed += [f"{COLLECTION_ERROR}{nodeid}" for nodeid, _ in result.collection_errors]
    return ReplayFacts(
        fixture.name, applied=True, failed=tuple(failed), seconds=seconds, timed_out=timed_out
    )


class PlainRun:
    """How long each oracle item took in this check's own run of the oracle class
    (head's code, no fixture), once every process of it ended. Never a cache: a
    duration a test could write would set another item's limit."""

    def __init__(self) -> None:
        self._ended = threading.Event()
        self._seconds: dict[str, float] = {}

    def ended(self, runs: Iterable[RunResult]) -> None:
        for run in runs:
            if run.error:
                continue
            for nodeid, entry in run.reports.items():
                self._seconds[nodeid] = float(entry.get("seconds") or 0.0)
        self._ended.set()

    def seconds(self, nodeid: str) -> float | None:
        """What the item took there (waits for the class to end); None: not run."""
        wait_event(self._ended, None)
        return self._seconds.get(nodeid)


def alone_limit(limit: float, plain_seconds: float | None) -> float:
    """A timed-out item's limit when it runs again alone: bounded by its plain run."""
    if plain_seconds is None:
        return limit
    return min(limit, max(ITEM_TIMEOUT_FLOOR, ALONE_FACTOR * plain_seconds))


def _confirm_timeouts(
    fixture: KnownBad,
    request: RunRequest,
    facts: ReplayFacts,
    worktree: Path,
    scratch: Path,
    timeout: float,
    plain: PlainRun | None,
) -> ReplayFacts:
    """A kill by a timeout counts only when the item times out again, alone: a
    loaded machine can slow an honest item past its limit, and a bite it did not
    earn would pass a fixture the oracles no longer catch. An item that does not
    is set aside and the class runs again without it (in its own order)."""
    set_aside: tuple[str, ...] = ()
    for _ in range(MAX_UNCONFIRMED):
        if facts.error or not facts.timed_out or set(facts.failed) - set(facts.timed_out):
            return facts  # no kill by a timeout alone: nothing to confirm
        item = facts.timed_out[0]
        limit = request.item_limit or timeout
        alone = replace(
            request,
            label=f"{request.label} alone",
            allow_files=(item.split("::", 1)[0],),
            first_files=(),
            only_items=(item,),
            item_timeout=alone_limit(limit, plain.seconds(item) if plain else None),
        )
        again = _run(fixture, alone, worktree, scratch, timeout, spent=facts)
        if again.error or item in again.timed_out:
            return replace(again, failed=again.timed_out or again.failed)
        set_aside += (item,)
        rest = replace(
            request,
            label=f"{request.label} without {len(set_aside)}",
            first_files=(),
            skip_items=set_aside,
        )
        facts = _run(fixture, rest, worktree, scratch, timeout, spent=again)
    if facts.error or not facts.timed_out or set(facts.failed) - set(facts.timed_out):
        return facts
    return ReplayFacts(
        fixture.name,
        applied=True,
        error=(
            f"oracle items timed out under the fixture but not when rerun alone "
            f"({', '.join(set_aside)}); raise --item-timeout or give the runner more room"
        ),
        seconds=facts.seconds,
    )


def known_bad_facts(
    config: BaseConfig, replays: Sequence[ReplayFacts], *, has_oracle: bool
) -> KnownBadFacts:
    """The known-bad proof: every fixture's replay, or, with no oracle file to
    replay against, each fixture as an error (never silently skipped)."""
    required = config.manifest.oracle_must_fail_known_bad
    if required and config.known_bad and not has_oracle:
        replays = tuple(
            ReplayFacts(f.name, applied=False, error="no oracle file to replay against")
            for f in config.known_bad
        )
    return KnownBadFacts(tuple(replays), required)
