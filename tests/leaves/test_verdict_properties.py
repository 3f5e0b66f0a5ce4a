"""The AND, as a property: `decide` allows exactly when the contract says so.

Hypothesis draws random combinations of recorded facts (class outcomes, pinned
items missing on head, freezes, approvals, changed-file sets, lock problems,
replays, seeds, phases that never ran, gate and manifest errors) and compares
`andgate.verdict.decide` with an independent reading of CONTRACT.md written
below from the contract's text, not from verdict.py's helpers.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from andgate.records import (
    ChangeFacts,
    ClassFacts,
    Decision,
    Facts,
    Finding,
    FreezeFacts,
    ItemResult,
    KnownBadFacts,
    LockFacts,
    OracleFacts,
    Outcome,
    PropertyFacts,
    ReplayFacts,
    Warning_,
)
from andgate.verdict import decide

# -- the contract, read independently ---------------------------------------------------

ORACLE_PASSES = {Outcome.PASSED}  # "skipped, xfailed, xpassed, errors or fails does not pass"
# "skips, xfails and non-strict xpasses are not failures"; an absent test is never a pass.
# Threat model R3: an untrusted item that passes on a rerun is a pass.
UNTRUSTED_PASSES = {
    Outcome.PASSED,
    Outcome.SKIPPED,
    Outcome.XFAILED,
    Outcome.XPASSED,
    Outcome.RERUN_PASSED,
}


def contract_codes(f: Facts) -> set[str]:
    """Every reason code the contract's sections 4 and 6 require for these facts;
    a phase that was never recorded is a GATE_ERROR (the gate could not prove it)."""
    codes: set[str] = set()
    if f.manifest_error is not None:
        codes.add("MANIFEST_INVALID")
    if f.gate_errors:
        codes.add("GATE_ERROR")
    for phase in (f.changes, f.lock, f.oracle, f.known_bad, f.property, f.freezes, f.untrusted):
        if phase is None:
            codes.add("NOT_RECORDED")
    if f.changes is not None and not f.changes.approved_by:
        if f.changes.oracle_paths and f.changes.require_human_owner:
            codes.add("ORACLE_AUTHORSHIP")
        if f.changes.trust_root_paths:
            codes.add("TRUST_ROOT_CHANGED")
    if f.lock is not None and (f.lock.missing or f.lock.extra or f.lock.changed or f.lock.problems):
        codes.add("LOCK_MISMATCH")
    if f.oracle is not None:
        codes |= _class_codes(f.oracle, ORACLE_PASSES, "ORACLE_FAILED")
        if f.oracle.pinned_missing:
            codes.add("ORACLE_FAILED")
        if not f.oracle.results and not f.oracle.pinned_missing and f.oracle.error is None:
            codes.add("NO_ORACLE")
    if f.known_bad is not None and f.known_bad.required:
        if not f.known_bad.replays:
            codes.add("NO_KNOWN_BAD")
        for replay in f.known_bad.replays:
            if replay.error is not None:
                codes.add("GATE_ERROR")
            elif not replay.applied:
                codes.add("KNOWN_BAD_STALE")
            elif not replay.failed:
                codes.add("ORACLE_NEUTRALIZED")
    if f.property is not None:
        codes |= _class_codes(f.property, ORACLE_PASSES, "PROPERTY_FAILED")
        if f.property.error is None:
            if f.property.required and not f.property.results and not f.property.files:
                codes.add("NO_PROPERTY")
            for nodeids in f.property.files.values():
                if not any(f.property.seeds.get(n) for n in nodeids):
                    codes.add("NO_SEEDS")
    if f.freezes is not None:
        if f.freezes.expired:
            codes.add("FREEZE_EXPIRED")
        if f.freezes.invalid:
            codes.add("FREEZE_INVALID")
    if f.untrusted is not None:
        untrusted = _class_codes(f.untrusted, UNTRUSTED_PASSES, "UNTRUSTED_FAILED")
        if not f.fail_closed_untrusted:
            untrusted.discard("UNTRUSTED_FAILED")
        codes |= untrusted
    return codes


def _class_codes(facts: ClassFacts, passing: set[Outcome], failed: str) -> set[str]:
    codes = set()
    if facts.error is not None:
        codes.add("GATE_ERROR")
    if facts.collection_errors:
        codes.add("COLLECTION_ERROR")
    if any(r.outcome not in passing for r in facts.results):
        codes.add(failed)
    return codes


# -- random facts -------------------------------------------------------------------------

NODEIDS = [f"tests/t_{i}.py::test_{i}" for i in range(4)]
# Duplicates weight the draw towards clean facts, so allows are common enough.
CLEAN_OUTCOMES = [Outcome.PASSED] * 6 + list(Outcome)
MAYBE_TEXT = st.sampled_from([None, None, None, "it broke"])


def few(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, ...]]:
    """Often empty tuples: a non-empty one is usually a reason to block."""
    return st.one_of(
        st.just(()), st.just(()), st.lists(strategy, min_size=1, max_size=2).map(tuple)
    )


TEXTS = st.sampled_from(["a", "b", "c"])


@st.composite
def results(draw: st.DrawFn) -> tuple[ItemResult, ...]:
    ids = draw(st.lists(st.sampled_from(NODEIDS), unique=True, max_size=3))
    return tuple(ItemResult(n, draw(st.sampled_from(CLEAN_OUTCOMES))) for n in ids)


@st.composite
def oracle_facts(draw: st.DrawFn) -> OracleFacts:
    return OracleFacts(
        results=draw(results()),
        collection_errors=draw(few(TEXTS)),
        error=draw(MAYBE_TEXT),
        pinned_missing=draw(few(st.sampled_from(NODEIDS))),
    )


@st.composite
def class_facts(draw: st.DrawFn) -> ClassFacts:
    return ClassFacts(
        results=draw(results()), collection_errors=draw(few(TEXTS)), error=draw(MAYBE_TEXT)
    )


@st.composite
def property_facts(draw: st.DrawFn) -> PropertyFacts:
    items = draw(results())
    ids = [r.nodeid for r in items]
    files: dict[str, tuple[str, ...]] = {}
    for nodeid in ids:
        files.setdefault(draw(st.sampled_from(["p/a.py", "p/b.py"])), ())
        path = draw(st.sampled_from(sorted(files)))
        files[path] += (nodeid,)
    if draw(st.booleans()):
        files.setdefault("p/empty.py", ())  # a property file whose items all vanished
    seed_values = st.sampled_from([(), (1,), (1, 2), ("hypothesis:7",)])
    seeds = {n: draw(seed_values) for n in ids if draw(st.integers(0, 4))}
    return PropertyFacts(
        results=items,
        collection_errors=draw(few(TEXTS)),
        error=draw(MAYBE_TEXT),
        files=files,
        seeds=seeds,
        required=draw(st.booleans()),
    )


@st.composite
def known_bad_facts(draw: st.DrawFn) -> KnownBadFacts:
    replay = st.builds(
        ReplayFacts,
        name=TEXTS,
        applied=st.sampled_from([True, True, True, False]),
        failed=st.sampled_from([(NODEIDS[0],), (NODEIDS[0],), (NODEIDS[0], NODEIDS[1]), ()]),
        problem=st.just("does not apply"),
        error=MAYBE_TEXT,
    )
    return KnownBadFacts(
        replays=tuple(draw(st.lists(replay, max_size=3))), required=draw(st.booleans())
    )


PATHS = st.sampled_from(["tests/oracles/test_a.py", "tests/trust_manifest.yaml", "lib/x.py"])
changes = st.builds(
    ChangeFacts,
    oracle_paths=few(PATHS),
    trust_root_paths=few(PATHS),
    production_paths=few(PATHS),
    test_paths=few(PATHS),
    approved_by=st.sampled_from([(), (), ("alice",)]),
    require_human_owner=st.booleans(),
)
locks = st.builds(
    LockFacts, missing=few(TEXTS), extra=few(TEXTS), changed=few(TEXTS), problems=few(TEXTS)
)
freezes = st.builds(FreezeFacts, expired=few(TEXTS), invalid=few(TEXTS), ineffective=few(TEXTS))
warnings = st.lists(
    st.builds(Finding, code=st.sampled_from(list(Warning_)), detail=TEXTS), max_size=2
).map(tuple)


def recorded(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A phase is usually recorded; None means it never ran or crashed."""
    return st.one_of(strategy, strategy, strategy, strategy, st.none())


facts_strategy = st.builds(
    Facts,
    manifest_error=st.sampled_from([None] * 8 + ["tests/trust_manifest.yaml: bad"]),
    gate_errors=st.sampled_from([()] * 8 + [("git failed",)]),
    changes=recorded(changes),
    lock=recorded(locks),
    oracle=recorded(oracle_facts()),
    known_bad=recorded(known_bad_facts()),
    property=recorded(property_facts()),
    freezes=recorded(freezes),
    untrusted=recorded(class_facts()),
    fail_closed_untrusted=st.booleans(),
    warnings=warnings,
)


# -- the properties ---------------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(facts_strategy)
def test_allow_exactly_when_the_contracts_and_holds(facts: Facts) -> None:
    expected = contract_codes(facts)
    verdict = decide(facts)
    event("allow" if not expected else "block")
    assert verdict.allowed == (not expected), (expected, verdict.reasons)
    # Every blocking phase says why with the code the contract names.
    named = {r.code.value for r in verdict.reasons}
    assert expected - {"NOT_RECORDED"} <= named, (expected, named)
    # ... and names nothing the facts do not call for (an unrecorded phase may
    # say GATE_ERROR: the gate could not prove that bit).
    unrecorded = {"GATE_ERROR"} if "NOT_RECORDED" in expected else set()
    assert named <= expected | unrecorded, (expected, named)


@settings(max_examples=300, deadline=None)
@given(facts_strategy)
def test_verdict_json_invariants_and_exit_code(facts: Facts) -> None:
    verdict = decide(facts)
    codes = {r.code.value for r in verdict.reasons}
    # CONTRACT section 5: allow exactly when reasons is empty and every bit is true.
    assert verdict.allowed == (not verdict.reasons and all(verdict.bits.values()))
    assert (verdict.decision is Decision.ALLOW) == verdict.allowed
    if verdict.allowed:
        assert verdict.exit_code == 0
    elif codes & {"MANIFEST_INVALID", "GATE_ERROR"}:
        assert verdict.exit_code == 2
    else:
        assert verdict.exit_code == 1
    # Warnings never block, and never appear among the reasons.
    assert all(isinstance(w.code, Warning_) for w in verdict.warnings)
    assert not any(isinstance(r.code, Warning_) for r in verdict.reasons)
