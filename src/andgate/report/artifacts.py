"""The artifacts of a check: verdict JSON, summary.md, report.html, inventory, seeds,
known-bad, JUnit and logs, one reporter per file behind a small Protocol. Where and
how they are written safely is `folder.py`'s job."""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from andgate.records import PropertyFacts, ReplayStatus, StepTime
from andgate.report import html as htmlreport
from andgate.report.context import ReportContext, json_bytes, verdict_payload
from andgate.report.folder import JUNIT_FILES, VERDICT_FILE, ArtifactsFolder, plain_name
from andgate.report.summary import SummaryMarkdown

EMPTY_JUNIT = b'<?xml version="1.0" encoding="utf-8"?><testsuites />\n'


@dataclass(frozen=True)
class Artifacts:
    folder: Path
    written: tuple[Path, ...]
    verdict_json: bytes = b""  # the bytes written to verdict.json, for --json
    timings: tuple[StepTime, ...] = ()  # the check's steps (timings.json), for --profile
    seconds: float = 0.0  # what writing these files took


class Reporter(Protocol):
    filename: str

    def render(self, ctx: ReportContext) -> bytes: ...


class VerdictJson:
    filename = "verdict.json"

    def render(self, ctx: ReportContext) -> bytes:
        return json_bytes(verdict_payload(ctx))


class InventoryJson:
    filename = "trust_inventory.json"

    def render(self, ctx: ReportContext) -> bytes:
        return _json_with_list(
            {
                "schema": "andgate.inventory/1",
                "base": ctx.base,
                "head": ctx.head,
                "counts": dict(ctx.verdict.counts),
            },
            "items",
            (r.to_json() for r in ctx.inventory),
        )


def _json_with_list(head: dict[str, Any], key: str, items: Iterable[dict[str, Any]]) -> bytes:
    """The bytes of `json_bytes({**head, key: list(items)})`, one item at a time.

    `json.dumps(..., indent=2)` of a whole inventory runs the pure-Python encoder and
    joins one small string per token: at 64,000 items about 1.4 s and 50 MiB more
    than the output. Here each item is encoded on its own (scalars by the C encoder)
    and only the output bytes are kept."""
    lines = json_bytes({**head, key: []})
    tail = f'  "{key}": []\n}}\n'.encode()
    assert lines.endswith(tail), "the list must be the last key"
    chunks = [lines[: -len(tail)], f'  "{key}": ['.encode()]
    first = True
    for item in items:
        chunks.append(b"\n" if first else b",\n")
        chunks.append(_indented(item, 4))
        first = False
    chunks.append(b"]\n}\n" if first else b"\n  ]\n}\n")
    return b"".join(chunks)


def _indented(value: Any, indent: int) -> bytes:
    """`value` as `json.dumps(indent=2)` writes it nested `indent` spaces deep."""
    pad = " " * indent
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        inner = " " * (indent + 2)
        fields = ",\n".join(
            inner + _ascii(k) + ": " + _nested(v, indent + 2) for k, v in value.items()
        )
        return f"{pad}{{\n{fields}\n{pad}}}".encode()
    return (pad + _nested(value, indent)).encode()


# What json.dumps(ensure_ascii=True) writes for a string (the C function it calls).
_ascii = json.encoder.encode_basestring_ascii


def _nested(value: Any, indent: int) -> str:
    """`value` as it follows a key `indent` spaces deep."""
    if isinstance(value, str):
        return _ascii(value)
    if value is None:
        return "null"
    text = json.dumps(value, indent=2, ensure_ascii=True, default=str)
    return text.replace("\n", "\n" + " " * indent)


class SeedsJson:
    filename = "property_seeds.json"

    def render(self, ctx: ReportContext) -> bytes:
        facts = ctx.property or PropertyFacts()
        return json_bytes(seeds_payload(facts, ctx.property_seed))


def seeds_payload(facts: PropertyFacts, hypothesis_seed: int | None) -> dict[str, Any]:
    """property_seeds.json: per property file, per item, the seeds it ran with."""
    files = {
        path: {nodeid: list(facts.seeds.get(nodeid, ())) for nodeid in nodeids}
        for path, nodeids in sorted(facts.files.items())
    }
    return {
        "schema": "andgate.property_seeds/1",
        "hypothesis_seed": hypothesis_seed,
        "reproduce": None if hypothesis_seed is None else f"--hypothesis-seed={hypothesis_seed}",
        "files": files,
        "unseeded_files": [
            p for p, ids in sorted(facts.files.items()) if not any(facts.seeds.get(n) for n in ids)
        ],
    }


class KnownBadJson:
    filename = "known_bad.json"

    def render(self, ctx: ReportContext) -> bytes:
        return json_bytes(
            {
                "schema": "andgate.known_bad/1",
                # base's fixtures replay, head's once an owner approved head
                "fixtures_from": ctx.known_bad_from or ctx.base,
                "fixtures": [
                    {
                        "name": r.name,
                        "applied": r.applied,
                        "failed_oracle_items": list(r.failed),
                        # not run: they time out on head without the fixture
                        "hung_on_head": list(r.hung_on_head),
                        "bites": r.status is ReplayStatus.BITES,
                        "problem": r.problem or None,
                        "error": r.error,
                        "seconds": round(r.seconds, 3),
                    }
                    for r in ctx.replays
                ],
            }
        )


class HtmlPage:
    """report.html: one self-contained page for a reviewer (`html.py`)."""

    filename = "report.html"

    def render(self, ctx: ReportContext) -> bytes:
        page = htmlreport.build_report(
            ctx, approvals=ctx.approvals, patches=ctx.patches, freezes=ctx.freezes
        )
        return htmlreport.render(page)


class TimingsJson:
    """Where the check's wall time went, step by step, up to the verdict (`check
    --profile` prints it as a table). Steps overlap: a timeline, not a sum."""

    filename = "timings.json"

    def render(self, ctx: ReportContext) -> bytes:
        steps = list(ctx.timings)
        end = max((s.started + s.seconds for s in steps), default=0.0)
        by_kind: dict[str, float] = {}
        for s in steps:
            if s.kind != "phase":  # a phase holds the processes and worktrees counted
                by_kind[s.kind] = by_kind.get(s.kind, 0.0) + s.seconds
        return json_bytes(
            {
                "schema": "andgate.timings/1",
                "base": ctx.base,
                "head": ctx.head,
                "seconds": round(end, 3),
                "seconds_by_kind": {k: round(v, 3) for k, v in sorted(by_kind.items())},
                "steps": [s.to_json() for s in steps],
            }
        )


REPORTERS: tuple[Reporter, ...] = (
    VerdictJson(),
    InventoryJson(),
    SeedsJson(),
    KnownBadJson(),
    SummaryMarkdown(),
    HtmlPage(),
    TimingsJson(),
)


def write_artifacts(folder: ArtifactsFolder, ctx: ReportContext) -> Artifacts:
    """Every artifact, verdict.json last: no verdict file unless all the rest was written."""
    started = time.monotonic()
    top = {r.filename: r.render(ctx) for r in REPORTERS if r.filename != VERDICT_FILE}
    for run, name in JUNIT_FILES.items():
        top[name] = ctx.files.get(f"{run}.junit", EMPTY_JUNIT)
    logs = {k: data for k, data in ctx.files.items() if k.endswith(".log") and plain_name(k)}
    if ctx.traceback:
        logs["gate_error.log"] = ctx.traceback.encode("utf-8", "backslashreplace")
    verdict = VerdictJson().render(ctx)
    written = folder.write(top, logs, verdict)
    seconds = time.monotonic() - started
    return Artifacts(folder.path, tuple(written), verdict, tuple(ctx.timings), seconds)


def merge_junit(documents: Sequence[bytes]) -> bytes | None:
    """The shards' JUnit files as one `<testsuites>`; None if any is unreadable."""
    merged = ET.Element("testsuites")
    for document in documents:
        try:
            root = ET.fromstring(document)
        except ET.ParseError:
            return None
        merged.extend(list(root) if root.tag == "testsuites" else [root])
    out: bytes = ET.tostring(merged, encoding="utf-8", xml_declaration=True)
    return out
