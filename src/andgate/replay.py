"""Known-bad replay: proof that the oracles still bite.

Each fixture is a patch that reintroduces a real bug. It is applied with
`git apply` to the trusted tree (head's production code, base's tests) in a
worktree of its own, and the oracle class runs with `-x`: one failing oracle
item is the proof, so there is no need to run the rest.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from andgate.config import KnownBad
from andgate.run import Outcome, RunRequest, run_pytest
from andgate.verdict import ReplayFacts
from andgate.worktree import WorktreePool

BITES = {Outcome.FAILED, Outcome.ERROR}
DIFF_HEADER = re.compile(rb"^diff --git a/.* b/(?P<path>.*)$")
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
    return f"{problem}; regenerate the fixture against the current code"


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
    refused = refusal(fixture.patch)
    if refused is not None:
        return ReplayFacts(fixture.name, applied=False, problem=refused)
    patch = scratch / f"known-bad-{index}.patch"
    patch.write_bytes(fixture.patch)
    with pool.lease(commit) as worktree:
        problem = worktree.apply_patch(patch)
        if problem is not None:
            return ReplayFacts(fixture.name, applied=False, problem=_explain(problem))
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
