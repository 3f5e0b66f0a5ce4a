"""A known-bad replay of a head whose oracle item hangs (issue 37, item 3).

The item X hangs on head, without any fixture: the oracle class's plain run waits
out its limit once. A replay (head + a fixture) must not wait for it again, nor
confirm it alone: it proves nothing about the fixture. Neither may it make the
fixture look caught (a kill by X) or pass it (its proof is still missing).

pytest is faked here (`run_pytest`): it runs a one-file oracle class [X, K] in order
with `-x`, X timing out whenever it runs, K failing under the fixture; each request
is recorded, so the tests read which runs ran X and with which limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from andgate.check.oracle import replay
from andgate.plugin.classify import ItemFacts, Rules
from andgate.process.limits import PlainRun
from andgate.process.requests import ITEM_TIMEOUT_FLOOR, RunEnvironment, RunRequest
from andgate.process.results import CollectedItem, RunResult
from andgate.records import KnownBadFacts, Reason, ReplayStatus, Role
from andgate.trust.config import KnownBad
from andgate.verdict import known_bad_findings

FILE = "tests/oracles/test_math_oracle.py"
X = f"{FILE}::test_mean"  # hangs on head
K = f"{FILE}::test_total"  # the fixture's killer, after X in order
LIMIT = 60.0
HEAD = RunResult(
    "oracle",
    1,
    61.0,
    reports={
        X: {"call": "failed", "seconds": 60.0, "timeout": LIMIT, "message": "timed out"},
        K: {"call": "passed", "seconds": 0.2},
    },
)


@dataclass
class FakePytest:
    """The oracle class under the fixture: X times out, K fails (`bites`) or passes."""

    bites: bool = True
    x_hangs: bool = True
    # called when the first run "waits" on X: the plain run ends meanwhile
    meanwhile: Any = None
    requests: list[RunRequest] = field(default_factory=list)

    def __call__(
        self, request: RunRequest, worktree: Path, scratch: Path, timeout: float, stop=None
    ):
        self.requests.append(request)
        reports: dict[str, dict[str, Any]] = {}
        items = []
        for nodeid in (X, K):
            if nodeid in request.skip_items:
                continue
            if request.only_items is not None and nodeid not in request.only_items:
                continue
            items.append(CollectedItem(ItemFacts(nodeid, FILE, nodeid), "oracle", "glob"))
            if nodeid == X and self.x_hangs:
                if self.meanwhile is not None:
                    self.meanwhile()
                    self.meanwhile = None
                limit = request.item_limit
                reports[X] = {"call": "failed", "seconds": limit, "timeout": limit}
            elif nodeid == K and self.bites:
                reports[K] = {"call": "failed", "seconds": 0.1}
            else:
                reports[nodeid] = {"call": "passed", "seconds": 0.1}
            if request.exitfirst and reports[nodeid]["call"] == "failed":
                break
        return RunResult(request.label, 1, 1.0, items=tuple(items), reports=reports)

    def waited_on_x(self) -> list[RunRequest]:
        """The runs in which X ran (and, hanging, was waited for)."""
        return [
            r
            for r in self.requests
            if X not in r.skip_items and (r.only_items is None or X in r.only_items)
        ]


def replay_with(fake: FakePytest, plain: PlainRun, monkeypatch, tmp_path):
    monkeypatch.setattr(replay, "run_pytest", fake)
    monkeypatch.setattr(replay, "first_files", lambda *a: ())
    request = RunRequest(
        "oracle",
        Role.ORACLE,
        Rules(),
        allow_files=(FILE,),
        environment=RunEnvironment(item_timeout=LIMIT),
    )
    fixture = KnownBad("kb_total", "", b"diff --git a/m.py b/m.py\n")
    return replay.replay_applied(
        fixture, 0, tmp_path, oracle_request=request, scratch=tmp_path, timeout=1800, plain=plain
    )


def test_a_replay_that_starts_after_heads_run_never_runs_the_item_that_hung_there(
    monkeypatch, tmp_path
):
    plain = PlainRun()
    plain.ended([HEAD])
    fake = FakePytest()
    facts = replay_with(fake, plain, monkeypatch, tmp_path)
    assert fake.waited_on_x() == []
    [run] = fake.requests
    assert run.skip_items == (X,)
    assert run.item_timeout == ITEM_TIMEOUT_FLOOR  # K took 0.2 s on head: the floor
    assert facts.status is ReplayStatus.BITES
    assert facts.failed == (K,) and facts.hung_on_head == (X,)


def test_a_replay_that_met_the_hang_before_heads_run_ended_waits_for_it_once_and_never_alone(
    monkeypatch, tmp_path
):
    """The replay started beside the oracle class and timed out on X too: X proves
    nothing about the fixture, so no rerun alone confirms it (a third wait); the class
    runs again without it, and K's failure is the proof."""
    plain = PlainRun()
    fake = FakePytest(meanwhile=lambda: plain.ended([HEAD]))
    facts = replay_with(fake, plain, monkeypatch, tmp_path)
    [waited] = fake.waited_on_x()
    assert waited is fake.requests[0] and waited.item_timeout == LIMIT  # nothing known yet
    assert all(r.only_items is None for r in fake.requests)  # no rerun alone
    assert X in fake.requests[-1].skip_items
    assert facts.status is ReplayStatus.BITES
    assert facts.failed == (K,) and facts.hung_on_head == (X,)
    assert facts.waited == LIMIT


def test_a_fixture_only_the_hanging_item_could_catch_is_not_proven_and_says_why(
    monkeypatch, tmp_path
):
    """Not caught (X's timeout is head's, not the fixture's), not passed either: the
    fixture's proof is missing, a block that names the item not run."""
    plain = PlainRun()
    plain.ended([HEAD])
    fake = FakePytest(bites=False)
    facts = replay_with(fake, plain, monkeypatch, tmp_path)
    assert fake.waited_on_x() == []
    assert facts.status is ReplayStatus.GREEN and facts.hung_on_head == (X,)
    [finding] = known_bad_findings(KnownBadFacts(replays=(facts,)))
    assert finding.code is Reason.ORACLE_NEUTRALIZED
    assert finding.detail == (
        "kb_total left every oracle item it ran passing; not run, since they time out on "
        f"head without the fixture: {X}"
    )


@pytest.mark.parametrize("head_seconds, alone", [(0.5, ITEM_TIMEOUT_FLOOR), (4.5, 45.0)])
def test_a_hang_the_fixture_makes_is_confirmed_alone_within_its_plain_runs_bound(
    monkeypatch, tmp_path, head_seconds, alone
):
    """X passed on head: its timeout under the fixture is the fixture's, a kill once
    it times out again alone, with a limit from what it took on head."""
    plain = PlainRun()
    passed = {X: {"call": "passed", "seconds": head_seconds}, K: {"call": "passed"}}
    plain.ended([RunResult("oracle", 0, 1.0, reports=passed)])
    fake = FakePytest(bites=False)
    facts = replay_with(fake, plain, monkeypatch, tmp_path)
    first, again = fake.requests
    assert first.skip_items == () and first.item_timeout == alone  # the file's slowest: X
    assert again.only_items == (X,) and again.item_timeout == alone
    assert facts.status is ReplayStatus.BITES and facts.failed == (X,)
    assert facts.hung_on_head == ()
