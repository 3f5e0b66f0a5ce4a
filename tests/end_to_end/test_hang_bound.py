"""A change that makes items hang is waited for once per item (issue 37, item 3).

Contract section 4, "Hangs": a timed-out item is not waited for again in later runs
of the same code, so the whole check takes at most the clean check's time plus
twice the item limit. Asserted on the structure, never on times: every pytest run
of the check is recorded (`Runs`), with what it was asked to skip and which items
ran past their limit in it. The time itself is measured in `benchmarks/hang_bound.py`.

`--jobs 1` makes the order of the runs fixed: each later run starts after the plain
run it learns from ended (`tests/check/test_replay_hangs.py` has a replay that met
the hang before, with pytest faked).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from andgate.commands.sample import SampleRepo
from andgate.process import run as process_run
from andgate.process.requests import RunRequest
from andgate.process.results import RunResult
from conftest import Sample

pytestmark = pytest.mark.slow

LIMIT = 3.0
HANGING_ORACLE = "tests/oracles/test_math_oracle.py::test_mean"
KILLER = "tests/oracles/test_math_oracle.py::test_total"  # after test_mean in order
HANGING_AGENT_TEST = "tests/test_mean_agent.py::test_mean_four"
TOTAL = '\n\ndef total(xs):\n    """Sum of a sequence."""\n    return sum(xs)\n'
TEST_TOTAL = (
    "\n\ndef test_total():\n    from minilib.mathx import total\n\n    assert total([1, 2]) == 3\n"
)
AGENT_TEST = """from minilib import mean


def test_mean_pair():
    assert mean([1, 3]) == 2


def test_mean_four():
    assert mean([2, 2, 2, 2]) == 2
"""


@dataclass(frozen=True)
class Run:
    label: str
    skipped: tuple[str, ...]
    only: tuple[str, ...] | None
    limit: float | None
    timed_out: tuple[str, ...]


class Runs:
    """Every pytest run of a check, in the order they ended."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: list[Run] = []
        original = process_run.run_pytest

        def recorded(request: RunRequest, *args: Any, **kwargs: Any) -> RunResult:
            result = original(request, *args, **kwargs)
            timed_out = tuple(n for n, e in result.reports.items() if e.get("timeout"))
            self.runs.append(
                Run(request.label, request.skip_items, request.only_items, request.item_limit,
                    timed_out)
            )  # fmt: skip
            return result

        for module in (
            "andgate.check.context",
            "andgate.check.oracle.replay",
            "andgate.check.discrimination.phase",
            "andgate.commands.replay_known_bad",
        ):
            monkeypatch.setattr(f"{module}.run_pytest", recorded)

    def waited_for(self, nodeid: str) -> list[str]:
        """The runs in which the item ran past its limit."""
        return [r.label for r in self.runs if nodeid in r.timed_out]

    def labelled(self, prefix: str) -> list[Run]:
        return [r for r in self.runs if r.label.startswith(prefix)]


def with_total(sample_dir: Any) -> Sample:
    """The tests' sample with `total` and its oracle item after test_mean, and a
    fixture only that item catches (`kb_total`), besides kb_chunk_drops_tail."""
    from harness import BASE_FILES, ONE_KNOWN_BAD, build_test_sample

    files = dict(BASE_FILES)
    files["minilib/mathx.py"] += TOTAL
    files["tests/oracles/test_math_oracle.py"] += TEST_TOTAL
    repo, base = build_test_sample(sample_dir / "sample", files, ONE_KNOWN_BAD)
    repo.run("checkout", "-q", "--detach", base)
    edit = ("minilib/mathx.py", "    return sum(xs)\n", "    return sum(xs) + 1\n")
    repo.write({"tests/oracles/known_bad/kb_total.patch": repo.diff_of([edit])})
    return Sample(repo, repo.commit("known-bad kb_total"), sample_dir)


def hanging_change(agent_test: str = AGENT_TEST) -> Callable[[SampleRepo], None]:
    def change(repo: SampleRepo) -> None:
        repo.edit(
            "minilib/mathx.py",
            "    xs = list(xs)\n",
            "    xs = list(xs)\n    if len(xs) == 4:\n        while True:\n            pass\n",
        )
        repo.write({"tests/test_mean_agent.py": agent_test})

    return change


def test_each_item_that_hangs_is_waited_for_once_and_never_again(tmp_path, monkeypatch):
    """The oracle item hangs in the oracle class's run, the agent's test in the
    untrusted class's run; no known-bad replay and no discrimination run waits for
    either again, nothing is confirmed alone, and the verdict still names both."""
    sample = with_total(tmp_path)
    runs = Runs(monkeypatch)
    run = sample.gate(
        sample.change(hanging_change()),
        item_timeout=LIMIT,
        jobs=1,
        cache_dir=None,
        discrimination=True,
        discrimination_budget=300.0,  # every breakage runs: not the machine's load
    )
    assert run.codes == ["ORACLE_FAILED", "UNTRUSTED_FAILED"], run.payload["reasons"]
    assert run.details("ORACLE_FAILED") == [f"{HANGING_ORACLE} failed: timed out after 3 s"]
    assert run.details("UNTRUSTED_FAILED") == [f"{HANGING_AGENT_TEST} failed: timed out after 3 s"]
    assert runs.waited_for(HANGING_ORACLE) == ["oracle"]
    assert runs.waited_for(HANGING_AGENT_TEST) == ["untrusted"]
    replays = runs.labelled("known-bad")
    assert replays and all(HANGING_ORACLE in r.skipped for r in replays)
    assert all(r.only is None for r in replays)  # no rerun alone
    breakages = runs.labelled("discrimination")
    assert breakages and all(HANGING_AGENT_TEST in r.skipped for r in breakages)
    # the fixture is caught by an item that does not hang on head, not by the hang
    fixtures = {f["name"]: f for f in run.artifact("known_bad.json")["fixtures"]}
    assert fixtures["kb_total"]["bites"] and fixtures["kb_total"]["failed_oracle_items"] == [KILLER]
    assert fixtures["kb_total"]["hung_on_head"] == [HANGING_ORACLE]


def test_a_fixture_only_the_hanging_item_catches_is_not_proven(tmp_path, monkeypatch):
    """`mean` sums with `total`, which only test_mean checks: kb_total is test_mean's
    to catch, and test_mean hangs on head. Not caught (a timeout on head proves
    nothing), not passed (the proof is missing): ORACLE_NEUTRALIZED, naming the item
    that was not run."""
    from harness import BASE_FILES, ONE_KNOWN_BAD, build_test_sample

    files = dict(BASE_FILES)
    files["minilib/mathx.py"] = (
        files["minilib/mathx.py"].replace("return sum(xs) / len(xs)", "return total(xs) / len(xs)")
        + TOTAL
    )
    repo, base = build_test_sample(tmp_path / "sample", files, ONE_KNOWN_BAD)
    repo.run("checkout", "-q", "--detach", base)
    edit = ("minilib/mathx.py", "    return sum(xs)\n", "    return sum(xs) + 1\n")
    repo.write({"tests/oracles/known_bad/kb_total.patch": repo.diff_of([edit])})
    sample = Sample(repo, repo.commit("known-bad kb_total"), tmp_path)
    runs = Runs(monkeypatch)
    run = sample.gate(
        sample.change(hanging_change(AGENT_TEST.split("\n\n\ndef test_mean_four")[0] + "\n")),
        item_timeout=LIMIT,
        jobs=1,
        cache_dir=None,
    )
    assert run.codes == ["ORACLE_FAILED", "ORACLE_NEUTRALIZED"], run.payload["reasons"]
    assert run.details("ORACLE_NEUTRALIZED") == [
        "kb_total left every oracle item it ran passing; not run, since they time out on "
        f"head without the fixture: {HANGING_ORACLE}"
    ]
    assert runs.waited_for(HANGING_ORACLE) == ["oracle"]
