"""What every reporter renders from: the check's facts (`ReportContext`) and the
verdict JSON payload that verdict.json, summary.md and report.html all show."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from andgate.records import (
    Bit,
    ChangeFacts,
    DiscriminationFacts,
    EvidenceFacts,
    InventoryRecord,
    PropertyFacts,
    ReplayFacts,
    StepTime,
)
from andgate.report.evidence import payload as evidence_payload
from andgate.verdict import SCHEMA, Verdict


@dataclass(frozen=True)
class ReportContext:
    verdict: Verdict
    base: str | None
    head: str | None
    today: dt.date
    inventory: Sequence[InventoryRecord] = ()
    replays: Sequence[ReplayFacts] = ()
    property: PropertyFacts | None = None
    property_seed: int | None = None
    changes: ChangeFacts | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    traceback: str | None = None
    approvals: Sequence[Any] = ()  # github.Approval: login, source, review, commit, URL
    ignored_reviews: Sequence[Any] = ()  # github.IgnoredReview: whose, and what changed since
    patches: Mapping[str, str] = field(default_factory=dict)  # known-bad fixture texts
    freezes: Sequence[Any] = ()  # the live freeze.Freeze entries from base
    discrimination: DiscriminationFacts | None = None
    evidence: EvidenceFacts | None = None  # None: the change edits no oracle item
    # node id -> disputes.SourceAtBase: each disputed test as base has it
    dispute_sources: Mapping[str, Any] = field(default_factory=dict)
    disputes_file: str = ""
    generated: Sequence[tuple[str, str]] = ()  # (path, sha256) carried into the worktrees
    known_bad_from: str | None = None  # head, when an owner's approval of head replays its fixtures
    timings: Sequence[StepTime] = ()  # where the check's time went, up to the verdict


def verdict_payload(ctx: ReportContext) -> dict[str, Any]:
    v = ctx.verdict
    return {
        "schema": SCHEMA,
        "verdict": v.decision.value,
        "reasons": [r.to_json() for r in v.reasons],
        "bits": {bit.value: v.bits[bit] for bit in Bit},
        "warnings": [w.to_json() for w in v.warnings],
        "counts": dict(v.counts),
        "base": ctx.base,
        "head": ctx.head,
        "today": ctx.today.isoformat(),
        "approvals": [a.to_json() for a in ctx.approvals],
        "discrimination": _discrimination(ctx.discrimination),
        "weakened": evidence_payload(ctx.evidence),
        "disputes": [d.to_json() for d in v.disputes],
        "generated_files": [{"path": p, "sha256": d} for p, d in ctx.generated],
    }


def _discrimination(facts: DiscriminationFacts | None) -> dict[str, Any] | None:
    """Per test the change adds: does it fail against any broken version of head?"""
    if facts is None:
        return None
    return {
        "broken_versions": list(facts.against),
        "incomplete": facts.incomplete,
        "not_tried": list(facts.skipped),
        "budget_seconds": facts.budget,
        "items": [
            {"nodeid": nodeid, "discriminates": bool(by), "against": list(by)}
            for nodeid, by in facts.items
        ],
    }


def json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=True, default=str) + "\n").encode()
