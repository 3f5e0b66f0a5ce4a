"""CheckState: the phases' facts, recorded as they return them, become the verdict's
input with only what accumulates added (gate errors, warnings, the inventory's counts)."""

from __future__ import annotations

from dataclasses import fields, replace

from andgate.check.inventory.items import counts
from andgate.check.state import Captured, CheckState, RunKey, RunName
from andgate.process.results import RunResult
from andgate.records import (
    Bit,
    ClassFacts,
    Facts,
    Finding,
    LockFacts,
    OracleFacts,
    PropertyFacts,
    ReplayFacts,
    Tampering,
    Warning_,
)


def test_what_the_phases_returned_reaches_the_verdict_unchanged():
    state = CheckState()
    oracle, lock = OracleFacts(), LockFacts()
    untrusted, prop = ClassFacts(), PropertyFacts()
    state.found = replace(
        state.found,
        oracle=oracle,
        lock=lock,
        untrusted=untrusted,
        property=prop,
        manifest_error="m",
        fail_closed_untrusted=False,
    )
    facts = state.facts()
    assert facts.oracle is oracle and facts.lock is lock
    assert facts.untrusted is untrusted and facts.property is prop
    assert facts.manifest_error == "m" and facts.fail_closed_untrusted is False


def test_facts_add_only_what_accumulates_along_the_way():
    state = CheckState()
    warning = Finding(Warning_.ADOPTING, "w")
    state.warnings.append(warning)
    state.gate_errors.append("e")
    facts = state.facts()
    assert facts.warnings == (warning,) and facts.gate_errors == ("e",)
    assert facts.counts == counts(state.inventory)
    # every other field is the phases' own, exactly as recorded
    accumulated = {"warnings", "gate_errors", "counts"}
    for f in fields(Facts):
        if f.name not in accumulated:
            assert getattr(facts, f.name) == getattr(state.found, f.name), f.name


def test_a_phase_that_never_returned_leaves_its_fact_none():
    facts = CheckState().facts()
    assert facts.oracle is None and facts.known_bad is None and facts.untrusted is None
    assert facts.discrimination is None and facts.changes is None


def test_tampered_runs_each_void_their_class_once():
    """What the trusted runs loaded that is not the test side they were given: the
    oracle class's processes and base's runs void the oracle bit, the property runs
    the property bit, a replay the known-bad proof; a process's finding and its merged
    class's are one."""
    state = CheckState()
    one = "tests/a.py: the oracle 1 process loaded a from bytes other than base's"
    state.runs[RunKey(RunName.ORACLE, process=1)] = RunResult("oracle 1", 0, 1.0, tampered=(one,))
    state.runs[RunKey(RunName.ORACLE)] = RunResult("oracle", 0, 1.0, tampered=(one,))
    state.runs[RunKey(RunName.BASE_SKIPS)] = RunResult(
        "oracle skips on base", 0, 1.0, tampered=("b",)
    )
    state.runs[RunKey(RunName.PROPERTY, unit=1)] = RunResult(
        "property part 2/2", 0, 1.0, tampered=("p",)
    )
    state.runs[RunKey(RunName.UNTRUSTED)] = RunResult("untrusted", 0, 1.0)
    state.replays.append(ReplayFacts("kb_x", applied=True, tampered=("k",)))
    assert state.tampering() == (
        Tampering(one, "oracle", Bit.ORACLE),
        Tampering("b", "oracle skips on base", Bit.ORACLE),
        Tampering("p", "property", Bit.PROPERTY),
        Tampering("k", "known-bad kb_x", Bit.KNOWN_BAD),
    )


def test_a_units_files_are_its_own_and_its_processes_never_the_class_merged():
    """What a shard bundles for a unit: its log and JUnit file and its processes'
    logs; not the class's merged JUnit file (combine merges the units again), nor a
    sibling unit's files, nor the check's own logs."""
    captured = Captured()
    unit, sibling, whole = (
        RunKey(RunName.ORACLE, unit=0),
        RunKey(RunName.ORACLE, unit=1),
        RunKey(RunName.ORACLE),
    )
    for run in (unit, replace(unit, process=1), sibling, whole):
        captured.put(run, "log", str(run).encode())
    captured.put(whole, "junit", b"<testsuites/>")
    captured.files["worktrees.log"] = b"rebuilt"
    mine = {"oracle@0.log": b"oracle@0", "oracle@0.1.log": b"oracle@0.1"}
    assert captured.of_runs({unit}) == mine
    assert set(captured.of_runs({whole})) == {"oracle.log", "oracle.junit"}
