"""What the gate works out in a thread while the oracle phase runs: the production
scan's analysis and the discrimination report's plan. Both must end (and their
errors surface) before the first untrusted test runs, as every input must be read
by then (contract, "Process and file isolation")."""

from __future__ import annotations

import time
from pathlib import Path

import andgate.check.pipeline
import andgate.check.production.phase
from andgate.commands.sample import SampleRepo
from stories import honest_fix

STAMPING_TEST = """\
import time
from pathlib import Path


def test_stamps_when_it_ran():
    Path({path!r}).write_text(repr(time.time()))
"""


def _honest_fix_stamping(stamp: Path):
    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({"tests/test_stamp.py": STAMPING_TEST.format(path=str(stamp))})

    return change


def test_the_scan_ends_before_the_first_untrusted_test_runs(sample, monkeypatch, tmp_path):
    """A scan slower than the oracle phase holds the untrusted phase back, and what
    it found still counts (the change's literal is not an oracle's answer: allow)."""
    real = andgate.check.production.phase.hard_coded_answers
    ended: list[float] = []

    def slow(*args, **kwargs):
        time.sleep(3.0)  # well past the sample's oracle phase
        try:
            return real(*args, **kwargs)
        finally:
            ended.append(time.time())

    monkeypatch.setattr(andgate.check.production.phase, "hard_coded_answers", slow)
    stamp = tmp_path / "untrusted-ran-at"
    run = sample.gate(sample.change(_honest_fix_stamping(stamp)))
    assert run.codes == [] and run.verdict.decision.value == "allow"
    assert len(ended) == 1
    assert float(stamp.read_text()) > ended[0]


def test_a_scan_that_fails_beside_the_oracle_phase_blocks_as_gate_error(sample, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("scan broke")

    monkeypatch.setattr(andgate.check.production.phase, "hard_coded_answers", broken)
    run = sample.gate(sample.change(honest_fix))
    assert run.codes == ["GATE_ERROR"]
    assert run.details("GATE_ERROR") == ["internal error: RuntimeError: scan broke"]
    assert run.verdict.exit_code == 2


def test_a_discrimination_plan_that_fails_blocks_as_gate_error(sample, monkeypatch, tmp_path):
    """Planned beside the oracle phase, joined before the untrusted phase: its error
    is the check's, and no untrusted test runs after it."""

    def broken(*args, **kwargs):
        raise RuntimeError("plan broke")

    monkeypatch.setattr(andgate.check.pipeline, "plan_discrimination", broken)
    stamp = tmp_path / "untrusted-ran-at"
    run = sample.gate(sample.change(_honest_fix_stamping(stamp)), discrimination=True)
    assert run.codes == ["GATE_ERROR"]
    assert run.details("GATE_ERROR") == ["internal error: RuntimeError: plan broke"]
    assert not stamp.exists()
