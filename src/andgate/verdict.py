"""The verdict: a pure function from recorded facts to allow/block.

Nothing here runs git or pytest. Each phase of the gate records its facts in a
small frozen dataclass; `decide` turns them into reasons, bits and warnings.
A phase whose facts are missing (None: it never ran, or crashed) leaves its bit
false, so the only way to an allow is every phase recorded and clean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from andgate.records import (
    Bit,
    ChangeFacts,
    ClassFacts,
    Decision,
    DiscriminationFacts,
    Facts,
    Finding,
    FreezeFacts,
    KnownBadFacts,
    LockFacts,
    OracleFacts,
    Outcome,
    PropertyFacts,
    Reason,
    ReplayStatus,
    Warning_,
)

SCHEMA = "andgate.verdict/1"


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reasons: tuple[Finding, ...]
    bits: Mapping[Bit, bool]
    warnings: tuple[Finding, ...]
    counts: Mapping[str, int]

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW

    @property
    def could_not_run(self) -> bool:
        codes = {r.code for r in self.reasons}
        return Reason.MANIFEST_INVALID in codes or Reason.GATE_ERROR in codes

    @property
    def exit_code(self) -> int:
        if self.allowed:
            return 0
        return 2 if self.could_not_run else 1


# -- rules: each turns one phase's facts into findings ------------------------------------


def authorship_findings(facts: ChangeFacts) -> list[Finding]:
    found = [_f(Warning_.ORACLE_LITERAL, d) for d in facts.oracle_literals]
    if facts.approved:
        return found
    if facts.oracle_paths:
        if facts.require_human_owner:
            found += [
                _f(
                    Reason.ORACLE_AUTHORSHIP,
                    f"{p} changed without owner approval ({facts.case})",
                    Bit.AUTHORSHIP,
                )
                for p in facts.oracle_paths
            ]
        else:
            found += [
                _f(Warning_.ORACLE_CHANGED, f"{p} changed (require_human_owner is false)")
                for p in facts.oracle_paths
            ]
    why = dict(facts.trust_root_why)
    found += [
        _f(
            Reason.TRUST_ROOT_CHANGED,
            f"{p} changed without owner approval ({facts.case})"
            + (f": {why[p]}" if p in why else ""),
            Bit.AUTHORSHIP,
        )
        for p in facts.trust_root_paths
    ]
    found += [
        _f(Reason.PRODUCTION_SUSPICIOUS, f"{d}; an owner reviews it or approves", Bit.AUTHORSHIP)
        for d in facts.suspicious
    ]
    return found


def lock_findings(facts: LockFacts) -> list[Finding]:
    details = [f"{p}: listed in the lock but missing" for p in facts.missing]
    details += [f"{p}: not in the lock file" for p in facts.extra]
    details += [f"{p}: sha256 differs from the lock" for p in facts.changed]
    details += list(facts.problems)
    return [_f(Reason.LOCK_MISMATCH, d, Bit.LOCKS) for d in details]


def _class_findings(
    facts: ClassFacts, failed: Reason, bit: Bit, passing: set[Outcome]
) -> list[Finding]:
    found = [_f(Reason.GATE_ERROR, facts.error, bit)] if facts.error else []
    found += [_f(Reason.COLLECTION_ERROR, e, bit) for e in facts.collection_errors]
    for result in facts.results:
        if result.outcome not in passing:
            detail = f"{result.nodeid} {result.outcome.value}"
            lines = result.message.strip().splitlines()
            if lines:
                detail += f": {lines[-1][:200]}"
            found.append(_f(failed, detail, bit))
    return found


def oracle_findings(facts: OracleFacts) -> list[Finding]:
    found = _class_findings(facts, Reason.ORACLE_FAILED, Bit.ORACLE, {Outcome.PASSED})
    found += [
        _f(Reason.ORACLE_FAILED, f"{n} missing on head", Bit.ORACLE) for n in facts.pinned_missing
    ]
    found += [_f(Warning_.ORACLE_SKIPPED, d) for d in facts.not_applicable]
    if not facts.results and not facts.pinned_missing and not facts.error:
        found.append(_f(Reason.NO_ORACLE, "no oracle item was collected", Bit.ORACLE))
    return found


def property_findings(facts: PropertyFacts) -> list[Finding]:
    found = _class_findings(facts, Reason.PROPERTY_FAILED, Bit.PROPERTY, {Outcome.PASSED})
    if facts.error:
        return found
    if not facts.results and not facts.files and facts.required:
        detail = "the property class is empty (require_property_class is true)"
        if facts.empty_because:
            detail += f": {facts.empty_because}"
        found.append(_f(Reason.NO_PROPERTY, detail, Bit.PROPERTY))
    for path, nodeids in sorted(facts.files.items()):
        if not any(facts.seeds.get(n) for n in nodeids):
            found.append(
                _f(Reason.NO_SEEDS, f"{path} ran no item with a recorded seed", Bit.PROPERTY)
            )
    return found


def known_bad_findings(facts: KnownBadFacts) -> list[Finding]:
    if not facts.required:
        return []
    if not facts.replays:
        return [_f(Reason.NO_KNOWN_BAD, "no *.patch fixture under known_bad_dir", Bit.KNOWN_BAD)]
    found = []
    for replay in facts.replays:
        status = replay.status
        if status is ReplayStatus.ERROR:
            detail, code = f"known-bad {replay.name}: {replay.error}", Reason.GATE_ERROR
        elif status is ReplayStatus.STALE:
            detail = f"{replay.name} does not apply to head: {replay.problem}"
            code = Reason.KNOWN_BAD_STALE
        elif status is ReplayStatus.GREEN:
            detail = f"{replay.name} left every oracle item passing"
            code = Reason.ORACLE_NEUTRALIZED
        else:
            continue
        found.append(_f(code, detail, Bit.KNOWN_BAD))
    return found


def freeze_findings(facts: FreezeFacts) -> list[Finding]:
    found = [_f(Reason.FREEZE_EXPIRED, d, Bit.FREEZE) for d in facts.expired]
    found += [_f(Reason.FREEZE_INVALID, d, Bit.FREEZE) for d in facts.invalid]
    found += [_f(Warning_.FREEZE_INEFFECTIVE, d) for d in facts.ineffective]
    return found


def untrusted_findings(facts: ClassFacts, fail_closed: bool) -> list[Finding]:
    passing = {
        Outcome.PASSED,
        Outcome.SKIPPED,
        Outcome.XFAILED,
        Outcome.XPASSED,
        Outcome.RERUN_PASSED,
    }
    found = _class_findings(facts, Reason.UNTRUSTED_FAILED, Bit.UNTRUSTED, passing)
    if fail_closed:
        return found
    return [
        _f(Warning_.UNTRUSTED_FAILED, f.detail) if f.code is Reason.UNTRUSTED_FAILED else f
        for f in found
    ]


def discrimination_findings(facts: DiscriminationFacts) -> list[Finding]:
    """Tests the change adds that pass against every broken version of head tried."""
    blind = facts.blind
    if not blind or not (facts.against or facts.skipped):
        return []
    shown = _some(blind)
    if facts.skipped:
        # What was not tried is not a pass: with require_discriminating_tests this
        # blocks, as a miss would.
        budget = "" if facts.budget is None else f" ({facts.budget:.1f}s)"
        detail = (
            f"{len(blind)} of {len(facts.items)} tests the change adds were not shown to "
            f"discriminate anything: they passed against the {len(facts.against)} broken "
            f"versions of head tried, and the time budget{budget} ran out before "
            f"{len(facts.skipped)} more ({_some(facts.skipped, 3)}): {shown}"
        )
    else:
        detail = (
            f"{len(blind)} of {len(facts.items)} tests the change adds discriminate nothing: "
            f"they pass against all {len(facts.against)} broken versions of head tried "
            f"(known-bad fixtures, mutants of the lines it touched): {shown}"
        )
    if facts.required:
        return [_f(Reason.AGENT_TESTS_DISCRIMINATE_NOTHING, detail, Bit.UNTRUSTED)]
    return [_f(Warning_.AGENT_TESTS_DISCRIMINATE_NOTHING, detail)]


def _some(names: Sequence[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _f(code: Reason | Warning_, detail: str, bit: Bit | None = None) -> Finding:
    return Finding(code, detail, bit)


# -- the AND --------------------------------------------------------------------------


def decide(facts: Facts) -> Verdict:
    """Allow only when every phase was recorded and none found a reason."""
    findings: list[Finding] = list(facts.warnings)
    recorded: set[Bit] = set()
    if facts.manifest_error is not None:
        findings.append(_f(Reason.MANIFEST_INVALID, facts.manifest_error))
    findings += [_f(Reason.GATE_ERROR, e) for e in facts.gate_errors]
    phases = (
        (facts.changes, Bit.AUTHORSHIP, authorship_findings),
        (facts.lock, Bit.LOCKS, lock_findings),
        (facts.oracle, Bit.ORACLE, oracle_findings),
        (facts.known_bad, Bit.KNOWN_BAD, known_bad_findings),
        (facts.property, Bit.PROPERTY, property_findings),
        (facts.freezes, Bit.FREEZE, freeze_findings),
    )
    for phase_facts, bit, rule in phases:
        if phase_facts is not None:
            recorded.add(bit)
            findings += rule(phase_facts)  # type: ignore[operator]
    if facts.untrusted is not None:
        recorded.add(Bit.UNTRUSTED)
        findings += untrusted_findings(facts.untrusted, facts.fail_closed_untrusted)
    if facts.discrimination is not None:
        findings += discrimination_findings(facts.discrimination)
    reasons = tuple(f for f in findings if isinstance(f.code, Reason))
    warnings = tuple(f for f in findings if isinstance(f.code, Warning_))
    failed_bits = {f.bit for f in reasons}
    bits = {bit: bit in recorded and bit not in failed_bits for bit in Bit}
    allow = not reasons and all(bits.values())
    return Verdict(
        Decision.ALLOW if allow else Decision.BLOCK, reasons, bits, warnings, dict(facts.counts)
    )
