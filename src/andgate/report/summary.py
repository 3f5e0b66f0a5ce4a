"""summary.md: what a reviewer reads in ten seconds: decision, every reason, counts."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from andgate.records import Bit, DisputeStatus, EvidenceFacts, Finding
from andgate.report import evidence
from andgate.report.context import ReportContext

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


class SummaryMarkdown:
    """What a reviewer reads in ten seconds: decision, every reason, counts."""

    filename = "summary.md"

    def render(self, ctx: ReportContext) -> bytes:
        v = ctx.verdict
        lines = [f"# andgate: {'✅ ALLOW' if v.allowed else '❌ BLOCK'}", ""]
        lines.append(self._header(ctx))
        lines += [
            "",
            *self._evidence(ctx),
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

    def _evidence(self, ctx: ReportContext) -> list[str]:
        """First, beside the approval line: what the edit of oracle items gives up
        (failures it hides, mutants it lets through), or that nothing was found, with
        the numbers; an owner reads it before approving."""
        facts = ctx.evidence
        if facts is None:
            return []
        lines = [f"## {evidence.TITLE}", "", evidence.headline(facts), ""]
        lines += _hidden(facts) + _weakened(facts)
        if facts.edited:
            shown = ", ".join(_code(n) for n in facts.edited[:SUMMARY_PER_CODE])
            more = len(facts.edited) - SUMMARY_PER_CODE
            lines += [f"Edited or deleted: {shown}" + (f" and {more} more" if more > 0 else ""), ""]
        return lines

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
        lines = [
            "## Tests per class",
            "",
            "| " + " | ".join(keys) + " |",
            "|" + "---:|" * len(keys),
            "| " + " | ".join(str(c.get(k, 0)) for k in keys) + " |",
            "",
        ]
        return lines + _not_run(ctx) + _added_under_oracle_globs(ctx)

    def _known_bad(self, ctx: ReportContext) -> list[str]:
        if not ctx.replays:
            return []
        lines = ["## Known-bad fixtures", ""]
        if ctx.known_bad_from is not None:
            lines += [
                f"Head's fixtures (`{ctx.known_bad_from[:12]}`): an owner approved head.",
                "",
            ]
        lines += [
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


def _hidden(facts: EvidenceFacts) -> list[str]:
    if not facts.hidden:
        return []
    lines = ["Failures the edit hides (base's version fails on head's code, head's does not):", ""]
    for h in facts.hidden:
        head = "deletes it" if h.on_head == "deleted" else "passes it"
        lines.append(f"- {_code(h.nodeid)}: {_code(h.failure)}; head's edited oracle {head}")
    return [*lines, ""]


def _weakened(facts: EvidenceFacts) -> list[str]:
    if not facts.weakened:
        return []
    lines = [
        "Mutants the edit lets through (base's oracle catches each, head's lets it pass):",
        "",
        "| where | function | mutation | caught by base's |",
        "|---|---|---|---|",
    ]
    for w in facts.weakened:
        caught = ", ".join(_cell(n) for n in w.caught_by[:3])
        if len(w.caught_by) > 3:
            caught += f" and {len(w.caught_by) - 3} more"
        where = _cell(f"{w.path}:{w.line}")
        lines.append(f"| {where} | {_cell(w.function)} | {_md(w.mutation)} | {caught} |")
    return [*lines, ""]


def _cell(text: str) -> str:
    return _code(text).replace("|", "\\|")


def _not_run(ctx: ReportContext) -> list[str]:
    """Items head collected that ran in no class process: a class whose items did not
    run has not passed them, whatever its check says."""
    missing = [r for r in ctx.inventory if r.outcome is None]
    if not missing:
        return []
    by_class = Counter(r.cls for r in missing)
    counted = ", ".join(f"{n} {cls}" for cls, n in sorted(by_class.items()))
    shown = ", ".join(_code(r.facts.nodeid) for r in missing[:SUMMARY_PER_CODE])
    more = f" and {len(missing) - SUMMARY_PER_CODE} more" if len(missing) > SUMMARY_PER_CODE else ""
    return [
        f"Collected on head but run in no class process ({counted}): {shown}{more}. "
        "Their class's check does not cover them (an oracle file the change edits runs "
        "as base has it).",
        "",
    ]


def _added_under_oracle_globs(ctx: ReportContext) -> list[str]:
    added = ctx.changes.added_under_oracle_globs if ctx.changes is not None else ()
    if not added:
        return []
    return [
        f"Added under an oracle glob, so run as the change's own (untrusted) tests: "
        f"{', '.join(_code(p) for p in added)}. Once merged they are oracle files; an "
        "owner's approval makes them oracles in this change.",
        "",
    ]


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
