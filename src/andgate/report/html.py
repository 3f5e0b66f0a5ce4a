"""report.html: one self-contained page for the reviewer of a change.

The verdict and why come first; then what was compared, who approved, the seven
checks linked to their reasons, and the evidence (known-bad fixtures with the oracle
item that killed each, property seeds with the flag that reproduces them, freezes
with owner and days left). Node ids, messages, patches and names come from the
repository, that is from the change's author: every one is escaped, the page has no
script and loads nothing (a Content-Security-Policy says so to the browser too).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from andgate.records import EvidenceFacts
from andgate.report import evidence
from andgate.report.context import verdict_payload
from andgate.trust.github import Approval, IgnoredReview

if TYPE_CHECKING:
    from andgate.report.context import ReportContext
    from andgate.trust.freeze import Freeze

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
BIT_ORDER = (
    ("authorship_ok", "authorship (who changed trust-root files)"),
    ("locks_ok", "fixture locks"),
    ("oracle_ok", "oracle class passes"),
    ("known_bad_ok", "oracles still fail every known-bad fixture"),
    ("property_ok", "properties pass with recorded seeds"),
    ("freeze_ok", "freezes valid and unexpired"),
    ("untrusted_ok", "untrusted class has no failure"),
)
CLASS_KEYS = ("oracle", "property", "frozen_flake", "untrusted")
HIDDEN_HEADERS = ("base's item", "on head's code", "head's edited oracle")
WEAKENED_HEADERS = ("where", "function", "mutation", "caught by base's")
PATCH_LIMIT = 200_000  # characters of one patch shown; the file itself is in the repo


@dataclass(frozen=True)
class ReasonRow:
    code: str
    detail: str
    subject: str = ""  # the node id or path it is about
    bit: str | None = None  # e.g. "oracle_ok"; None: the gate itself (manifest, errors)


@dataclass(frozen=True)
class KnownBadRow:
    name: str
    applied: bool
    killed_by: str | None  # the first oracle item that failed under it
    patch: str = ""
    problem: str = ""


@dataclass(frozen=True)
class SeedRow:
    nodeid: str
    seeds: tuple[object, ...]
    reproduce: str = ""  # e.g. "--hypothesis-seed=3735928559"


@dataclass(frozen=True)
class FreezeRow:
    id: str
    owner: str
    expires: str
    days_left: int
    reason: str = ""


@dataclass(frozen=True)
class DisputeRow:
    """An oracle test the change disputes: what base says, how it failed, and why the
    change says it is wrong (the change's own words, escaped like everything else)."""

    nodeid: str
    status: str
    reason: str
    failure: str = ""
    path: str = ""  # the test's file and first line at base, with its source
    line: int = 0
    source: str = ""


@dataclass(frozen=True)
class HtmlReport:
    """Exactly what the page shows. `verdict` is the verdict.json payload."""

    verdict: Mapping[str, Any]
    reasons: tuple[ReasonRow, ...] = ()
    approvals: tuple[Approval, ...] = ()
    ignored_reviews: tuple[IgnoredReview, ...] = ()
    known_bad: tuple[KnownBadRow, ...] = ()
    seeds: tuple[SeedRow, ...] = ()
    freezes: tuple[FreezeRow, ...] = ()
    case: str = ""  # "trust-root-only change", ...
    warnings: tuple[ReasonRow, ...] = ()
    disputes: tuple[DisputeRow, ...] = ()
    disputes_file: str = ""
    evidence: EvidenceFacts | None = None  # what an edit of oracle items gives up

    @property
    def decision(self) -> str:
        return str(self.verdict.get("verdict", "block"))

    @property
    def could_not_run(self) -> bool:
        return any(r.code in ("MANIFEST_INVALID", "GATE_ERROR") for r in self.reasons)


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


# -- building it from a check ------------------------------------------------------------


def subject_of(detail: str) -> str:
    words = detail.split(maxsplit=1)
    return words[0].rstrip(":") if words else ""


def build_report(
    ctx: ReportContext,
    *,
    approvals: Sequence[Approval] = (),
    patches: Mapping[str, str] | None = None,
    freezes: Iterable[Freeze] = (),
) -> HtmlReport:
    """The page's data from what the reporters already get. `patches` maps a known-bad
    fixture's name to its text; `freezes` are the live ones from base."""

    v = ctx.verdict
    patches = patches or {}
    seed_flag = "" if ctx.property_seed is None else f"--hypothesis-seed={ctx.property_seed}"
    seeds = ctx.property.seeds if ctx.property else {}
    return HtmlReport(
        verdict=verdict_payload(ctx),
        reasons=tuple(_row(f) for f in v.reasons),
        warnings=tuple(_row(f) for f in v.warnings),
        approvals=tuple(approvals),
        ignored_reviews=tuple(ctx.ignored_reviews),
        known_bad=tuple(
            KnownBadRow(
                r.name,
                r.applied,
                r.failed[0] if r.failed else None,
                patches.get(r.name, ""),
                r.problem or (r.error or ""),
            )
            for r in ctx.replays
        ),
        seeds=tuple(SeedRow(n, tuple(s), seed_flag) for n, s in sorted(seeds.items())),
        freezes=tuple(
            FreezeRow(f.id, f.owner, f.expires.isoformat(), f.days_left(ctx.today), f.reason)
            for f in freezes
        ),
        case=ctx.changes.case if ctx.changes else "",
        disputes=tuple(_dispute_row(d, ctx.dispute_sources.get(d.nodeid)) for d in v.disputes),
        disputes_file=ctx.disputes_file,
        evidence=ctx.evidence,
    )


def _dispute_row(dispute: Any, source: Any) -> DisputeRow:
    row = DisputeRow(dispute.nodeid, dispute.status.value, dispute.reason, dispute.failure)
    if source is None:
        return row
    return DisputeRow(
        row.nodeid, row.status, row.reason, row.failure, source.path, source.line, source.text
    )


def _row(finding: Any) -> ReasonRow:
    bit = finding.bit.value if finding.bit is not None else None
    return ReasonRow(finding.code.value, finding.detail, subject_of(finding.detail), bit)


# -- the page -------------------------------------------------------------------------------

STYLE = """
:root{color-scheme:light;--red:#b42318;--green:#067647;--amber:#b54708;--line:#d0d5dd}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:#101828;background:#f9fafb}
main{max-width:1120px;margin:0 auto;padding:0 24px 48px}
.banner p{overflow-wrap:anywhere}
.banner{padding:28px 0;color:#fff}
.wrap{max-width:1120px;margin:0 auto;padding:0 24px}
.banner h1{margin:0;font-size:40px;letter-spacing:.02em}
.banner p{margin:6px 0 0;font-size:18px}
.block{background:var(--red)}.allow{background:var(--green)}.error{background:var(--amber)}
.meta{margin:16px 0;color:#344054}
h2{margin:28px 0 8px;font-size:20px;border-bottom:1px solid var(--line);padding-bottom:4px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f2f4f7;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.no{color:var(--red);font-weight:700}.yes{color:var(--green);font-weight:700}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
overflow-wrap:anywhere;white-space:pre-wrap}
pre{background:#101828;color:#f2f4f7;padding:12px;overflow:auto;max-height:480px}
.code{font-weight:700;color:var(--red)}.warn{color:var(--amber);font-weight:700}
ul.reasons{padding-left:20px;margin:6px 0}ul.reasons li{margin:4px 0}
.muted{color:#667085}
"""


def render(report: HtmlReport) -> bytes:
    """The whole page as UTF-8 bytes."""
    body = [
        _banner(report),
        "<main>",
        _meta(report),
        _evidence(report),
        _disputes(report),
        _checks(report),
        _counts(report),
        _reasons(report),
        _warnings(report),
        _approvals(report),
        _ignored_reviews(report),
        _known_bad(report),
        _seeds(report),
        _freezes(report),
        "</main>",
    ]
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>andgate: {esc(report.decision.upper())}</title>"
        f"<style>{STYLE}</style></head><body>\n"
        + "\n".join(b for b in body if b)
        + "\n</body></html>\n"
    )
    return page.encode("utf-8", "backslashreplace")


def _banner(report: HtmlReport) -> str:
    if report.decision == "allow":
        css, word, why = "allow", "ALLOW", "Every trust class holds: nothing blocks this change."
    else:
        css = "error" if report.could_not_run else "block"
        word = "BLOCK (the gate could not run)" if report.could_not_run else "BLOCK"
        first = report.reasons[0] if report.reasons else None
        why = f"{first.code}: {first.detail}" if first else "a check did not hold"
        if len(report.reasons) > 1:
            why += f" (and {len(report.reasons) - 1} more reasons below)"
    return (
        f'<header class="banner {css}"><div class="wrap"><h1>andgate: {esc(word)}</h1>'
        f"<p>{esc(why)}</p></div></header>"
    )


def _meta(report: HtmlReport) -> str:
    v = report.verdict
    base, head = str(v.get("base") or "?"), str(v.get("head") or "?")
    parts = [
        f'base <code title="{esc(base)}">{esc(base[:12])}</code> → '
        f'head <code title="{esc(head)}">{esc(head[:12])}</code>',
        f"today {esc(v.get('today', '?'))}",
    ]
    if report.case:
        parts.append(esc(report.case))
    names = ", ".join(esc(a.login) for a in report.approvals)
    parts.append(f"approved by {names}" if names else "no owner approval")
    return f'<p class="meta">{" · ".join(parts)}</p>'


def _evidence(report: HtmlReport) -> str:
    """Beside the approval line: what the edit of oracle items gives up, or that
    nothing was found, with what was tried."""
    facts = report.evidence
    if facts is None:
        return ""
    out = [f"<h2>{esc(evidence.TITLE)}</h2>", f"<p>{esc(evidence.headline(facts))}</p>"]
    if facts.hidden:
        rows = [
            [
                f"<code>{esc(h.nodeid)}</code>",
                f"<code>{esc(h.failure)}</code>",
                "deletes it" if h.on_head == "deleted" else "passes it",
            ]
            for h in facts.hidden
        ]
        out.append(_table("Failures the edit hides", HIDDEN_HEADERS, rows, ""))
    if facts.weakened:
        rows = [
            [
                f"<code>{esc(w.path)}:{esc(w.line)}</code>",
                f"<code>{esc(w.function)}</code>",
                f"<code>{esc(w.mutation)}</code>",
                "<br>".join(f"<code>{esc(n)}</code>" for n in w.caught_by),
            ]
            for w in facts.weakened
        ]
        out.append(_table("Mutants the edit lets through", WEAKENED_HEADERS, rows, ""))
    if facts.edited:
        items = ", ".join(f"<code>{esc(n)}</code>" for n in facts.edited)
        out.append(f"<p class='muted'>Edited or deleted oracle items: {items}</p>")
    return "".join(out)


def _by_bit(report: HtmlReport) -> dict[str | None, list[ReasonRow]]:
    groups: dict[str | None, list[ReasonRow]] = {}
    for row in report.reasons:
        groups.setdefault(row.bit, []).append(row)
    return groups


def _disputes(report: HtmlReport) -> str:
    """First after the banner: the oracle tests the change disputes, for the owner."""
    if not report.disputes:
        return ""
    out = [
        f"<h2>Disputed oracle tests ({len(report.disputes)})</h2>",
        "<p>The change says these oracle tests contradict the specification. Disputing "
        "never lets a change in: it blocks until the oracle's owner decides.</p>",
    ]
    for d in report.disputes:
        out.append(
            f"<h3><code>{esc(d.nodeid)}</code> <span class='muted'>{esc(d.status)}</span></h3>"
        )
        if d.source:
            out.append(
                f"<p>Source at base: <code>{esc(d.path)}</code>, line {esc(d.line)}</p>"
                f"<pre>{esc(d.source)}</pre>"
            )
        if d.failure:
            out.append(f"<p>Failure: <code>{esc(d.failure)}</code></p>")
        out.append(f"<p>The change's reason:</p><pre>{esc(d.reason)}</pre>")
    if not any(d.status == "disputed" for d in report.disputes):
        return "".join(out)
    where = f"<code>{esc(report.disputes_file)}</code>" if report.disputes_file else "the file"
    out.append(
        "<p><strong>What the owner can do:</strong> if the oracle is wrong, fix it in a "
        "follow-up change that an owner approves, then gate this change again (the dispute "
        "is then moot: drop its entry). If the oracle is right, reject the dispute: the "
        f"change must make the test pass and remove its entry from {where}.</p>"
    )
    return "".join(out)


def _checks(report: HtmlReport) -> str:
    bits = report.verdict.get("bits") or {}
    groups = _by_bit(report)
    rows = []
    for bit, label in BIT_ORDER:
        holds = bool(bits.get(bit))
        n = len(groups.get(bit, []))
        why = f'<a href="#{esc(bit)}">{n} reason{"s" if n != 1 else ""}</a>' if n else ""
        if not holds and not n:
            why = '<span class="muted">not recorded (the phase did not run)</span>'
        mark = '<span class="yes">yes</span>' if holds else '<span class="no">no</span>'
        rows.append(f"<tr><td>{esc(label)}</td><td>{mark}</td><td>{why}</td></tr>")
    return (
        "<h2>Checks</h2><table><tr><th>check</th><th>holds</th><th>why not</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _counts(report: HtmlReport) -> str:
    counts = report.verdict.get("counts") or {}
    head = "".join(f"<th>{esc(k)}</th>" for k in CLASS_KEYS)
    cells = "".join(f'<td class="num">{esc(counts.get(k, 0))}</td>' for k in CLASS_KEYS)
    return f"<h2>Tests per class</h2><table><tr>{head}</tr><tr>{cells}</tr></table>"


def _reason_items(rows: Sequence[ReasonRow], css: str) -> str:
    items = []
    for row in rows:
        shown = row.subject and not row.detail.startswith(row.subject)
        subject = f" <code>{esc(row.subject)}</code>" if shown else ""
        items.append(
            f'<li><span class="{css}">{esc(row.code)}</span>{subject}'
            f"<br><code>{esc(row.detail)}</code></li>"
        )
    return f'<ul class="reasons">{"".join(items)}</ul>'


def _reasons(report: HtmlReport) -> str:
    if not report.reasons:
        return "<h2>Reasons</h2><p>None: every check holds.</p>"
    groups = _by_bit(report)
    labels = dict(BIT_ORDER)
    out = [f"<h2>Reasons ({len(report.reasons)})</h2>"]
    for bit in [None, *labels]:
        if bit in groups:
            title = labels[bit] if bit else "the gate itself"
            out.append(f'<h3 id="{esc(bit or "gate")}">{esc(title)}</h3>')
            out.append(_reason_items(groups[bit], "code"))
    return "".join(out)


def _warnings(report: HtmlReport) -> str:
    if not report.warnings:
        return ""
    return f"<h2>Warnings ({len(report.warnings)})</h2>" + _reason_items(report.warnings, "warn")


def _table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], empty: str) -> str:
    if not rows:
        return f"<h2>{esc(title)}</h2><p class='muted'>{esc(empty)}</p>"
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<h2>{esc(title)}</h2><table><tr>{head}</tr>{body}</table>"


def _approvals(report: HtmlReport) -> str:
    rows = [
        [
            esc(a.login),
            esc(a.source),
            esc(a.review_id if a.review_id is not None else ""),
            f"<code>{esc((a.commit or '')[:12])}</code>",
            esc(a.submitted_at or ""),
            f"<code>{esc(a.url or '')}</code>",
        ]
        for a in report.approvals
    ]
    headers = ("login", "source", "review", "commit", "submitted", "URL")
    return _table("Approvals used", headers, rows, "No owner approval was used.")


def _ignored_reviews(report: HtmlReport) -> str:
    """Owners' reviews of earlier commits that no longer hold, and why: the files
    whose protected bytes changed since (the owner reviews again)."""
    if not report.ignored_reviews:
        return ""
    rows = [
        [
            esc(r.login),
            esc(r.review_id if r.review_id is not None else ""),
            f"<code>{esc(r.commit[:12])}</code>",
            "<br>".join(f"<code>{esc(p)}</code>" for p in r.changed),
        ]
        for r in report.ignored_reviews
    ]
    headers = ("login", "review", "reviewed commit", "protected files changed since")
    return _table("Reviews that no longer count", headers, rows, "")


def _known_bad(report: HtmlReport) -> str:
    rows = []
    for kb in report.known_bad:
        if not kb.applied:
            killed = f'<span class="no">does not apply</span> {esc(kb.problem)}'
        elif kb.killed_by:
            killed = f"<code>{esc(kb.killed_by)}</code>"
        else:
            killed = f'<span class="no">no oracle item failed</span> {esc(kb.problem)}'
        patch = kb.patch[:PATCH_LIMIT]
        shown = (
            f"<details><summary>patch</summary><pre>{esc(patch)}</pre></details>" if patch else ""
        )
        rows.append([f"<code>{esc(kb.name)}</code>", killed, shown])
    headers = ("fixture", "killed by", "patch")
    return _table("Known-bad fixtures", headers, rows, "No known-bad fixture was replayed.")


def _seeds(report: HtmlReport) -> str:
    rows = [
        [
            f"<code>{esc(s.nodeid)}</code>",
            esc(", ".join(str(x) for x in s.seeds) or "none"),
            f"<code>{esc(s.reproduce)}</code>" if s.reproduce else "",
        ]
        for s in report.seeds
    ]
    headers = ("property item", "seeds", "reproduce with")
    return _table("Property seeds", headers, rows, "No property item ran.")


def _freezes(report: HtmlReport) -> str:
    rows = [
        [
            f"<code>{esc(f.id)}</code>",
            esc(f.owner),
            esc(f.expires),
            f'<span class="no">{esc(f.days_left)}</span>' if f.days_left <= 3 else esc(f.days_left),
            esc(f.reason),
        ]
        for f in report.freezes
    ]
    headers = ("frozen test", "owner", "expires", "days left", "reason")
    return _table("Freezes", headers, rows, "No test is frozen.")
