"""timings.json and `check --profile`'s table: where a check's time went."""

from __future__ import annotations

import datetime as dt
import json

from andgate.records import Facts, StepTime
from andgate.report.artifacts import TimingsJson
from andgate.report.console import profile_lines
from andgate.report.context import ReportContext
from andgate.verdict import decide

STEPS = (
    StepTime("commits, manifest and approvals", "step", 0.0, 0.1),
    StepTime("oracle phase", "phase", 0.1, 2.0),
    StepTime("oracle: worktree", "worktrees", 0.1, 0.2),
    StepTime("oracle", "pytest", 0.3, 1.8),
    StepTime("base oracle", "pytest", 0.3, 1.5),
    StepTime("verdict", "step", 2.1, 0.4),
)


def _context() -> ReportContext:
    return ReportContext(
        verdict=decide(Facts()),
        base="b" * 40,
        head="h" * 40,
        today=dt.date(2026, 12, 5),
        timings=STEPS,
    )


def test_timings_json_holds_every_step_the_end_and_the_sums_without_the_phases():
    payload = json.loads(TimingsJson().render(_context()))
    assert payload["schema"] == "andgate.timings/1"
    assert payload["seconds"] == 2.5  # the last step's end, not the sum of the steps
    # A phase holds its processes and worktrees: counted again, the sums would lie.
    assert payload["seconds_by_kind"] == {"pytest": 3.3, "step": 0.5, "worktrees": 0.2}
    assert [s["name"] for s in payload["steps"]] == [s.name for s in STEPS]
    assert payload["steps"][3] == {
        "name": "oracle",
        "kind": "pytest",
        "started_s": 0.3,
        "seconds": 1.8,
    }


def test_the_profile_table_is_a_timeline_with_sums_and_the_start_up():
    lines = profile_lines(STEPS, artifacts_seconds=0.05, started_after=0.7)
    assert lines[0] == "andgate: where the check's 2.50 s went (timings.json; steps overlap)"
    assert "     0.30s    1.80s  oracle" in lines
    assert lines[-2] == (
        "  in all: pytest processes 3.30 s; the gate's own steps 0.50 s; worktrees made "
        "ready or removed 0.20 s; artifacts written in 0.05 s"
    )
    assert lines[-1] == "  before the check: 0.70 s (Python and andgate loading)"


def test_without_a_known_start_up_the_table_says_nothing_of_it():
    lines = profile_lines(STEPS, artifacts_seconds=0.0)
    assert not any("before the check" in line for line in lines)
