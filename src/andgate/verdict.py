"""The verdict: a pure function from recorded facts to allow/block.

Nothing here runs git or pytest. Each phase of the gate records its facts in a
small frozen dataclass; `decide` turns them into reasons, bits and warnings.
A phase whose facts are missing (None: it never ran, or crashed) leaves its bit
false, so the only way to an allow is every phase recorded and clean.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from andgate.exitcodes import Exit
from andgate.records import (
    Bit,
    ChangeFacts,
    ClassFacts,
    Decision,
    DiscriminationFacts,
    Dispute,
    DisputeFacts,
    DisputeOutcome,
    DisputeStatus,
    EvidenceFacts,
    Facts,
    Finding,
    FreezeFacts,
    HiddenFailure,
    ItemResult,
    KnownBadFacts,
    LockFacts,
    OracleFacts,
    Outcome,
    PropertyFacts,
    Reason,
    ReplayFacts,
    ReplayStatus,
    Tampering,
    Unpinned,
    Warning_,
    WeakenedMutant,
)

SCHEMA = "andgate.verdict/1"

F = TypeVar("F")  # one phase's facts


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reasons: tuple[Finding, ...]
    bits: Mapping[Bit, bool]
    warnings: tuple[Finding, ...]
    counts: Mapping[str, int]
    disputes: tuple[DisputeOutcome, ...] = ()

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW

    @property
    def could_not_run(self) -> bool:
        codes = {r.code for r in self.reasons}
        return Reason.MANIFEST_INVALID in codes or Reason.GATE_ERROR in codes

    @property
    def exit_code(self) -> Exit:
        if self.allowed:
            return Exit.OK
        return Exit.COULD_NOT_RUN if self.could_not_run else Exit.BLOCK


# -- rules: each turns one phase's facts into findings ------------------------------------


def authorship_findings(facts: ChangeFacts) -> list[Finding]:
    found = [_f(Warning_.ORACLE_LITERAL, d) for d in facts.oracle_literals]
    if facts.adopting:
        return found + adoption_findings(facts)
    if not facts.approved:
        found += _unapproved_trust_root(facts)
    if not facts.head_approved:
        # an owner's review of an earlier commit never covers production code
        fix = "approves head itself" if facts.approved else "approves"
        found += [
            _f(Reason.PRODUCTION_SUSPICIOUS, f"{d}; an owner reviews it or {fix}", Bit.AUTHORSHIP)
            for d in facts.suspicious
        ]
    return found


def tampering_findings(tampered: Sequence[Tampering]) -> list[Finding]:
    """A trusted run that loaded test-side code other than its tree's: production
    code reached into it. No approval lifts it: an owner can vouch for production
    code, not make what ran base's tests."""
    return [
        _f(
            Reason.PRODUCTION_SUSPICIOUS,
            f"{t.detail}; the {t.run} run's results do not count",
            t.bit,
        )
        for t in tampered
    ]


def _unapproved_trust_root(facts: ChangeFacts) -> list[Finding]:
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


def adoption_findings(facts: ChangeFacts) -> list[Finding]:
    """The change that adopts andgate adds the trust root and nothing else: no
    production change (no gate judged it; adopt first, then change code). The
    workflow that runs the gate and CODEOWNERS are trust root (contract section 2),
    so adopting may add them."""
    found = [
        _f(
            Reason.TRUST_ROOT_CHANGED,
            f"{p} is production code changed in the change that adopts andgate; "
            "adopt first (manifest and tests only), then change code in a later change",
            Bit.AUTHORSHIP,
        )
        for p in facts.production_paths
        if not _gate_wiring(p)
    ]
    found += [
        _f(Reason.PRODUCTION_SUSPICIOUS, f"{d}; an owner reviews it", Bit.AUTHORSHIP)
        for d in facts.suspicious
    ]
    return found


def _gate_wiring(path: str) -> bool:
    return path.startswith((".github/workflows/", ".github/actions/")) or path in (
        "CODEOWNERS",
        ".github/CODEOWNERS",
        "docs/CODEOWNERS",
    )


def lock_findings(facts: LockFacts) -> list[Finding]:
    details = [f"{p}: listed in the lock but missing" for p in facts.missing]
    details += [f"{p}: not in the lock file" for p in facts.extra]
    details += [f"{p}: sha256 differs from the lock" for p in facts.changed]
    details += list(facts.problems)
    return [_f(Reason.LOCK_MISMATCH, d, Bit.LOCKS) for d in details]


def _process_findings(facts: ClassFacts, bit: Bit) -> list[Finding]:
    found = [_f(Reason.GATE_ERROR, facts.error, bit)] if facts.error else []
    found += [_f(Reason.COLLECTION_ERROR, e, bit) for e in facts.collection_errors]
    return found


def failure_detail(result: ItemResult) -> str:
    """`<nodeid> <outcome>: <the message's last line>`: the subject comes first."""
    detail = f"{result.nodeid} {result.outcome.value}"
    lines = result.message.strip().splitlines()
    if lines:
        detail += f": {lines[-1][:200]}"
    return detail


def _class_findings(
    facts: ClassFacts, failed: Reason, bit: Bit, passing: set[Outcome]
) -> list[Finding]:
    found = _process_findings(facts, bit)
    found += [_f(failed, failure_detail(r), bit) for r in facts.results if r.outcome not in passing]
    return found


def oracle_findings(
    facts: OracleFacts, disputed: Mapping[str, Dispute] | None = None
) -> list[Finding]:
    """An oracle item that does not pass is ORACLE_FAILED; one the change disputes
    (`disputed`: oracle items at base) is ORACLE_DISPUTED instead, with the same bit."""
    disputed = disputed or {}

    def failed(nodeid: str, detail: str) -> Finding:
        if nodeid in disputed:
            return _f(Reason.ORACLE_DISPUTED, disputed_detail(detail, disputed[nodeid]), Bit.ORACLE)
        return _f(Reason.ORACLE_FAILED, detail, Bit.ORACLE)

    found = _process_findings(facts, Bit.ORACLE)
    found += [
        failed(r.nodeid, failure_detail(r))
        for r in facts.results
        if r.outcome is not Outcome.PASSED
    ]
    found += [failed(n, f"{n} missing on head") for n in facts.pinned_missing]
    found += [_f(Warning_.ORACLE_SKIPPED, d) for d in facts.not_applicable]
    found += [_unpinned_finding(u) for u in facts.unpinned]
    if not facts.results and not facts.pinned_missing and not facts.error:
        found.append(_f(Reason.NO_ORACLE, "no oracle item was collected", Bit.ORACLE))
    return found


def _unpinned_finding(unpinned: Unpinned) -> Finding:
    """Base could not collect an oracle file: a warning, unless its items are
    parametrised over production values, when head alone would decide them."""
    where = unpinned.where or "<session>"
    detail = f"{where}: base could not collect it, so it pins no oracle item: {unpinned.error}"
    if unpinned.from_production:
        detail += (
            "; its items are parametrised over production values (ORACLE_FROM_PRODUCTION), "
            "so head alone would decide them: make base collect it, or an owner approves"
        )
        return _f(Reason.ORACLE_UNPINNED, detail, Bit.ORACLE)
    return _f(Warning_.ORACLE_UNPINNED, detail)


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
            detail, code = _green_detail(replay), Reason.ORACLE_NEUTRALIZED
        else:
            continue
        found.append(_f(code, detail, Bit.KNOWN_BAD))
    return found


def _green_detail(replay: ReplayFacts) -> str:
    """No oracle item failed under the fixture. Items that time out on head without
    it were not run (they prove nothing there): the proof is still missing, a block,
    and the detail says which items may yet catch it once head's hang is fixed."""
    if not replay.hung_on_head:
        return f"{replay.name} left every oracle item passing"
    hung = ", ".join(replay.hung_on_head)
    return (
        f"{replay.name} left every oracle item it ran passing; not run, since they time "
        f"out on head without the fixture: {hung}"
    )


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


# -- approval evidence (contract section 6) ---------------------------------------------------


def evidence_findings(facts: EvidenceFacts, changes: ChangeFacts | None) -> list[Finding]:
    """What an edit of oracle items gives up: ORACLE_WEAKENED for each failure it hides
    on head's code and each mutant it lets through. A warning; with
    block_weakened_oracles a block unless an owner approved head itself (the evidence
    is a function of base and head, so any check of head showed it), also when it was
    not measured or not complete: what was not tried is not a pass."""
    details = [hidden_detail(h) for h in facts.hidden]
    details += [weakened_detail(w) for w in facts.weakened]
    approved_head = changes is not None and changes.head_approved
    if not facts.block or approved_head:
        return [_f(Warning_.ORACLE_WEAKENED, d) for d in details]
    fix = f"; block_weakened_oracles: {_approval_needed(changes)}"
    found = [_f(Reason.ORACLE_WEAKENED, d + fix, Bit.AUTHORSHIP) for d in details]
    if not facts.complete:
        found.append(_f(Reason.ORACLE_WEAKENED, _unmeasured_detail(facts) + fix, Bit.AUTHORSHIP))
    return found


def hidden_detail(hidden: HiddenFailure) -> str:
    head = "deletes it" if hidden.on_head == "deleted" else "passes"
    return (
        f"{hidden.nodeid}: base's version fails on head's code ({hidden.failure}) and "
        f"head's edited oracle {head}: the edit hides this failure"
    )


def weakened_detail(mutant: WeakenedMutant) -> str:
    first, more = mutant.caught_by[0], len(mutant.caught_by) - 1
    also = f" (and {more} more of base's items)" if more > 0 else ""
    return (
        f"{first}: base's version catches the mutant {mutant.path}:{mutant.line} in "
        f"{mutant.function}, {mutant.mutation}{also}; head's oracle lets it pass"
    )


def _unmeasured_detail(facts: EvidenceFacts) -> str:
    if facts.not_measured:
        return f"what the oracle edit gives up was not measured ({facts.not_measured})"
    if facts.error:
        return f"what the oracle edit gives up could not be measured: {facts.error}"
    return (
        f"{facts.left} of {facts.mutants} mutants were not tried: the evidence budget "
        f"({facts.budget:g}s) ran out"
    )


def _approval_needed(changes: ChangeFacts | None) -> str:
    if changes is not None and changes.approved:
        return "an approval of an earlier commit does not cover it; an owner approves head itself"
    return "an owner approves head itself, having read this"


# -- disputes (contract section 4) ------------------------------------------------------------

REASON_SHOWN = 500  # characters of a dispute's reason in a one-line detail


def escaped(text: str, limit: int = REASON_SHOWN) -> str:
    """The change's text as one inert line: whitespace runs become one space, anything
    unprintable (escape sequences, bidirectional overrides) is shown as its escape."""
    words = " ".join(text.split())
    shown = "".join(c if c.isprintable() else _escape_char(c) for c in words)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _escape_char(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def disputed_detail(failure: str, dispute: Dispute) -> str:
    return f'{failure}; the change disputes this oracle: "{escaped(dispute.reason)}"'


def judge_disputes(
    facts: DisputeFacts, oracle: OracleFacts | None, changes: ChangeFacts | None = None
) -> tuple[list[Finding], tuple[DisputeOutcome, ...]]:
    """Each dispute's status, and the findings only disputes make: a malformed file
    blocks; a dispute of an item that passes or is no oracle item is DISPUTE_MOOT.
    (ORACLE_DISPUTED for a failing item comes from `oracle_findings`.) A change that
    writes disputes and changes no production code stopped at the dispute, as the agent
    instructions say: its disputed oracle items pass because nothing changed, and the
    change is ORACLE_DISPUTED (routed to the owner), never an allow."""
    found = []
    if facts.problem is not None:
        found.append(_f(Reason.ORACLE_DISPUTED, facts.problem, Bit.ORACLE))
    stopped = _stopped_at_the_dispute(facts, changes)
    outcomes = []
    for dispute in facts.disputes:
        status, failure = _dispute_status(dispute, oracle)
        if stopped and status is DisputeStatus.PASSES:
            status, failure = DisputeStatus.DISPUTED, f"{dispute.nodeid} {STOPPED}"
            found.append(_f(Reason.ORACLE_DISPUTED, disputed_detail(failure, dispute), Bit.ORACLE))
        outcomes.append(DisputeOutcome(dispute.nodeid, dispute.reason, status, failure))
        moot = _moot_detail(dispute, status, facts.path)
        if moot:
            found.append(_f(Warning_.DISPUTE_MOOT, moot))
    return found, tuple(outcomes)


STOPPED = (
    "passes, and the change changes no production code: it stops at the dispute (the "
    "oracle's owner decides)"
)


def _stopped_at_the_dispute(facts: DisputeFacts, changes: ChangeFacts | None) -> bool:
    """The change writes the disputes file and changes no production code."""
    if changes is None or changes.production_paths or not facts.path:
        return False
    return facts.path in changes.test_paths


def _dispute_status(dispute: Dispute, oracle: OracleFacts | None) -> tuple[DisputeStatus, str]:
    if dispute.oracle_at_base is False:
        return DisputeStatus.NOT_ORACLE, ""
    if oracle is None or dispute.oracle_at_base is None:
        return DisputeStatus.NOT_JUDGED, ""
    if dispute.nodeid in oracle.pinned_missing:
        return DisputeStatus.DISPUTED, f"{dispute.nodeid} missing on head"
    for result in oracle.results:
        if result.nodeid == dispute.nodeid:
            if result.outcome is Outcome.PASSED:
                return DisputeStatus.PASSES, ""
            return DisputeStatus.DISPUTED, failure_detail(result)
    if oracle.error:  # the process ended early: the item may simply not have been reached
        return DisputeStatus.NOT_JUDGED, ""
    return DisputeStatus.NOT_RUN, ""


def _moot_detail(dispute: Dispute, status: DisputeStatus, path: str) -> str | None:
    where = f"; remove its entry from {path}" if path else ""
    if status is DisputeStatus.PASSES:
        return f"{dispute.nodeid} passes, so its dispute blocks nothing{where}"
    if status is DisputeStatus.NOT_RUN:
        return f"{dispute.nodeid} did not run on head (not applicable here){where}"
    if status is DisputeStatus.NOT_ORACLE:
        hint = f" ({dispute.hint})" if dispute.hint else ""
        return (
            f"{dispute.nodeid} is not an oracle item collected at base{hint}: a dispute names "
            f"exactly one oracle item's node id (no globs, files, classes or prefixes){where}"
        )
    return None


def _disputes_first(reasons: list[Finding]) -> tuple[Finding, ...]:
    """ORACLE_DISPUTED first: the change's own account of its block leads."""
    return tuple(sorted(reasons, key=lambda f: f.code is not Reason.ORACLE_DISPUTED))


def _some(names: Sequence[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _f(code: Reason | Warning_, detail: str, bit: Bit | None = None) -> Finding:
    return Finding(code, detail, bit)


# -- the AND --------------------------------------------------------------------------


def _found(phase_facts: F | None, rule: Callable[[F], list[Finding]]) -> list[Finding] | None:
    """A phase's findings, or None when the phase was not recorded."""
    return None if phase_facts is None else rule(phase_facts)


def decide(facts: Facts) -> Verdict:
    """Allow only when every phase was recorded and none found a reason."""
    findings: list[Finding] = list(facts.warnings)
    recorded: set[Bit] = set()
    if facts.manifest_error is not None:
        findings.append(_f(Reason.MANIFEST_INVALID, facts.manifest_error))
    findings += [_f(Reason.GATE_ERROR, e) for e in facts.gate_errors]
    findings += tampering_findings(facts.tampered)
    disputes = facts.disputes or DisputeFacts()
    disputed = {d.nodeid: d for d in disputes.disputes if d.oracle_at_base}
    phases = (
        (Bit.AUTHORSHIP, _found(facts.changes, authorship_findings)),
        (Bit.LOCKS, _found(facts.lock, lock_findings)),
        (Bit.ORACLE, _found(facts.oracle, lambda oracle: oracle_findings(oracle, disputed))),
        (Bit.KNOWN_BAD, _found(facts.known_bad, known_bad_findings)),
        (Bit.PROPERTY, _found(facts.property, property_findings)),
        (Bit.FREEZE, _found(facts.freezes, freeze_findings)),
    )
    for bit, found in phases:
        if found is not None:
            recorded.add(bit)
            findings += found
    if facts.untrusted is not None:
        recorded.add(Bit.UNTRUSTED)
        findings += untrusted_findings(facts.untrusted, facts.fail_closed_untrusted)
    if facts.discrimination is not None:
        findings += discrimination_findings(facts.discrimination)
    if facts.evidence is not None:
        findings += evidence_findings(facts.evidence, facts.changes)
    dispute_found, outcomes = judge_disputes(disputes, facts.oracle, facts.changes)
    findings += dispute_found
    reasons = _disputes_first([f for f in findings if isinstance(f.code, Reason)])
    warnings = tuple(f for f in findings if isinstance(f.code, Warning_))
    failed_bits = {f.bit for f in reasons}
    bits = {bit: bit in recorded and bit not in failed_bits for bit in Bit}
    allow = not reasons and all(bits.values())
    return Verdict(
        Decision.ALLOW if allow else Decision.BLOCK,
        reasons,
        bits,
        warnings,
        dict(facts.counts),
        outcomes,
    )
