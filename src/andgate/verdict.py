"""The verdict: a pure function from recorded facts to allow/block.

Nothing here runs git or pytest. Each phase of the gate records its facts in a
small frozen dataclass; `decide` turns them into reasons, bits and warnings.
A phase whose facts are missing (None: it never ran, or crashed) leaves its bit
false, so the only way to an allow is every phase recorded and clean.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from andgate.run import Outcome

SCHEMA = "andgate.verdict/1"


class Reason(enum.StrEnum):
    MANIFEST_INVALID = "MANIFEST_INVALID"
    NO_ORACLE = "NO_ORACLE"
    ORACLE_FAILED = "ORACLE_FAILED"
    ORACLE_NEUTRALIZED = "ORACLE_NEUTRALIZED"
    NO_KNOWN_BAD = "NO_KNOWN_BAD"
    KNOWN_BAD_STALE = "KNOWN_BAD_STALE"
    PROPERTY_FAILED = "PROPERTY_FAILED"
    NO_PROPERTY = "NO_PROPERTY"
    NO_SEEDS = "NO_SEEDS"
    FREEZE_EXPIRED = "FREEZE_EXPIRED"
    FREEZE_INVALID = "FREEZE_INVALID"
    UNTRUSTED_FAILED = "UNTRUSTED_FAILED"
    ORACLE_AUTHORSHIP = "ORACLE_AUTHORSHIP"
    TRUST_ROOT_CHANGED = "TRUST_ROOT_CHANGED"
    LOCK_MISMATCH = "LOCK_MISMATCH"
    COLLECTION_ERROR = "COLLECTION_ERROR"
    GATE_ERROR = "GATE_ERROR"


class Warning_(enum.StrEnum):
    FREEZE_INEFFECTIVE = "FREEZE_INEFFECTIVE"
    ORACLE_SKIPPED = "ORACLE_SKIPPED"
    ORACLE_CHANGED = "ORACLE_CHANGED"
    UNTRUSTED_FAILED = "UNTRUSTED_FAILED"
    UNCOMMITTED_CHANGES = "UNCOMMITTED_CHANGES"
    APPROVAL_IGNORED = "APPROVAL_IGNORED"


class Bit(enum.StrEnum):
    AUTHORSHIP = "authorship_ok"
    LOCKS = "locks_ok"
    ORACLE = "oracle_ok"
    KNOWN_BAD = "known_bad_ok"
    PROPERTY = "property_ok"
    FREEZE = "freeze_ok"
    UNTRUSTED = "untrusted_ok"


class Decision(enum.StrEnum):
    ALLOW = "allow"
    BLOCK = "block"


@dataclass(frozen=True)
class Finding:
    code: Reason | Warning_
    detail: str
    bit: Bit | None = None

    def to_json(self) -> dict[str, str]:
        return {"code": self.code.value, "detail": self.detail}


# -- recorded facts -------------------------------------------------------------------


@dataclass(frozen=True)
class ChangeFacts:
    """Files changed base..head, sorted by what they are."""

    oracle_paths: tuple[str, ...] = ()
    trust_root_paths: tuple[str, ...] = ()
    # (path, why) for trust-root pytest config files: what pytest would read differently
    trust_root_why: tuple[tuple[str, str], ...] = ()
    production_paths: tuple[str, ...] = ()
    test_paths: tuple[str, ...] = ()
    approved_by: tuple[str, ...] = ()
    require_human_owner: bool = True

    @property
    def approved(self) -> bool:
        return bool(self.approved_by)

    @property
    def case(self) -> str:
        touched = bool(self.oracle_paths or self.trust_root_paths)
        if touched and self.production_paths:
            return "mixed change: production code and trust-root files together"
        if touched:
            return "trust-root-only change"
        return "no trust-root file changed"


@dataclass(frozen=True)
class LockFacts:
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class ItemResult:
    nodeid: str
    outcome: Outcome
    message: str = ""


@dataclass(frozen=True)
class ClassFacts:
    """One class process: every item it had to report, and what it reported."""

    results: tuple[ItemResult, ...] = ()
    collection_errors: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class OracleFacts(ClassFacts):
    pinned_missing: tuple[str, ...] = ()
    not_applicable: tuple[str, ...] = ()  # platform skips that hold on base too


@dataclass(frozen=True)
class PropertyFacts(ClassFacts):
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    seeds: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    required: bool = True
    empty_because: str = ""  # e.g. the invariants file is missing


@dataclass(frozen=True)
class ReplayFacts:
    name: str
    applied: bool
    failed: tuple[str, ...] = ()
    problem: str = ""
    error: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class KnownBadFacts:
    replays: tuple[ReplayFacts, ...] = ()
    required: bool = True


@dataclass(frozen=True)
class FreezeFacts:
    expired: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    ineffective: tuple[str, ...] = ()


@dataclass(frozen=True)
class Facts:
    """Everything the verdict depends on. None: that phase was never recorded."""

    manifest_error: str | None = None
    gate_errors: tuple[str, ...] = ()
    changes: ChangeFacts | None = None
    lock: LockFacts | None = None
    oracle: OracleFacts | None = None
    known_bad: KnownBadFacts | None = None
    property: PropertyFacts | None = None
    freezes: FreezeFacts | None = None
    untrusted: ClassFacts | None = None
    fail_closed_untrusted: bool = True
    warnings: tuple[Finding, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)


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
    if facts.approved:
        return []
    found = []
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
        if replay.error:
            found.append(
                _f(Reason.GATE_ERROR, f"known-bad {replay.name}: {replay.error}", Bit.KNOWN_BAD)
            )
        elif not replay.applied:
            found.append(
                _f(
                    Reason.KNOWN_BAD_STALE,
                    f"{replay.name} does not apply to head: {replay.problem}",
                    Bit.KNOWN_BAD,
                )
            )
        elif not replay.failed:
            found.append(
                _f(
                    Reason.ORACLE_NEUTRALIZED,
                    f"{replay.name} left every oracle item passing",
                    Bit.KNOWN_BAD,
                )
            )
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
    reasons = tuple(f for f in findings if isinstance(f.code, Reason))
    warnings = tuple(f for f in findings if isinstance(f.code, Warning_))
    failed_bits = {f.bit for f in reasons}
    bits = {bit: bit in recorded and bit not in failed_bits for bit in Bit}
    allow = not reasons and all(bits.values())
    return Verdict(
        Decision.ALLOW if allow else Decision.BLOCK, reasons, bits, warnings, dict(facts.counts)
    )
