"""Known-bad replay: proof that the oracles still bite.

Each fixture is a patch that reintroduces a real bug. It is applied with
`git apply` to the trusted tree (head's production code, base's tests) in a
worktree of its own, and the oracle class runs with `-x`: one failing oracle
item is the proof, so there is no need to run the rest.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from andgate.config import KnownBad
from andgate.run import Outcome, RunRequest, run_pytest
from andgate.verdict import ReplayFacts
from andgate.worktree import WorktreePool

BITES = {Outcome.FAILED, Outcome.ERROR}


def replay_fixture(
    fixture: KnownBad,
    index: int,
    *,
    pool: WorktreePool,
    commit: str,
    oracle_request: RunRequest,
    scratch: Path,
    timeout: float,
) -> ReplayFacts:
    patch = scratch / f"known-bad-{index}.patch"
    patch.write_bytes(fixture.patch)
    if not fixture.patch.strip():
        return ReplayFacts(fixture.name, applied=False, problem="the fixture is empty")
    with pool.lease(commit) as worktree:
        problem = worktree.apply_patch(patch)
        if problem is not None:
            return ReplayFacts(fixture.name, applied=False, problem=problem)
        request = replace(
            oracle_request, label=f"known-bad {index}", exitfirst=True, junit_name=None
        )
        result = run_pytest(request, worktree.path, scratch, timeout)
    if result.error:
        return ReplayFacts(fixture.name, applied=True, error=result.error, seconds=result.seconds)
    failed = [
        i.facts.nodeid for i in result.selected("oracle") if result.outcome(i.facts.nodeid) in BITES
    ]
    failed += [f"collection error in {nodeid}" for nodeid, _ in result.collection_errors]
    return ReplayFacts(fixture.name, applied=True, failed=tuple(failed), seconds=result.seconds)
