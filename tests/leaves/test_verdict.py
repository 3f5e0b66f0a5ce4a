"""The verdict's rules, one fact at a time (pure: `decide` reads only `Facts`)."""

from __future__ import annotations

import dataclasses

import pytest

from andgate.records import (
    Bit,
    ChangeFacts,
    ClassFacts,
    Decision,
    DiscriminationFacts,
    Facts,
    Finding,
    FreezeFacts,
    ItemResult,
    KnownBadFacts,
    LockFacts,
    OracleFacts,
    Outcome,
    PropertyFacts,
    Reason,
    ReplayFacts,
    Tampering,
    Unpinned,
    Warning_,
)
from andgate.verdict import (
    SCHEMA,
    authorship_findings,
    decide,
    discrimination_findings,
    freeze_findings,
    known_bad_findings,
    lock_findings,
    oracle_findings,
    property_findings,
    tampering_findings,
    untrusted_findings,
)
from verdict_facts import BITES, CLEAN, PASSED_ORACLE, SEEDED

PHASES = {
    "changes": Bit.AUTHORSHIP,
    "lock": Bit.LOCKS,
    "oracle": Bit.ORACLE,
    "known_bad": Bit.KNOWN_BAD,
    "property": Bit.PROPERTY,
    "freezes": Bit.FREEZE,
    "untrusted": Bit.UNTRUSTED,
}


def facts(**changes) -> Facts:
    return dataclasses.replace(CLEAN, **changes)


def codes(findings) -> list[str]:
    return [f.code.value for f in findings]


# -- decide ----------------------------------------------------------------------------


def test_every_phase_recorded_and_clean_allows_with_exit_code_0():
    verdict = decide(CLEAN)
    assert (verdict.decision, verdict.reasons, verdict.exit_code) == (Decision.ALLOW, (), 0)
    assert verdict.allowed and not verdict.could_not_run
    assert verdict.bits == {bit: True for bit in Bit}


@pytest.mark.parametrize("phase", sorted(PHASES))
def test_a_phase_never_recorded_blocks_with_its_bit_false(phase):
    verdict = decide(facts(**{phase: None}))
    assert verdict.decision is Decision.BLOCK
    assert not verdict.allowed
    assert [bit for bit, ok in verdict.bits.items() if not ok] == [PHASES[phase]]


def test_a_failing_phase_clears_only_its_own_bit_and_exits_1():
    verdict = decide(facts(lock=LockFacts(missing=("f.json",))))
    assert [bit for bit, ok in verdict.bits.items() if not ok] == [Bit.LOCKS]
    assert codes(verdict.reasons) == ["LOCK_MISMATCH"]
    assert (verdict.allowed, verdict.could_not_run, verdict.exit_code) == (False, False, 1)


def test_a_manifest_error_blocks_with_exit_code_2_even_when_every_bit_holds():
    verdict = decide(facts(manifest_error="m.yaml: bad"))
    assert verdict.reasons == (Finding(Reason.MANIFEST_INVALID, "m.yaml: bad"),)
    assert all(verdict.bits.values())
    assert (verdict.allowed, verdict.could_not_run, verdict.exit_code) == (False, True, 2)


def test_each_gate_error_is_a_reason_with_exit_code_2():
    verdict = decide(facts(gate_errors=("git failed", "disk full")))
    assert verdict.reasons == (
        Finding(Reason.GATE_ERROR, "git failed"),
        Finding(Reason.GATE_ERROR, "disk full"),
    )
    assert (verdict.decision, verdict.exit_code) == (Decision.BLOCK, 2)


@pytest.mark.parametrize(
    "discrimination",
    [
        DiscriminationFacts(),  # the default: a report that found nothing
        DiscriminationFacts(items=(("tests/test_new.py::test_n", ()),), against=("kb.patch",)),
    ],
)
def test_the_discrimination_report_adds_to_every_earlier_reason_and_never_replaces_them(
    discrimination,
):
    failed = ItemResult(PASSED_ORACLE.nodeid, Outcome.FAILED)
    verdict = decide(facts(oracle=OracleFacts(results=(failed,)), discrimination=discrimination))
    assert verdict.decision is Decision.BLOCK
    assert "ORACLE_FAILED" in codes(verdict.reasons)
    assert verdict.bits[Bit.ORACLE] is False


def test_recorded_warnings_are_kept_and_never_block():
    warning = Finding(Warning_.UNCOMMITTED_CHANGES, "a.py")
    verdict = decide(facts(warnings=(warning,)))
    assert (verdict.allowed, verdict.warnings, verdict.reasons) == (True, (warning,), ())


def test_rule_warnings_go_to_warnings_and_reasons_to_reasons():
    verdict = decide(facts(freezes=FreezeFacts(expired=("e",), ineffective=("i",))))
    assert codes(verdict.reasons) == ["FREEZE_EXPIRED"]
    assert codes(verdict.warnings) == ["FREEZE_INEFFECTIVE"]


def test_counts_are_copied_into_the_verdict():
    assert decide(facts(counts={"oracle": 3})).counts == {"oracle": 3}


def test_untrusted_failures_follow_fail_closed_untrusted():
    failing = ClassFacts(results=(ItemResult("t.py::t", Outcome.FAILED),))
    assert codes(decide(facts(untrusted=failing)).reasons) == ["UNTRUSTED_FAILED"]
    relaxed = decide(facts(untrusted=failing, fail_closed_untrusted=False))
    assert (relaxed.allowed, codes(relaxed.warnings)) == (True, ["UNTRUSTED_FAILED"])


def test_a_verdict_cannot_be_changed_after_the_decision():
    verdict = decide(CLEAN)
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.decision = Decision.BLOCK  # type: ignore[misc]


def test_the_verdict_schema_id_is_the_published_one():
    assert SCHEMA == "andgate.verdict/1"


# -- authorship --------------------------------------------------------------------------


def test_an_approved_change_has_no_authorship_findings():
    approved = ChangeFacts(oracle_paths=("o.py",), trust_root_paths=("c.py",), approved_by=("a",))
    assert authorship_findings(approved) == []


def test_an_unapproved_oracle_change_blocks_naming_the_path_and_the_case():
    found = authorship_findings(ChangeFacts(oracle_paths=("o.py",), production_paths=("x.py",)))
    assert found == [
        Finding(
            Reason.ORACLE_AUTHORSHIP,
            "o.py changed without owner approval "
            "(mixed change: production code and trust-root files together)",
            Bit.AUTHORSHIP,
        )
    ]


def test_without_require_human_owner_an_oracle_change_only_warns():
    found = authorship_findings(ChangeFacts(oracle_paths=("o.py",), require_human_owner=False))
    assert found == [
        Finding(Warning_.ORACLE_CHANGED, "o.py changed (require_human_owner is false)")
    ]


def test_an_unapproved_trust_root_change_blocks_and_says_why_when_known():
    changed = ChangeFacts(
        trust_root_paths=("pytest.ini", "conftest.py"),
        trust_root_why=(("pytest.ini", "addopts differ"),),
    )
    assert authorship_findings(changed) == [
        Finding(
            Reason.TRUST_ROOT_CHANGED,
            "pytest.ini changed without owner approval (trust-root-only change): addopts differ",
            Bit.AUTHORSHIP,
        ),
        Finding(
            Reason.TRUST_ROOT_CHANGED,
            "conftest.py changed without owner approval (trust-root-only change)",
            Bit.AUTHORSHIP,
        ),
    ]


@pytest.mark.parametrize(
    "wiring",
    [
        ".github/workflows/andgate.yml",
        ".github/actions/gate/action.yml",
        "CODEOWNERS",
        ".github/CODEOWNERS",
        "docs/CODEOWNERS",
    ],
)
def test_an_adopting_change_blocks_on_production_code_but_not_on_the_gate_wiring(wiring):
    adopting = ChangeFacts(
        trust_root_paths=("tests/trust_manifest.yaml",),
        production_paths=("src/pkg/core.py", wiring, "lib/CODEOWNERS"),
        suspicious=("src/pkg/core.py:3: harness reference [harness_reference]",),
        oracle_literals=("src/pkg/core.py:9: 'hello-world' [oracle_literal]",),
        adopting=True,
    )
    found = authorship_findings(adopting)
    assert [(f.code, f.bit) for f in found] == [
        (Warning_.ORACLE_LITERAL, None),
        (Reason.TRUST_ROOT_CHANGED, Bit.AUTHORSHIP),
        (Reason.TRUST_ROOT_CHANGED, Bit.AUTHORSHIP),
        (Reason.PRODUCTION_SUSPICIOUS, Bit.AUTHORSHIP),
    ]
    assert found[1].detail == (
        "src/pkg/core.py is production code changed in the change that adopts andgate; "
        "adopt first (manifest and tests only), then change code in a later change"
    )
    assert found[2].detail.startswith("lib/CODEOWNERS is production code")
    assert found[3].detail == (
        "src/pkg/core.py:3: harness reference [harness_reference]; an owner reviews it"
    )
    verdict = decide(dataclasses.replace(CLEAN, changes=adopting))
    assert verdict.decision is Decision.BLOCK and not verdict.bits[Bit.AUTHORSHIP]


def test_an_adopting_change_of_trust_root_and_gate_wiring_only_is_allowed():
    adopting = ChangeFacts(
        trust_root_paths=("tests/trust_manifest.yaml",),
        production_paths=(".github/workflows/andgate.yml",),
        adopting=True,
    )
    assert authorship_findings(adopting) == []
    assert decide(dataclasses.replace(CLEAN, changes=adopting)).decision is Decision.ALLOW


# -- locks -------------------------------------------------------------------------------


def test_every_lock_difference_is_one_mismatch_in_a_fixed_order():
    lock = LockFacts(missing=("a",), extra=("b",), changed=("c",), problems=("bad line 3",))
    assert [(f.code, f.detail, f.bit) for f in lock_findings(lock)] == [
        (Reason.LOCK_MISMATCH, "a: listed in the lock but missing", Bit.LOCKS),
        (Reason.LOCK_MISMATCH, "b: not in the lock file", Bit.LOCKS),
        (Reason.LOCK_MISMATCH, "c: sha256 differs from the lock", Bit.LOCKS),
        (Reason.LOCK_MISMATCH, "bad line 3", Bit.LOCKS),
    ]


# -- oracle ------------------------------------------------------------------------------


def test_a_passing_oracle_has_no_findings():
    assert oracle_findings(OracleFacts(results=(PASSED_ORACLE,))) == []


@pytest.mark.parametrize(
    "outcome", [o for o in Outcome if o is not Outcome.PASSED], ids=lambda o: o.name
)
def test_an_oracle_item_that_did_not_pass_fails_the_oracle(outcome):
    found = oracle_findings(OracleFacts(results=(ItemResult("t.py::t", outcome),)))
    assert found == [Finding(Reason.ORACLE_FAILED, f"t.py::t {outcome.value}", Bit.ORACLE)]


def test_a_failure_detail_ends_with_the_last_message_line_cut_at_200_characters():
    message = "first line\n" + "x" * 250 + "\n\n"
    found = oracle_findings(OracleFacts(results=(ItemResult("t::t", Outcome.FAILED, message),)))
    assert found[0].detail == "t::t failed: " + "x" * 200


def test_a_failure_detail_with_a_short_last_line_keeps_all_of_it():
    message = "E   assert 1 == 2\nt.py:3: AssertionError"
    found = oracle_findings(OracleFacts(results=(ItemResult("t::t", Outcome.FAILED, message),)))
    assert found[0].detail == "t::t failed: t.py:3: AssertionError"


def test_a_class_error_and_collection_errors_come_first():
    oracle = OracleFacts(
        results=(ItemResult("t::t", Outcome.ERROR),), collection_errors=("t2.py: boom",), error="x"
    )
    assert oracle_findings(oracle) == [
        Finding(Reason.GATE_ERROR, "x", Bit.ORACLE),
        Finding(Reason.COLLECTION_ERROR, "t2.py: boom", Bit.ORACLE),
        Finding(Reason.ORACLE_FAILED, "t::t error", Bit.ORACLE),
    ]


def test_a_pinned_oracle_item_missing_on_head_fails_and_is_not_no_oracle():
    found = oracle_findings(OracleFacts(pinned_missing=("t::gone",)))
    assert found == [Finding(Reason.ORACLE_FAILED, "t::gone missing on head", Bit.ORACLE)]


def test_an_empty_oracle_class_is_no_oracle():
    found = oracle_findings(OracleFacts())
    assert found == [Finding(Reason.NO_ORACLE, "no oracle item was collected", Bit.ORACLE)]


def test_an_oracle_process_error_is_not_also_no_oracle():
    assert codes(oracle_findings(OracleFacts(error="crashed"))) == ["GATE_ERROR"]


def test_a_not_applicable_oracle_skip_is_a_warning():
    oracle = OracleFacts(results=(PASSED_ORACLE,), not_applicable=("t::w skipped on win32",))
    assert oracle_findings(oracle) == [Finding(Warning_.ORACLE_SKIPPED, "t::w skipped on win32")]


# -- property ----------------------------------------------------------------------------


def test_a_seeded_passing_property_class_has_no_findings():
    assert property_findings(SEEDED) == []


def test_a_failing_property_item_is_property_failed():
    failing = dataclasses.replace(SEEDED, results=(ItemResult("t::p", Outcome.SKIPPED),))
    assert property_findings(failing) == [
        Finding(Reason.PROPERTY_FAILED, "t::p skipped", Bit.PROPERTY)
    ]


def test_an_empty_required_property_class_is_no_property_with_the_cause():
    empty = PropertyFacts(empty_because="tests/properties/INVARIANTS.md is missing")
    assert property_findings(empty) == [
        Finding(
            Reason.NO_PROPERTY,
            "the property class is empty (require_property_class is true): "
            "tests/properties/INVARIANTS.md is missing",
            Bit.PROPERTY,
        )
    ]


def test_an_empty_required_property_class_without_a_cause_says_only_that():
    assert [f.detail for f in property_findings(PropertyFacts())] == [
        "the property class is empty (require_property_class is true)"
    ]


def test_an_empty_property_class_that_is_not_required_is_fine():
    assert property_findings(PropertyFacts(required=False)) == []


def test_a_property_class_with_results_or_files_is_not_empty():
    with_results = PropertyFacts(results=(ItemResult("t::p", Outcome.PASSED),))
    with_files = PropertyFacts(files={"p.py": ("p::a",)}, seeds={"p::a": (3,)})
    assert property_findings(with_results) == property_findings(with_files) == []


def test_each_property_file_without_a_seeded_item_is_no_seeds_in_path_order():
    unseeded = PropertyFacts(
        files={"b.py": ("b::x",), "a.py": ("a::x",), "c.py": ("c::x", "c::y")},
        seeds={"b::x": (), "c::y": ("hypothesis:7",)},
    )
    assert property_findings(unseeded) == [
        Finding(Reason.NO_SEEDS, "a.py ran no item with a recorded seed", Bit.PROPERTY),
        Finding(Reason.NO_SEEDS, "b.py ran no item with a recorded seed", Bit.PROPERTY),
    ]


def test_a_property_process_error_reports_only_the_error():
    broken = PropertyFacts(files={"a.py": ("a::x",)}, error="crashed")
    assert property_findings(broken) == [Finding(Reason.GATE_ERROR, "crashed", Bit.PROPERTY)]
    assert property_findings(PropertyFacts(error="crashed")) == [
        Finding(Reason.GATE_ERROR, "crashed", Bit.PROPERTY)
    ]


# -- known-bad ---------------------------------------------------------------------------


def test_known_bad_replays_are_ignored_when_not_required():
    assert known_bad_findings(KnownBadFacts(required=False)) == []


def test_no_known_bad_fixture_is_no_known_bad():
    assert known_bad_findings(KnownBadFacts()) == [
        Finding(Reason.NO_KNOWN_BAD, "no *.patch fixture under known_bad_dir", Bit.KNOWN_BAD)
    ]


def test_a_fixture_the_oracles_catch_has_no_findings():
    assert known_bad_findings(KnownBadFacts(replays=(BITES, BITES))) == []


def test_each_replay_status_has_its_reason():
    replays = (
        ReplayFacts("err.patch", applied=True, error="worktree failed"),
        BITES,
        ReplayFacts("stale.patch", applied=False, problem="hunk 2 fails"),
        ReplayFacts("green.patch", applied=True),
    )
    assert known_bad_findings(KnownBadFacts(replays=replays)) == [
        Finding(Reason.GATE_ERROR, "known-bad err.patch: worktree failed", Bit.KNOWN_BAD),
        Finding(
            Reason.KNOWN_BAD_STALE,
            "stale.patch does not apply to head: hunk 2 fails",
            Bit.KNOWN_BAD,
        ),
        Finding(
            Reason.ORACLE_NEUTRALIZED, "green.patch left every oracle item passing", Bit.KNOWN_BAD
        ),
    ]


def test_a_green_replay_names_the_items_it_left_out_because_they_hang_on_head():
    replay = ReplayFacts("green.patch", applied=True, hung_on_head=("t.py::a", "t.py::b"))
    assert known_bad_findings(KnownBadFacts(replays=(replay,))) == [
        Finding(
            Reason.ORACLE_NEUTRALIZED,
            "green.patch left every oracle item it ran passing; not run, since they time out "
            "on head without the fixture: t.py::a, t.py::b",
            Bit.KNOWN_BAD,
        )
    ]


# -- freezes -----------------------------------------------------------------------------


def test_freeze_findings_block_on_expired_and_invalid_and_warn_on_ineffective():
    found = freeze_findings(FreezeFacts(expired=("e",), invalid=("v",), ineffective=("i",)))
    assert found == [
        Finding(Reason.FREEZE_EXPIRED, "e", Bit.FREEZE),
        Finding(Reason.FREEZE_INVALID, "v", Bit.FREEZE),
        Finding(Warning_.FREEZE_INEFFECTIVE, "i"),
    ]


# -- untrusted ---------------------------------------------------------------------------

UNTRUSTED_PASSES = [
    Outcome.PASSED,
    Outcome.SKIPPED,
    Outcome.XFAILED,
    Outcome.XPASSED,
    Outcome.RERUN_PASSED,
]


@pytest.mark.parametrize("outcome", UNTRUSTED_PASSES, ids=lambda o: o.name)
def test_an_untrusted_pass_skip_or_xfail_is_not_a_failure(outcome):
    assert untrusted_findings(ClassFacts(results=(ItemResult("t::u", outcome),)), True) == []


@pytest.mark.parametrize(
    "outcome", [Outcome.FAILED, Outcome.ERROR, Outcome.MISSING], ids=lambda o: o.name
)
def test_an_untrusted_failure_error_or_missing_item_blocks(outcome):
    found = untrusted_findings(ClassFacts(results=(ItemResult("t::u", outcome),)), True)
    assert found == [Finding(Reason.UNTRUSTED_FAILED, f"t::u {outcome.value}", Bit.UNTRUSTED)]


def test_fail_open_untrusted_turns_only_failures_into_warnings():
    facts = ClassFacts(results=(ItemResult("t::u", Outcome.FAILED),), collection_errors=("c",))
    assert untrusted_findings(facts, False) == [
        Finding(Reason.COLLECTION_ERROR, "c", Bit.UNTRUSTED),
        Finding(Warning_.UNTRUSTED_FAILED, "t::u failed"),
    ]


# -- the rules added with production-side cheats and the discrimination report --------


def test_production_findings_block_unless_approved_and_literals_always_warn():
    facts = ChangeFacts(
        production_paths=("pkg/a.py",),
        suspicious=("pkg/a.py:3: harness reference [harness_reference]",),
        oracle_literals=("pkg/a.py:9: 'hello-world' [oracle_literal]",),
    )
    found = authorship_findings(facts)
    assert [(f.code, f.bit) for f in found] == [
        (Warning_.ORACLE_LITERAL, None),
        (Reason.PRODUCTION_SUSPICIOUS, Bit.AUTHORSHIP),
    ]
    assert found[0].detail == "pkg/a.py:9: 'hello-world' [oracle_literal]"
    assert found[1].detail == (
        "pkg/a.py:3: harness reference [harness_reference]; an owner reviews it or approves"
    )
    approved = authorship_findings(dataclasses.replace(facts, approved_by=("alice",)))
    assert [f.code for f in approved] == [Warning_.ORACLE_LITERAL]
    verdict = decide(dataclasses.replace(CLEAN, changes=facts))
    assert verdict.decision is Decision.BLOCK and not verdict.bits[Bit.AUTHORSHIP]


def test_an_approval_of_an_earlier_commit_asks_an_owner_to_approve_head_itself():
    facts = ChangeFacts(
        production_paths=("pkg/a.py",),
        suspicious=("pkg/a.py:3: harness reference [harness_reference]",),
        approved_by=("alice",),
        earlier_commit_only=True,
    )
    assert authorship_findings(facts) == [
        Finding(
            Reason.PRODUCTION_SUSPICIOUS,
            "pkg/a.py:3: harness reference [harness_reference]; "
            "an owner reviews it or approves head itself",
            Bit.AUTHORSHIP,
        )
    ]


def test_a_tampered_trusted_run_blocks_its_class_whoever_approved():
    """Test-side integrity (contract section 4, step 4): the run's results do not count,
    and no review of the production code makes it base's tests that ran."""
    tampered = (
        Tampering("tests/t.py: the oracle 1 process loaded t from bytes ...", "oracle", Bit.ORACLE),
        Tampering("tests/p.py: the property process loaded p ...", "property", Bit.PROPERTY),
    )
    assert tampering_findings(tampered) == [
        Finding(
            Reason.PRODUCTION_SUSPICIOUS,
            "tests/t.py: the oracle 1 process loaded t from bytes ...; the oracle run's results "
            "do not count",
            Bit.ORACLE,
        ),
        Finding(
            Reason.PRODUCTION_SUSPICIOUS,
            "tests/p.py: the property process loaded p ...; the property run's results do not "
            "count",
            Bit.PROPERTY,
        ),
    ]
    approved = ChangeFacts(approved_by=("alice",))
    verdict = decide(dataclasses.replace(CLEAN, changes=approved, tampered=tampered))
    assert verdict.decision is Decision.BLOCK
    assert [r.code for r in verdict.reasons] == [Reason.PRODUCTION_SUSPICIOUS] * 2
    assert not verdict.bits[Bit.ORACLE] and not verdict.bits[Bit.PROPERTY]
    assert verdict.bits[Bit.AUTHORSHIP] and verdict.bits[Bit.KNOWN_BAD]


def test_platform_skips_are_warnings_that_never_block():
    oracle = OracleFacts(
        results=(PASSED_ORACLE,), not_applicable=("t.py::t skipped: py4 (skipped on base too)",)
    )
    found = oracle_findings(oracle)
    assert [(f.code, f.detail) for f in found] == [
        (Warning_.ORACLE_SKIPPED, "t.py::t skipped: py4 (skipped on base too)")
    ]
    assert decide(dataclasses.replace(CLEAN, oracle=oracle)).decision is Decision.ALLOW


def test_a_pass_on_rerun_fails_an_oracle_and_passes_an_untrusted_item():
    rerun = ItemResult("t.py::t", Outcome.RERUN_PASSED, "assert 1 == 2")
    assert [f.detail for f in oracle_findings(OracleFacts(results=(rerun,)))] == [
        "t.py::t passed only on rerun: assert 1 == 2"
    ]
    assert untrusted_findings(ClassFacts(results=(rerun,)), fail_closed=True) == []


def blind_facts(**changes: object) -> DiscriminationFacts:
    fields: dict[str, object] = {
        "items": (("t/a.py::blind", ()), ("t/b.py::sees", ("mutant x",))),
        "against": ("known-bad kb", "mutant x"),
    }
    fields.update(changes)
    return DiscriminationFacts(**fields)  # type: ignore[arg-type]


def test_tests_that_discriminate_nothing_are_a_warning_by_default():
    found = discrimination_findings(blind_facts())
    assert [(f.code, f.bit) for f in found] == [(Warning_.AGENT_TESTS_DISCRIMINATE_NOTHING, None)]
    assert found[0].detail == (
        "1 of 2 tests the change adds discriminate nothing: they pass against all 2 broken "
        "versions of head tried (known-bad fixtures, mutants of the lines it touched): "
        "t/a.py::blind"
    )
    verdict = decide(dataclasses.replace(CLEAN, discrimination=blind_facts()))
    assert verdict.decision is Decision.ALLOW


def test_require_discriminating_tests_makes_them_block_the_untrusted_bit():
    found = discrimination_findings(blind_facts(required=True))
    assert [(f.code, f.bit) for f in found] == [
        (Reason.AGENT_TESTS_DISCRIMINATE_NOTHING, Bit.UNTRUSTED)
    ]
    verdict = decide(dataclasses.replace(CLEAN, discrimination=blind_facts(required=True)))
    assert verdict.decision is Decision.BLOCK and not verdict.bits[Bit.UNTRUSTED]


def test_a_budget_that_ran_out_first_is_not_a_pass():
    """An item no broken version killed before the budget ran out was not shown to
    discriminate: a warning that says what was not tried, and a block when required,
    even when nothing ran at all."""
    late = {"skipped": ("mutant y", "known-bad kb2"), "incomplete": True, "budget": 1.5}
    (found,) = discrimination_findings(blind_facts(**late))
    assert found.code is Warning_.AGENT_TESTS_DISCRIMINATE_NOTHING
    assert found.detail == (
        "1 of 2 tests the change adds were not shown to discriminate anything: they passed "
        "against the 2 broken versions of head tried, and the time budget (1.5s) ran out "
        "before 2 more (mutant y, known-bad kb2): t/a.py::blind"
    )
    for against in (("known-bad kb",), ()):
        facts = blind_facts(required=True, against=against, **late)
        verdict = decide(dataclasses.replace(CLEAN, discrimination=facts))
        assert verdict.decision is Decision.BLOCK and not verdict.bits[Bit.UNTRUSTED]
        assert [r.code for r in verdict.reasons] == [Reason.AGENT_TESTS_DISCRIMINATE_NOTHING]


@pytest.mark.parametrize(
    "changes",
    [
        {"items": (("t/b.py::sees", ("mutant x",)),)},  # every test discriminates
        {"items": (("t/b.py::sees", ("mutant x",)),), "skipped": ("mutant y",)},
        {"against": ()},  # nothing broken ran: nothing to say
        {"items": ()},
    ],
)
def test_no_discrimination_finding_when_nothing_is_blind_or_nothing_ran(changes):
    assert discrimination_findings(blind_facts(required=True, **changes)) == []


def test_more_than_five_blind_tests_are_counted_after_the_first_five():
    items = tuple((f"t.py::t{i}", ()) for i in range(7))
    (found,) = discrimination_findings(blind_facts(items=items))
    assert found.detail.startswith("7 of 7 tests")
    assert found.detail.endswith("t.py::t0, t.py::t1, t.py::t2, t.py::t3, t.py::t4 and 2 more")


@pytest.mark.parametrize("count, tail", [(5, "t.py::t4"), (6, "t.py::t4 and 1 more")])
def test_up_to_five_blind_tests_are_named_and_the_rest_counted(count, tail):
    items = tuple((f"t.py::t{i}", ()) for i in range(count))
    (found,) = discrimination_findings(blind_facts(items=items))
    assert found.detail.endswith(tail)


def test_without_a_budget_the_skipped_detail_names_no_time_and_at_most_three_skipped():
    skipped = ("m1", "m2", "m3", "m4")
    facts = blind_facts(skipped=skipped, incomplete=True, budget=None, required=True)
    (found,) = discrimination_findings(facts)
    assert (found.code, found.bit) == (Reason.AGENT_TESTS_DISCRIMINATE_NOTHING, Bit.UNTRUSTED)
    assert found.detail == (
        "1 of 2 tests the change adds were not shown to discriminate anything: they passed "
        "against the 2 broken versions of head tried, and the time budget ran out "
        "before 4 more (m1, m2, m3 and 1 more): t/a.py::blind"
    )


def test_an_unpinned_session_from_production_names_the_session_the_error_and_the_fix():
    (found,) = oracle_findings(
        OracleFacts(results=(PASSED_ORACLE,), unpinned=(Unpinned("", "boom", True),))
    )
    assert (found.code, found.bit) == (Reason.ORACLE_UNPINNED, Bit.ORACLE)
    assert found.detail == (
        "<session>: base could not collect it, so it pins no oracle item: boom; its items are "
        "parametrised over production values (ORACLE_FROM_PRODUCTION), so head alone would "
        "decide them: make base collect it, or an owner approves"
    )
