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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from andgate.check.cache import KillerCache
from andgate.check.oracle.replay_order import first_files
from andgate.process.limits import LATER_FACTOR, PlainRun, later_limit, timed_out_seconds
from andgate.process.requests import RunRequest, Stop
from andgate.process.run import run_pytest
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
ALONE_FACTOR = LATER_FACTOR
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
    verified = oracle_request.integrity is not None
    with pool.lease(commit, verified=verified, label=f"known-bad {fixture.name}") as worktree:
        problem = worktree.apply_patch(patch)
        if problem is not None:
            return ReplayFacts(fixture.name, applied=False, problem=_explain(problem))
        if oracle_request.integrity is not None:  # the test-side files it rewrote, as it did
            expected = oracle_request.integrity.patched(worktree.path, worktree.patched)
            oracle_request = replace(oracle_request, integrity=expected)
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
    label: str | None = None,
    stop: Stop | None = None,
    confirm: bool = True,
) -> ReplayFacts:
    """The oracle class (likely killers first, `-x`) in a worktree where the fixture
    is already applied (a harvest applies its revert three-way, and replays in the
    same worktree). `plain`: the oracle class's own run on the same tree without
    the fixture (`process.limits`): once it has ended, the items that timed out
    there are not run, and the item limit comes from what the others took.
    `label`: its processes' (default `known-bad <index>`); `stop`: a time budget
    that ends a running process (the facts then carry its error); `confirm`: a kill by
    a timeout counts only when the item times out again alone (`_confirm_timeouts`)."""
    cache = cache or KillerCache(None)
    killers = cache.get(fixture.patch, oracle_digest)
    request = replace(
        oracle_request,
        label=label or f"known-bad {index}",
        exitfirst=True,
        failures_expected=True,
        junit_name=None,
    )
    # Remembered killers name the files that run first; without them, the guess.
    allowed = request.allow_files or ()
    first = _files_of(killers, allowed) or first_files(fixture.patch, worktree, allowed)
    replay = _Replay(fixture, worktree, scratch, timeout, plain, stop)
    facts = _likely_first(replay, request, first)
    if confirm:
        facts = _confirm_timeouts(replay, request, facts)
    if facts.failed and not facts.error:
        cache.put(fixture.patch, oracle_digest, [f for f in facts.failed if "::" in f])
    return facts


@dataclass(frozen=True)
class _Replay:
    """One fixture's replay in its worktree: what each of its pytest runs shares."""

    fixture: KnownBad
    worktree: Path
    scratch: Path
    timeout: float
    plain: PlainRun | None
    stop: Stop | None = None

    def run(self, request: RunRequest, spent: ReplayFacts | None = None) -> ReplayFacts:
        """One pytest process of the replay, its facts added to `spent`'s. Once the
        plain run has ended, the items that timed out there are left out (a hang on
        head proves nothing about the fixture, and would cost the limit again), and
        the limit comes from what the others took there (unless the run has its own)."""
        hung: frozenset[str] = frozenset()
        if self.plain is not None:
            hung = self.plain.known_timeouts()
            limit = request.item_timeout
            if limit is None:
                limit = self.plain.limit(request.allow_files, request.item_limit)
            request = replace(
                request,
                skip_items=tuple(dict.fromkeys((*request.skip_items, *sorted(hung)))),
                item_timeout=limit,
            )
        result = run_pytest(request, self.worktree, self.scratch, self.timeout, self.stop)
        before = spent or ReplayFacts(self.fixture.name, applied=True)
        facts = ReplayFacts(
            self.fixture.name,
            applied=True,
            seconds=result.seconds + before.seconds,
            waited=timed_out_seconds([result]) + before.waited,
            hung_on_head=tuple(sorted(hung | set(before.hung_on_head))),
            # A run that loaded test-side code other than the tree's counts for nothing,
            # and neither does the replay it is part of (`records.Tampering`).
            tampered=tuple(dict.fromkeys((*before.tampered, *result.tampered))),
        )
        if result.error:
            return replace(facts, error=result.error)
        failed = [
            i.facts.nodeid
            for i in result.selected("oracle")
            if result.outcome(i.facts.nodeid) in BITES
        ]
        timed_out = tuple(n for n in failed if result.reports.get(n, {}).get("timeout") is not None)
        failed += [f"{COLLECTION_ERROR}{nodeid}" for nodeid, _ in result.collection_errors]
        return replace(facts, failed=tuple(failed), timed_out=timed_out)


def _likely_first(replay: _Replay, request: RunRequest, first: tuple[str, ...]) -> ReplayFacts:
    """The class in two runs, the likely killers' files (remembered or guessed)
    alone first: a fixture that one of them catches never pays for collecting the
    other files (on a real suite, one parametrised file can hold most of the items).
    The rest runs only if none of them failed. With no likely killer, or only likely
    ones, one run."""
    rest = tuple(p for p in request.allow_files or () if p not in frozenset(first))
    if not first or not rest:
        return replay.run(replace(request, first_files=first))
    likely = replace(
        request, label=f"{request.label} part 1/2", allow_files=first, first_files=first
    )
    facts = replay.run(likely)
    if facts.error or _proves(facts):
        return facts
    if not facts.failed:
        others = replace(request, label=f"{request.label} part 2/2", allow_files=rest)
        facts = replay.run(others, spent=facts)
        if facts.error or _proves(facts) or not facts.failed:
            return facts
    # A part failed to collect: collected apart from the others, a file may miss what
    # another oracle file sets up (a registration, an import path), with or without
    # the fixture. The whole class decides, in its own order, which neither the cache
    # nor the guess chose.
    whole = replace(request, label=f"{request.label} whole")
    return replay.run(whole, spent=facts)


def _proves(part: ReplayFacts) -> bool:
    """Whether a run of some oracle files apart from the others proves a bite: an
    item failed, and no file failed to collect (with one that did, the failure may
    be the missing collection's, not the fixture's)."""
    return bool(part.failed) and not any(f.startswith(COLLECTION_ERROR) for f in part.failed)


def _files_of(killers: tuple[str, ...], allowed: tuple[str, ...]) -> tuple[str, ...]:
    """The oracle files the remembered killers are in (none that is not one)."""
    return tuple(sorted({k.split("::", 1)[0] for k in killers} & set(allowed)))


def alone_limit(limit: float, plain_seconds: float | None) -> float:
    """A timed-out item's limit when it runs again alone: bounded by its plain run
    (`process.limits.later_limit`)."""
    return later_limit(limit, plain_seconds)


def _settled(facts: ReplayFacts) -> bool:
    """Nothing left to confirm: an error, no timeout, or a failure that is no timeout."""
    return (
        bool(facts.error) or not facts.timed_out or bool(set(facts.failed) - set(facts.timed_out))
    )


def _confirm_timeouts(replay: _Replay, request: RunRequest, facts: ReplayFacts) -> ReplayFacts:
    """A kill by a timeout counts only when the item times out again, alone: a
    loaded machine can slow an honest item past its limit, and a bite it did not
    earn would pass a fixture the oracles no longer catch. An item that does not
    is set aside and the class runs again without it (in its own order).

    An item that timed out in the plain run too (head's own hang, found by a replay
    that started before the plain run ended) proves nothing about the fixture: it is
    neither confirmed (no second wait for it) nor counted among those set aside, and
    the class runs again without every item that timed out on head."""
    set_aside: tuple[str, ...] = ()
    on_head: tuple[str, ...] = ()  # each at most once: the loop ends
    plain = replay.plain
    while not _settled(facts):
        item = facts.timed_out[0]
        if plain is not None and item not in on_head and plain.timed_out(item):
            on_head += (item,)
            rest = replace(
                request,
                label=f"{request.label} without timeouts on head",
                first_files=(),
                skip_items=(*set_aside, *on_head),
            )
            facts = replay.run(rest, spent=facts)
            continue
        if len(set_aside) == MAX_UNCONFIRMED:
            return ReplayFacts(
                replay.fixture.name,
                applied=True,
                error=(
                    f"oracle items timed out under the fixture but not when rerun alone "
                    f"({', '.join(set_aside)}); raise --item-timeout or give the runner "
                    "more room"
                ),
                seconds=facts.seconds,
                waited=facts.waited,
                tampered=facts.tampered,
            )
        limit = request.item_limit or replay.timeout
        alone = replace(
            request,
            label=f"{request.label} alone",
            allow_files=(item.split("::", 1)[0],),
            first_files=(),
            only_items=(item,),
            item_timeout=alone_limit(limit, plain.seconds(item) if plain else None),
        )
        again = replay.run(alone, spent=facts)
        if again.error or item in again.timed_out:
            return replace(again, failed=again.timed_out or again.failed)
        set_aside += (item,)
        rest = replace(
            request,
            label=f"{request.label} without {len(set_aside)}",
            first_files=(),
            skip_items=(*set_aside, *on_head),
        )
        facts = replay.run(rest, spent=again)
    return facts


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
