"""Artifacts: verdict JSON, summary.md, inventory, seeds, known-bad, JUnit, logs.

One reporter per output, behind a small Protocol. The artifacts folder is the
only thing `check` writes inside the repository; it carries its own
`.gitignore` (as `.pytest_cache` does) so it never shows up in `git status`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from andgate.inventory import Record
from andgate.records import Bit, ChangeFacts, Finding, PropertyFacts, ReplayFacts, ReplayStatus
from andgate.seeds import seeds_payload
from andgate.verdict import SCHEMA, Verdict

EMPTY_JUNIT = b'<?xml version="1.0" encoding="utf-8"?><testsuites />\n'
JUNIT_FILES = {
    "oracle": "oracle.xml",
    "property": "property.xml",
    "untrusted": "untrusted.xml",
    "flake": "flake.xml",
}
SUMMARY_PER_CODE = 10
BIT_LABELS = {
    Bit.AUTHORSHIP: "authorship (who changed trust-root files)",
    Bit.LOCKS: "fixture locks",
    Bit.ORACLE: "oracle class passes",
    Bit.KNOWN_BAD: "oracles still fail every known-bad fixture",
    Bit.PROPERTY: "properties pass with recorded seeds",
    Bit.FREEZE: "freezes valid and unexpired",
    Bit.UNTRUSTED: "untrusted class has no failure",
}


@dataclass(frozen=True)
class ReportContext:
    verdict: Verdict
    base: str | None
    head: str | None
    today: dt.date
    inventory: Sequence[Record] = ()
    replays: Sequence[ReplayFacts] = ()
    property: PropertyFacts | None = None
    property_seed: int | None = None
    changes: ChangeFacts | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    traceback: str | None = None


@dataclass(frozen=True)
class Artifacts:
    folder: Path
    written: tuple[Path, ...]


class Reporter(Protocol):
    filename: str

    def render(self, ctx: ReportContext) -> bytes: ...


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
    }


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=True, default=str) + "\n").encode()


class VerdictJson:
    filename = "verdict.json"

    def render(self, ctx: ReportContext) -> bytes:
        return _json(verdict_payload(ctx))


class InventoryJson:
    filename = "trust_inventory.json"

    def render(self, ctx: ReportContext) -> bytes:
        return _json(
            {
                "schema": "andgate.inventory/1",
                "base": ctx.base,
                "head": ctx.head,
                "counts": dict(ctx.verdict.counts),
                "items": [r.to_json() for r in ctx.inventory],
            }
        )


class SeedsJson:
    filename = "property_seeds.json"

    def render(self, ctx: ReportContext) -> bytes:
        facts = ctx.property or PropertyFacts()
        return _json(seeds_payload(facts, ctx.property_seed))


class KnownBadJson:
    filename = "known_bad.json"

    def render(self, ctx: ReportContext) -> bytes:
        return _json(
            {
                "schema": "andgate.known_bad/1",
                "fixtures": [
                    {
                        "name": r.name,
                        "applied": r.applied,
                        "failed_oracle_items": list(r.failed),
                        "bites": r.status is ReplayStatus.BITES,
                        "problem": r.problem or None,
                        "error": r.error,
                        "seconds": round(r.seconds, 3),
                    }
                    for r in ctx.replays
                ],
            }
        )


class SummaryMarkdown:
    """What a reviewer reads in ten seconds: decision, every reason, counts."""

    filename = "summary.md"

    def render(self, ctx: ReportContext) -> bytes:
        v = ctx.verdict
        lines = [f"# andgate: {'✅ ALLOW' if v.allowed else '❌ BLOCK'}", ""]
        lines.append(self._header(ctx))
        lines += [
            "",
            *self._reasons(ctx),
            *self._warnings(ctx),
            *self._bits(ctx),
            *self._counts(ctx),
            *self._known_bad(ctx),
        ]
        return ("\n".join(lines).rstrip() + "\n").encode("utf-8", "backslashreplace")

    def _header(self, ctx: ReportContext) -> str:
        base = (ctx.base or "?")[:12]
        head = (ctx.head or "?")[:12]
        parts = [f"base `{base}` → head `{head}`", f"today {ctx.today.isoformat()}"]
        if ctx.changes is not None:
            parts.append(ctx.changes.case)
            if ctx.changes.approved_by:
                parts.append(f"approved by {', '.join(ctx.changes.approved_by)}")
        return " · ".join(parts)

    def _reasons(self, ctx: ReportContext) -> list[str]:
        reasons = ctx.verdict.reasons
        if not reasons:
            return ["Every trust class holds: nothing blocks this change.", ""]
        lines = [f"## Why it blocks ({len(reasons)})", "", *_grouped(reasons, bold=True)]
        return [*lines, ""]

    def _warnings(self, ctx: ReportContext) -> list[str]:
        if not ctx.verdict.warnings:
            return []
        return ["## Warnings", "", *_grouped(ctx.verdict.warnings, bold=False), ""]

    def _bits(self, ctx: ReportContext) -> list[str]:
        lines = ["## Checks", "", "| check | holds |", "|---|---|"]
        for bit, label in BIT_LABELS.items():
            lines.append(f"| {label} | {'yes' if ctx.verdict.bits[bit] else '**no**'} |")
        return [*lines, ""]

    def _counts(self, ctx: ReportContext) -> list[str]:
        c = ctx.verdict.counts
        keys = ("oracle", "property", "frozen_flake", "untrusted")
        return [
            "## Tests per class",
            "",
            "| " + " | ".join(keys) + " |",
            "|" + "---:|" * len(keys),
            "| " + " | ".join(str(c.get(k, 0)) for k in keys) + " |",
            "",
        ]

    def _known_bad(self, ctx: ReportContext) -> list[str]:
        if not ctx.replays:
            return []
        lines = [
            "## Known-bad fixtures",
            "",
            "| fixture | applies | failed oracle items | seconds |",
            "|---|---|---|---:|",
        ]
        for r in ctx.replays:
            killed = ", ".join(f"`{n}`" for n in r.failed[:3]) or ("error" if r.error else "none")
            lines.append(
                f"| {r.name} | {'yes' if r.applied else 'no'} | {killed} | {r.seconds:.1f} |"
            )
        return [*lines, ""]


def _grouped(findings: Sequence[Finding], *, bold: bool) -> list[str]:
    """One bullet per finding; a code with more than SUMMARY_PER_CODE findings
    becomes a count and its first SUMMARY_PER_CODE, the rest in verdict.json."""
    by_code: dict[str, list[Finding]] = {}
    for finding in findings:
        by_code.setdefault(finding.code.value, []).append(finding)
    lines = []
    for code, group in by_code.items():
        label = f"**{code}**" if bold else code
        if len(group) <= SUMMARY_PER_CODE:
            lines += [f"- {label}: {_md(f.detail)}" for f in group]
            continue
        lines.append(f"- {label}: {len(group)} findings; the first {SUMMARY_PER_CODE}:")
        lines += [f"  - {_md(f.detail)}" for f in group[:SUMMARY_PER_CODE]]
        lines.append(f"  - … and {len(group) - SUMMARY_PER_CODE} more in verdict.json")
    return lines


def _md(text: str) -> str:
    """Node ids and paths in code spans; keep one line per reason."""
    return text.replace("\n", " ").replace("|", "\\|")


REPORTERS: tuple[Reporter, ...] = (
    VerdictJson(),
    InventoryJson(),
    SeedsJson(),
    KnownBadJson(),
    SummaryMarkdown(),
)


def write_artifacts(folder: Path, ctx: ReportContext) -> Artifacts:
    folder.mkdir(parents=True, exist_ok=True)
    written = [_write(folder / ".gitignore", b"# written by andgate check\n*\n")]
    for reporter in REPORTERS:
        written.append(_write(folder / reporter.filename, reporter.render(ctx)))
    for run, name in JUNIT_FILES.items():
        written.append(_write(folder / name, ctx.files.get(f"{run}.junit", EMPTY_JUNIT)))
    logs = folder / "logs"
    logs.mkdir(exist_ok=True)
    for old in logs.glob("*.log"):
        old.unlink()
    for key, data in ctx.files.items():
        if key.endswith(".log"):
            written.append(_write(logs / key, data))
    if ctx.traceback:
        written.append(
            _write(logs / "gate_error.log", ctx.traceback.encode("utf-8", "backslashreplace"))
        )
    return Artifacts(folder, tuple(written))


def _write(path: Path, data: bytes) -> Path:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def merge_junit(documents: Sequence[bytes]) -> bytes | None:
    """The shards' JUnit files as one `<testsuites>`; None if any is unreadable."""
    merged = ET.Element("testsuites")
    for document in documents:
        try:
            root = ET.fromstring(document)
        except ET.ParseError:
            return None
        merged.extend(list(root) if root.tag == "testsuites" else [root])
    return ET.tostring(merged, encoding="utf-8", xml_declaration=True)
