"""`andgate demo`: the gate on canned changes to a throwaway sample repository.

Each canned change is a story a maintainer recognises (an honest fix, tests
that only check types, an agent editing the oracle, ...). The demo prints the
expected and the actual verdict for each and exits 0 only when all match.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from andgate.check import CheckOptions, run_check
from andgate.sample import AGENT, SAMPLE_TODAY, SampleRepo, build_sample

AGENT_SLUG_TEST = '''\
"""Agent-written test (untrusted)."""

from minilib import slugify


def test_slugify_collapses_separators():
    assert slugify("Hello,  World!") == "hello-world"
'''

TAUTOLOGY_TEST = '''\
"""Agent-written tests (untrusted): they only check types."""

from minilib import chunk


def test_chunk_returns_list():
    assert isinstance(chunk([1, 2, 3], 2), list)


def test_chunk_items_are_lists():
    assert all(isinstance(piece, list) for piece in chunk([1, 2, 3], 2))
'''

WRONG_BELIEF_TEST = '''\
"""Agent-written test (untrusted) that encodes a wrong belief."""

from minilib import chunk


def test_chunk_pads_last_piece():
    assert chunk([1, 2, 3], 2) == [[1, 2], [3, None]]
'''


def honest_fix(repo: SampleRepo) -> None:
    repo.edit("minilib/text.py", 'r"[^a-z0-9]"', 'r"[^a-z0-9]+"')
    repo.write({"tests/test_slugify_agent.py": AGENT_SLUG_TEST})


def tautological_tests(repo: SampleRepo) -> None:
    repo.edit("minilib/text.py", "range(0, len(items), n)]", "range(0, len(items) - 1, n)][:-1]")
    repo.write({"tests/test_chunk_agent.py": TAUTOLOGY_TEST})


def oracle_edited(repo: SampleRepo) -> None:
    repo.edit("minilib/mathx.py", "max(lo, min(x, hi))", "min(x, hi)")
    repo.edit("tests/oracles/fixtures/cases.json", "[-1, 0, 10, 0]", "[-1, 0, 10, -1]")


def weakened_oracle(repo: SampleRepo) -> None:
    repo.edit(
        "tests/oracles/test_text_oracle.py",
        "assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]",
        "assert chunk([1, 2, 3, 4, 5], 2)",
    )


def empty_seeds(repo: SampleRepo) -> None:
    honest_fix(repo)
    repo.edit("tests/properties/test_chunk_property.py", "SEEDS = [1, 2, 3]", "SEEDS = []")


def untrusted_failure(repo: SampleRepo) -> None:
    honest_fix(repo)
    repo.write({"tests/test_chunk_agent.py": WRONG_BELIEF_TEST})


@dataclass(frozen=True)
class CannedChange:
    title: str
    apply: Callable[[SampleRepo], None]
    verdict: str
    reasons: tuple[str, ...] = ()
    approvals: tuple[str, ...] = ()
    today: str = SAMPLE_TODAY


CHANGES = (
    CannedChange("honest fix with its own tests", honest_fix, "allow"),
    CannedChange(
        "broken chunk + tautological tests", tautological_tests, "block", ("ORACLE_FAILED",)
    ),
    CannedChange(
        "fix edits the oracle's fixture",
        oracle_edited,
        "block",
        ("ORACLE_AUTHORSHIP", "LOCK_MISMATCH"),
    ),
    CannedChange(
        "approved test edit weakens oracle",
        weakened_oracle,
        "block",
        ("ORACLE_NEUTRALIZED",),
        approvals=("alice",),
    ),
    CannedChange(
        "honest fix after freeze expired",
        honest_fix,
        "block",
        ("FREEZE_EXPIRED",),
        today="2026-12-10",
    ),
    CannedChange("honest fix + SEEDS = []", empty_seeds, "block", ("NO_SEEDS",)),
    CannedChange(
        "honest fix + wrong agent test", untrusted_failure, "block", ("UNTRUSTED_FAILED",)
    ),
)


def _matches(change: CannedChange, verdict: str, codes: list[str]) -> bool:
    if verdict != change.verdict:
        return False
    if verdict == "allow":
        return not codes
    return all(code in codes for code in change.reasons)


def run_demo(keep: bool = False, changes: tuple[CannedChange, ...] = CHANGES) -> int:
    root = Path(tempfile.mkdtemp(prefix="andgate-demo-"))
    started = time.monotonic()
    ok = True
    try:
        repo, base = build_sample(root / "sample")
        print(f"andgate demo: sample repository at {repo.path} (base {base[:12]})\n")
        header = f"{'change':<36} {'expected':<34} {'got':<44} ok"
        print(header)
        print("-" * len(header))
        for index, change in enumerate(changes):
            repo.run("checkout", "-q", "--detach", base)
            change.apply(repo)
            head = repo.commit(change.title, who=AGENT)
            verdict, _ = run_check(
                CheckOptions(
                    repo=repo.path,
                    base=base,
                    head=head,
                    approved_by=change.approvals,
                    today=dt.date.fromisoformat(change.today),
                    artifacts=root / f"artifacts-{index}",
                )
            )
            codes = list(dict.fromkeys(r.code.value for r in verdict.reasons))
            good = _matches(change, verdict.decision.value, codes)
            ok = ok and good
            expected = change.verdict + (
                f" [{', '.join(change.reasons)}]" if change.reasons else ""
            )
            got = verdict.decision.value + (f" [{', '.join(codes)}]" if codes else "")
            print(f"{change.title:<36} {expected:<34} {got:<44} {'yes' if good else 'NO'}")
        print(
            f"\n{'every verdict as expected' if ok else 'SOME VERDICTS DIFFER'} "
            f"({time.monotonic() - started:.1f}s); artifacts of each run under {root}"
            if keep
            else f"\n{'every verdict as expected' if ok else 'SOME VERDICTS DIFFER'} "
            f"({time.monotonic() - started:.1f}s)"
        )
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1
