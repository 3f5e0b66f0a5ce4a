"""Artifacts: verdict JSON, summary.md, inventory, seeds, known-bad, JUnit, logs.

One reporter per output, behind a small Protocol. The artifacts folder is the
only thing `check` writes inside the repository. It is claimed before any test
code runs (`claim_artifacts`): a symlinked artifacts path, a symlink between
the repository root and the folder, or a folder inside `.git` is refused. A
folder andgate creates (or finds empty) is its own and carries its own
`.gitignore` (as `.pytest_cache` does) so it never shows up in `git status`.
In any other folder (a project's own `artifacts/`, `--artifacts .`) andgate
writes only where no file of that name exists. The marker file `MARKER` lists
what andgate wrote; only those files are ever replaced or deleted on the next
run. Every write goes through the folder's descriptor, never through a symlink.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from andgate import writer
from andgate.errors import AndgateError
from andgate.git import Git
from andgate.inventory import Record
from andgate.records import (
    Bit,
    ChangeFacts,
    DiscriminationFacts,
    DisputeStatus,
    Finding,
    PropertyFacts,
    ReplayFacts,
    ReplayStatus,
)
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
MARKER = ".andgate-artifacts"
MARKER_SCHEMA = "andgate.artifacts/1"
MARKER_MAX_BYTES = 1024 * 1024
GITIGNORE = b"# written by andgate check\n*\n"
LOGS = "logs"
BUNDLE = "bundle.json"  # check --shard's one artifact (bundle.py)
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
    approvals: Sequence[Any] = ()  # github.Approval: login, source, review, commit, URL
    ignored_reviews: Sequence[Any] = ()  # github.IgnoredReview: whose, and what changed since
    patches: Mapping[str, str] = field(default_factory=dict)  # known-bad fixture texts
    freezes: Sequence[Any] = ()  # the live freeze.Freeze entries from base
    discrimination: DiscriminationFacts | None = None
    # node id -> disputes.SourceAtBase: each disputed test as base has it
    dispute_sources: Mapping[str, Any] = field(default_factory=dict)
    disputes_file: str = ""
    generated: Sequence[tuple[str, str]] = ()  # (path, sha256) carried into the worktrees


@dataclass(frozen=True)
class Artifacts:
    folder: Path
    written: tuple[Path, ...]
    verdict_json: bytes = b""  # the bytes written to verdict.json, for --json


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
        "approvals": [a.to_json() for a in ctx.approvals],
        "discrimination": _discrimination(ctx.discrimination),
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


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=True, default=str) + "\n").encode()


class VerdictJson:
    filename = "verdict.json"

    def render(self, ctx: ReportContext) -> bytes:
        return _json(verdict_payload(ctx))


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
    """The bytes of `_json({**head, key: list(items)})`, one item at a time.

    `json.dumps(..., indent=2)` of a whole inventory runs the pure-Python encoder and
    joins one small string per token: at 64,000 items about 1.4 s and 50 MiB more
    than the output. Here each item is encoded on its own (scalars by the C encoder)
    and only the output bytes are kept."""
    lines = _json({**head, key: []})
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
            *self._disputes(ctx),
            *self._reasons(ctx),
            *self._warnings(ctx),
            *self._ignored_reviews(ctx),
            *self._bits(ctx),
            *self._counts(ctx),
            *self._known_bad(ctx),
            *self._discrimination(ctx),
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

    def _disputes(self, ctx: ReportContext) -> list[str]:
        """First, when the change disputes oracle tests: each test, its source at base,
        how it failed, the change's reason (inert, in a code block) and the way on."""
        disputes = ctx.verdict.disputes
        if not disputes:
            return []
        lines = [f"## Disputed oracle tests ({len(disputes)})", "", DISPUTES_INTRO, ""]
        for dispute in disputes:
            lines += [f"### {_code(dispute.nodeid)}: {dispute.status.value}", ""]
            source = ctx.dispute_sources.get(dispute.nodeid)
            if source is not None:
                where = f"{_code(source.path)}, line {source.line}"
                lines += [f"Source at base ({where}):", "", *_fenced(source.text, "python"), ""]
            if dispute.failure:
                lines += [f"Failure: {_code(dispute.failure)}", ""]
            lines += ["The change's reason:", "", *_fenced(dispute.reason, "text"), ""]
        if any(d.status is DisputeStatus.DISPUTED for d in disputes):
            where = _code(ctx.disputes_file) if ctx.disputes_file else "the disputes file"
            lines += [OWNER_WAY.format(file=where), ""]
        return lines

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

    def _ignored_reviews(self, ctx: ReportContext) -> list[str]:
        """Each owner's review of an earlier commit that no longer holds, with the
        protected files that changed since it."""
        if not ctx.ignored_reviews:
            return []
        lines = [
            "## Reviews that no longer count",
            "",
            "| owner | review | reviewed commit | protected files changed since |",
            "|---|---|---|---|",
        ]
        for r in ctx.ignored_reviews:
            files = ", ".join("`" + _md(p).replace("`", "'") + "`" for p in r.changed)
            review = "" if r.review_id is None else str(r.review_id)
            lines.append(f"| {_md(r.login)} | {review} | `{r.commit[:12]}` | {files} |")
        return [*lines, ""]

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

    def _discrimination(self, ctx: ReportContext) -> list[str]:
        """Which broken versions of head the tests the change adds failed against,
        and which the time budget left untried (those prove nothing either way)."""
        facts = ctx.discrimination
        if facts is None or not facts.items:
            return []
        shown = sum(1 for _, by in facts.items if by)
        budget = "" if facts.budget is None else f" within its {facts.budget:.1f}s budget"
        lines = [
            "## Do the tests the change adds discriminate?",
            "",
            f"{shown} of {len(facts.items)} failed against a broken version of head; "
            f"{len(facts.against)} broken versions ran{budget}.",
        ]
        if facts.skipped:
            lines += [
                "",
                f"Not tried, the time budget ran out ({len(facts.skipped)}; an item not "
                "shown to discriminate is not a pass):",
                "",
                *[f"- {_md(name)}" for name in facts.skipped],
            ]
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
        shown = _code if code in INERT_CODES else _md
        if len(group) <= SUMMARY_PER_CODE:
            lines += [f"- {label}: {shown(f.detail)}" for f in group]
            continue
        lines.append(f"- {label}: {len(group)} findings; the first {SUMMARY_PER_CODE}:")
        lines += [f"  - {shown(f.detail)}" for f in group[:SUMMARY_PER_CODE]]
        lines.append(f"  - … and {len(group) - SUMMARY_PER_CODE} more in verdict.json")
    return lines


def _md(text: str) -> str:
    """Node ids and paths in code spans; keep one line per reason."""
    return text.replace("\n", " ").replace("|", "\\|")


# Findings whose detail quotes the change's own prose (a dispute's reason): shown as
# code, never as markup.
INERT_CODES = frozenset({"ORACLE_DISPUTED", "DISPUTE_MOOT"})
DISPUTES_INTRO = (
    "The change says these oracle tests contradict the specification. Disputing never "
    "lets a change in: it blocks until the oracle's owner decides."
)
OWNER_WAY = (
    "**What the owner can do:** if the oracle is wrong, fix it in a follow-up change that "
    "an owner approves, then gate this change again (the dispute is then moot: drop its "
    "entry). If the oracle is right, reject the dispute: the change must make the test "
    "pass and remove its entry from {file}."
)


def _ticks(text: str, least: int) -> str:
    """A run of backticks longer than any in `text` (so `text` cannot close it)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(least, longest + 1)


def _code(text: str) -> str:
    """`text` as one inline code span: no markup, no HTML, one line."""
    text = " ".join(text.split())
    ticks = _ticks(text, 1)
    return f"{ticks} {text} {ticks}" if "`" in text else f"{ticks}{text}{ticks}"


def _fenced(text: str, language: str) -> list[str]:
    """`text` as a fenced code block that no line of it can close."""
    fence = _ticks(text, 3)
    return [f"{fence}{language}", *text.splitlines(), fence]


class HtmlPage:
    """report.html: one self-contained page for a reviewer (`htmlreport.py`)."""

    filename = "report.html"

    def render(self, ctx: ReportContext) -> bytes:
        from andgate import htmlreport

        page = htmlreport.build_report(
            ctx, approvals=ctx.approvals, patches=ctx.patches, freezes=ctx.freezes
        )
        return htmlreport.render(page)


REPORTERS: tuple[Reporter, ...] = (
    VerdictJson(),
    InventoryJson(),
    SeedsJson(),
    KnownBadJson(),
    SummaryMarkdown(),
    HtmlPage(),
)


def _refused(path: Path | str, why: str) -> AndgateError:
    return AndgateError(
        f"{path}: {why}; andgate never writes through a symlink or into git's folder: "
        "remove it, or pass --artifacts DIR naming a real folder outside .git"
    )


def _taken(path: Path) -> AndgateError:
    return AndgateError(
        f"{path}: exists and andgate did not write it, so it is left alone; move it, "
        "or pass --artifacts DIR naming a new or empty folder"
    )


def _cannot_write(path: Path, exc: OSError) -> AndgateError:
    return AndgateError(
        f"{path}: cannot write the artifacts ({exc.strerror or exc}); "
        "pass --artifacts DIR naming a writable folder"
    )


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _check_path(path: Path, repo: Path | None, git_dirs: Sequence[Path]) -> None:
    if path.is_symlink():
        raise _refused(path, "the artifacts folder is a symlink")
    if repo is not None:
        root = os.path.abspath(repo)
        if _is_under(str(path), root) and str(path) != root:
            current = Path(root)
            for part in path.relative_to(root).parts[:-1]:
                current = current / part
                if current.is_symlink():
                    raise _refused(path, f"{current} is a symlink inside the repository")
    real = os.path.realpath(path)
    for git_dir in git_dirs:
        if _is_under(real, os.path.realpath(git_dir)):
            raise _refused(path, "the artifacts folder is inside the repository's git folder")


def _plain(name: str) -> bool:
    """A file name andgate may write: no folder part, nothing hidden, no NUL."""
    return (
        bool(name)
        and len(name.encode("utf-8", "surrogateescape")) <= 255
        and "/" not in name
        and "\0" not in name
        and not name.startswith(".")
    )


def _marker_entry(name: object) -> bool:
    if not isinstance(name, str):
        return False
    folder, _, rest = name.rpartition("/")
    if folder == LOGS:
        return _plain(rest)
    return not folder and (_plain(name) or name == ".gitignore")


def _read_marker(fd: int) -> frozenset[str] | None:
    """The names the marker lists, or None: no marker, or not one andgate wrote."""
    raw = _regular_bytes(fd, MARKER, MARKER_MAX_BYTES)
    try:
        data = json.loads(raw) if raw is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("schema") != MARKER_SCHEMA:
        return None
    files = data.get("files")
    if not isinstance(files, list):
        return None
    return frozenset(n for n in files if _marker_entry(n)) | {MARKER}


def _regular_bytes(fd: int, name: str, limit: int) -> bytes | None:
    """The bytes of a small regular file in the folder, or None (never followed)."""
    return writer.read_regular(fd, name, limit)


def _exists(fd: int, name: str) -> bool:
    try:
        os.lstat(name, dir_fd=fd)
    except FileNotFoundError:
        return False
    return True


def _put(fd: int, name: str, data: bytes) -> None:
    """Write `name` in the folder `fd` atomically, never through a symlink (`writer.put`)."""
    writer.put(fd, name, data)


def _top_names(fresh: bool, listed: frozenset[str]) -> list[str]:
    names = [MARKER]
    if fresh or ".gitignore" in listed:
        names.append(".gitignore")
    names += [r.filename for r in REPORTERS if r.filename != VerdictJson.filename]
    return [*names, *JUNIT_FILES.values(), VerdictJson.filename]


class ArtifactsFolder:
    """The artifacts folder, claimed before any test code runs, written through
    its descriptor at the end. `fresh`: andgate created it or found it empty, so
    it is andgate's; otherwise only files the marker lists are andgate's."""

    def __init__(self, path: Path, fd: int, fresh: bool, listed: frozenset[str]) -> None:
        self.path = path
        self.fd = fd
        self.fresh = fresh
        self.listed = listed

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def check_free(self, names: Sequence[str], logs_fd: int | None = None) -> None:
        """Refuse when one of andgate's names is taken by a file andgate did not write."""
        if self.fresh:
            return
        for name in names:
            folder, _, base = name.rpartition("/")
            fd = self.fd if not folder else logs_fd
            if name not in self.listed and fd is not None and _exists(fd, base):
                raise _taken(self.path / name)

    def open_logs(self) -> int:
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
        for attempt in range(2):
            with contextlib.suppress(FileExistsError):
                os.mkdir(LOGS, dir_fd=self.fd)
            try:
                return os.open(LOGS, flags, dir_fd=self.fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR) or not self.fresh or attempt:
                    raise _refused(self.path / LOGS, "not a real folder") from exc
                os.unlink(LOGS, dir_fd=self.fd)  # planted in andgate's own folder during the run
        raise AssertionError("unreachable")


def claim_artifacts(
    path: Path, *, repo: Path | None = None, git_dirs: Sequence[Path] = ()
) -> ArtifactsFolder:
    """Check and open (or create) the artifacts folder; one-line AndgateError when
    it is unsafe or one of andgate's file names is taken by someone else's file.
    A verdict.json left by andgate's previous run is deleted at once: a check that
    then fails to write its own leaves no stale verdict behind."""
    path = Path(os.path.abspath(path))
    _check_path(path, repo, git_dirs)
    try:
        # Every folder between the repository's top and the artifacts folder is
        # opened without following a symlink, so a link planted after the check
        # above is refused too (`writer.open_folder`).
        parent = writer.open_folder(path.parent, anchor=repo)
    except writer.RefusedPath as exc:
        raise _refused(path, f"{exc.at} is a symlink inside the repository") from exc
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    try:
        created, problem = True, None
        try:
            os.mkdir(path.name, dir_fd=parent)
        except OSError as exc:
            created, problem = False, exc
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refused(path, "the artifacts folder is a symlink") from exc
            raise _cannot_write(path, problem or exc) from exc
    finally:
        os.close(parent)
    try:
        fresh = created or not os.listdir(fd)
        listed = frozenset() if fresh else _read_marker(fd)
        if listed is None:
            # A folder andgate wrote before it kept a marker carries its .gitignore.
            fresh = _regular_bytes(fd, ".gitignore", len(GITIGNORE)) == GITIGNORE
            listed = frozenset()
        folder = ArtifactsFolder(path, fd, fresh, listed)
        folder.check_free(_top_names(fresh, listed))
        if not fresh and _exists(fd, LOGS):
            os.close(folder.open_logs())
        if VerdictJson.filename in listed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(VerdictJson.filename, dir_fd=fd)
    except BaseException:
        os.close(fd)
        raise
    return folder


def write_artifacts(folder: ArtifactsFolder, ctx: ReportContext) -> Artifacts:
    """Every artifact, verdict.json last: no verdict file unless all the rest was written."""
    top: dict[str, bytes] = {}
    names = _top_names(folder.fresh, folder.listed)
    if ".gitignore" in names:
        top[".gitignore"] = GITIGNORE
    for reporter in REPORTERS:
        if reporter.filename != VerdictJson.filename:
            top[reporter.filename] = reporter.render(ctx)
    for run, name in JUNIT_FILES.items():
        top[name] = ctx.files.get(f"{run}.junit", EMPTY_JUNIT)
    logs = {key: data for key, data in ctx.files.items() if key.endswith(".log") and _plain(key)}
    if ctx.traceback:
        logs["gate_error.log"] = ctx.traceback.encode("utf-8", "backslashreplace")
    verdict = VerdictJson().render(ctx)
    log_names = [f"{LOGS}/{name}" for name in logs]
    try:
        logs_fd = folder.open_logs()
        try:
            folder.check_free([*names, *log_names], logs_fd)
            marker = {"schema": MARKER_SCHEMA, "files": sorted({*names, *log_names})}
            _put(folder.fd, MARKER, _json(marker))
            for name, data in top.items():
                _put(folder.fd, name, data)
            if BUNDLE in folder.listed:  # a shard's, from an earlier run: not this check's
                _drop(folder.fd, BUNDLE)
            for old in sorted(folder.listed - set(log_names)):
                if old.startswith(f"{LOGS}/"):
                    _drop(logs_fd, old.removeprefix(f"{LOGS}/"))
            for name, data in logs.items():
                _put(logs_fd, name, data)
        finally:
            os.close(logs_fd)
        _put(folder.fd, VerdictJson.filename, verdict)
    except OSError as exc:
        raise _cannot_write(folder.path, exc) from exc
    written = [folder.path / n for n in (*top, *log_names, VerdictJson.filename)]
    return Artifacts(folder.path, tuple(written), verdict)


def write_bundle(folder: ArtifactsFolder, name: str, data: bytes) -> Path:
    """A shard's bundle, the only artifact of `check --shard`: written like the
    others, through the folder's descriptor, after the marker names it. A
    verdict.json of an earlier full check there is removed: a shard decides nothing."""
    names = [
        MARKER,
        *([".gitignore"] if folder.fresh or ".gitignore" in folder.listed else []),
        name,
    ]
    try:
        folder.check_free(names)
        marker = {"schema": MARKER_SCHEMA, "files": sorted({*folder.listed, *names} - {MARKER})}
        _put(folder.fd, MARKER, _json(marker))
        if ".gitignore" in names:
            _put(folder.fd, ".gitignore", GITIGNORE)
        _put(folder.fd, name, data)
    except OSError as exc:
        raise _cannot_write(folder.path, exc) from exc
    return folder.path / name


def _drop(fd: int, name: str) -> None:
    """Delete an old log andgate wrote (the marker lists it); never a folder."""
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=fd)


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


def claim_ignored_artifacts(repo: Path) -> Path:
    """Claim `artifacts/` for a command that writes below it (the known-bad
    proposals): one that creates it leaves it as check would, self-ignored and
    marked as andgate's, so whichever command comes first, the folder is the same."""
    folder = claim_artifacts_for(repo, None)
    try:
        if folder.fresh:
            _put(folder.fd, MARKER, _json({"schema": MARKER_SCHEMA, "files": [".gitignore"]}))
            _put(folder.fd, ".gitignore", GITIGNORE)
    except OSError as exc:
        raise _cannot_write(folder.path, exc) from exc
    finally:
        folder.close()
    return folder.path


def claim_artifacts_for(repo_arg: Path, artifacts: Path | None) -> ArtifactsFolder:
    """`--artifacts`, else `artifacts/` at the repository's top, claimed with what
    the refusals need to know: the repository's top and its git folders."""
    if artifacts is None and not repo_arg.is_dir():
        # Never create a folder the user mistyped just to put artifacts in it.
        raise AndgateError(
            f"{repo_arg}: no such directory, so no artifacts were written; "
            "pass --repo DIR naming a git checkout"
        )
    git = Git(repo_arg)
    try:
        lines = git.out("rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
        top, git_dir, common = lines.splitlines()
    except (AndgateError, ValueError):
        repo, git_dirs = None, ()  # not a repository: the gate says so
    else:
        repo, git_dirs = Path(top), (Path(git_dir), repo_arg / common)
    path = artifacts if artifacts is not None else (repo or repo_arg) / "artifacts"
    return claim_artifacts(path, repo=repo, git_dirs=git_dirs)
