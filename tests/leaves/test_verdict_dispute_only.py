"""A change that disputes an oracle and changes no production code stopped at the dispute
(issue 43, item 8): ORACLE_DISPUTED, routed to the owner, never an allow. A disputes file
the change did not write (left on base) blocks nothing it did not block before."""

from __future__ import annotations

from andgate.records import (
    ChangeFacts,
    Dispute,
    DisputeFacts,
    DisputeStatus,
    ItemResult,
    OracleFacts,
    Outcome,
    Reason,
    Warning_,
)
from andgate.verdict import judge_disputes

FILE = ".andgate/disputes.yaml"
DISPUTE = Dispute("t.py::t", "the task says otherwise", oracle_at_base=True)
PASSING = OracleFacts(results=(ItemResult("t.py::t", Outcome.PASSED),))


def judge(changes: ChangeFacts) -> tuple[list[tuple[object, str]], DisputeStatus]:
    found, (outcome,) = judge_disputes(DisputeFacts(FILE, (DISPUTE,)), PASSING, changes)
    return [(f.code, f.detail) for f in found], outcome.status


def test_a_change_of_only_its_disputes_is_oracle_disputed():
    found, status = judge(ChangeFacts(test_paths=(FILE, "tests/test_mine.py")))
    assert status is DisputeStatus.DISPUTED
    ((code, detail),) = found
    assert code is Reason.ORACLE_DISPUTED
    assert detail.startswith("t.py::t passes, and the change changes no production code")
    assert detail.endswith('the change disputes this oracle: "the task says otherwise"')


def test_beside_production_code_or_a_disputes_file_it_did_not_write_it_stays_moot():
    for changes in (
        ChangeFacts(test_paths=(FILE,), production_paths=("pkg/core.py",)),
        ChangeFacts(test_paths=("tests/test_mine.py",)),  # the file is base's
    ):
        found, status = judge(changes)
        assert status is DisputeStatus.PASSES
        assert [code for code, _ in found] == [Warning_.DISPUTE_MOOT]


def test_the_verdict_of_a_change_that_stops_at_its_dispute_blocks_the_oracle_bit():
    import dataclasses

    from andgate.records import Bit
    from andgate.verdict import decide
    from verdict_facts import CLEAN

    changes = ChangeFacts(test_paths=(FILE,))
    facts = dataclasses.replace(
        CLEAN, changes=changes, disputes=DisputeFacts(FILE, (DISPUTE,)), oracle=PASSING
    )
    verdict = decide(facts)
    assert [(r.code, r.bit) for r in verdict.reasons] == [(Reason.ORACLE_DISPUTED, Bit.ORACLE)]
    assert not verdict.bits[Bit.ORACLE]
