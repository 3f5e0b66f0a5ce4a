"""`andgate demo` reports expected against actual verdicts and fails on a mismatch."""

from __future__ import annotations

from dataclasses import replace

import pytest

from andgate.demo import CHANGES, run_demo

# End to end: these start the gate's pytest processes.
pytestmark = pytest.mark.slow


def test_demo_subset_matches(capsys):
    assert run_demo(changes=CHANGES[:2]) == 0
    out = capsys.readouterr().out
    assert "honest fix with its own tests" in out
    assert "every verdict as expected" in out


def test_demo_exits_1_when_a_verdict_differs(capsys):
    wrong = replace(CHANGES[0], verdict="block", reasons=("ORACLE_FAILED",))
    assert run_demo(changes=(wrong,)) == 1
    assert "SOME VERDICTS DIFFER" in capsys.readouterr().out
