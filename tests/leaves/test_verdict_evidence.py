"""The approval evidence in the verdict (pure): ORACLE_WEAKENED is a warning; with
block_weakened_oracles it blocks unless an owner approved head itself, also when the
evidence was not measured or not complete; it never turns a block into an allow."""

from __future__ import annotations

import dataclasses

from andgate.records import (
    Bit,
    ChangeFacts,
    Decision,
    EvidenceFacts,
    HiddenFailure,
    OracleFacts,
    Reason,
    Warning_,
    WeakenedMutant,
)
from andgate.verdict import decide, evidence_findings
from verdict_facts import CLEAN

ORACLE_FILE = "tests/oracles/test_text_oracle.py"
MUTANT = WeakenedMutant(
    "minilib/text.py",
    12,
    "initials",
    "`len(w) > 1` -> `len(w) >= 1`",
    (f"{ORACLE_FILE}::test_initials", f"{ORACLE_FILE}::test_more"),
)
HIDDEN = HiddenFailure(f"{ORACLE_FILE}::test_chunk", "failed: assert 4 == 5", "passes")
FOUND = EvidenceFacts(
    edited=(f"{ORACLE_FILE}::test_initials",),
    files=(ORACLE_FILE,),
    hidden=(HIDDEN,),
    weakened=(MUTANT,),
    mutants=10,
    tried=10,
    budget=60.0,
)
APPROVED_HEAD = ChangeFacts(oracle_paths=(ORACLE_FILE,), approved_by=("alice",))
APPROVED_EARLIER = dataclasses.replace(APPROVED_HEAD, earlier_commit_only=True)
UNAPPROVED = ChangeFacts(oracle_paths=(ORACLE_FILE,))


def test_each_hidden_failure_and_mutant_is_a_warning_naming_the_oracle_item_first():
    found = evidence_findings(FOUND, APPROVED_HEAD)
    assert [f.code for f in found] == [Warning_.ORACLE_WEAKENED] * 2
    hidden, mutant = (f.detail for f in found)
    assert hidden == (
        f"{ORACLE_FILE}::test_chunk: base's version fails on head's code (failed: assert 4 == "
        "5) and head's edited oracle passes: the edit hides this failure"
    )
    assert mutant == (
        f"{ORACLE_FILE}::test_initials: base's version catches the mutant minilib/text.py:12 "
        "in initials, `len(w) > 1` -> `len(w) >= 1` (and 1 more of base's items); head's "
        "oracle lets it pass"
    )


def test_a_deleted_item_says_so():
    deleted = dataclasses.replace(HIDDEN, on_head="deleted")
    [finding] = evidence_findings(EvidenceFacts(hidden=(deleted,)), APPROVED_HEAD)
    assert "head's edited oracle deletes it" in finding.detail


def test_nothing_found_is_no_finding():
    nothing = dataclasses.replace(FOUND, hidden=(), weakened=())
    assert evidence_findings(nothing, APPROVED_HEAD) == []
    assert evidence_findings(dataclasses.replace(nothing, block=True), UNAPPROVED) == []


def test_the_warning_leaves_an_approved_allow_an_allow():
    verdict = decide(dataclasses.replace(CLEAN, changes=APPROVED_HEAD, evidence=FOUND))
    assert verdict.decision is Decision.ALLOW
    assert [w.code for w in verdict.warnings] == [Warning_.ORACLE_WEAKENED] * 2


def test_block_weakened_oracles_blocks_without_an_approval_of_head():
    blocking = dataclasses.replace(FOUND, block=True)
    for changes in (UNAPPROVED, APPROVED_EARLIER):
        verdict = decide(dataclasses.replace(CLEAN, changes=changes, evidence=blocking))
        assert verdict.decision is Decision.BLOCK
        weakened = [r for r in verdict.reasons if r.code is Reason.ORACLE_WEAKENED]
        assert len(weakened) == 2 and all(r.bit is Bit.AUTHORSHIP for r in weakened)
        assert not verdict.bits[Bit.AUTHORSHIP]
    [earlier, *_] = evidence_findings(blocking, APPROVED_EARLIER)
    assert earlier.detail.endswith(
        "block_weakened_oracles: an approval of an earlier commit does not cover it; an "
        "owner approves head itself"
    )
    allowed = decide(dataclasses.replace(CLEAN, changes=APPROVED_HEAD, evidence=blocking))
    assert allowed.decision is Decision.ALLOW
    assert [w.code for w in allowed.warnings] == [Warning_.ORACLE_WEAKENED] * 2


def test_block_weakened_oracles_blocks_what_was_not_measured_or_not_finished():
    cases = {
        "--no-evidence": EvidenceFacts(not_measured="--no-evidence", block=True),
        "ran out": EvidenceFacts(mutants=10, tried=4, budget=30.0, out_of_budget=True, block=True),
        "error": EvidenceFacts(error="head's edited oracle files could not run", block=True),
    }
    for name, facts in cases.items():
        [finding] = evidence_findings(facts, APPROVED_EARLIER)
        assert finding.code is Reason.ORACLE_WEAKENED, name
    [ran_out] = evidence_findings(cases["ran out"], UNAPPROVED)
    assert ran_out.detail.startswith(
        "6 of 10 mutants were not tried: the evidence budget (30s) ran out; "
        "block_weakened_oracles: an owner approves head itself"
    )
    for facts in cases.values():
        assert evidence_findings(facts, APPROVED_HEAD) == []  # an approval of head lifts it
        assert evidence_findings(dataclasses.replace(facts, block=False), UNAPPROVED) == []


def test_the_evidence_never_turns_a_block_into_an_allow():
    failing = OracleFacts(error="the oracle process crashed")
    facts = dataclasses.replace(CLEAN, changes=APPROVED_HEAD, oracle=failing, evidence=FOUND)
    assert decide(facts).decision is Decision.BLOCK
    nothing = dataclasses.replace(FOUND, hidden=(), weakened=())
    unapproved = dataclasses.replace(CLEAN, changes=UNAPPROVED, evidence=nothing)
    assert [r.code for r in decide(unapproved).reasons] == [Reason.ORACLE_AUTHORSHIP]


def test_counts_of_the_facts():
    facts = EvidenceFacts(mutants=10, tried=7, budget=60.0)
    assert facts.left == 3 and not facts.complete and not facts.found
    assert EvidenceFacts(mutants=3, tried=3).complete
    assert not EvidenceFacts(not_measured="--no-evidence").complete
    assert FOUND.found and FOUND.complete


def test_what_was_not_measured_or_could_not_be_is_said_in_the_block():
    not_measured = EvidenceFacts(not_measured="--no-evidence", block=True)
    [finding] = evidence_findings(not_measured, UNAPPROVED)
    assert finding.detail == (
        "what the oracle edit gives up was not measured (--no-evidence); "
        "block_weakened_oracles: an owner approves head itself, having read this"
    )
    assert finding.bit is Bit.AUTHORSHIP
    failed = EvidenceFacts(error="head's edited oracle files could not run", block=True)
    [finding] = evidence_findings(failed, UNAPPROVED)
    assert finding.detail.startswith(
        "what the oracle edit gives up could not be measured: head's edited oracle files "
        "could not run; "
    )


def test_a_mutant_one_item_caught_names_no_more():
    alone = dataclasses.replace(MUTANT, caught_by=MUTANT.caught_by[:1])
    [finding] = evidence_findings(EvidenceFacts(weakened=(alone,)), APPROVED_HEAD)
    assert finding.detail.endswith("`len(w) > 1` -> `len(w) >= 1`; head's oracle lets it pass")
