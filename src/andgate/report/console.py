"""What a check prints: the verdict on stdout, and in GitHub Actions the job summary,
step outputs and annotations (`actions.py` renders them).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the reporters load only when a check has written them
    from andgate.records import Finding, StepTime
    from andgate.report.artifacts import Artifacts
    from andgate.verdict import Verdict


def print_verdict(verdict: Verdict, folder: Path) -> None:
    """In GitHub Actions, test-written text is printed with workflow commands stopped
    around it, so a detail holding `::error` is never read as a command."""
    from andgate.report.actions import stop_commands

    start, end = stop_commands() if os.environ.get("GITHUB_ACTIONS") == "true" else ("", "")
    print(f"andgate: {verdict.decision.value.upper()}")
    if start:
        print(start)
    for reason in verdict.reasons:
        print(f"  {reason.code.value}: {reason.detail}")
    for line in warning_lines(verdict.warnings, folder):
        print(line)
    if end:
        print(end)
    counts = ", ".join(f"{k} {v}" for k, v in verdict.counts.items())
    print(f"  tests: {counts}")
    print(f"  artifacts: {folder}/summary.md")


# Warnings of one code shown in the terminal; summary.md lists every one. click's
# adoption carries 38 ORACLE_FROM_PRODUCTION and 23 ORACLE_SKIPPED (Windows-only tests):
# printed whole, they buried the verdict line and the reasons above them.
WARNINGS_SHOWN_PER_CODE = 5


def warning_lines(warnings: Sequence[Finding], folder: Path) -> list[str]:
    """The warnings by code, in the order their codes first come: at most
    WARNINGS_SHOWN_PER_CODE of each, then how many more."""
    by_code: dict[str, list[str]] = {}
    for warning in warnings:
        by_code.setdefault(warning.code.value, []).append(warning.detail)
    lines = []
    for code, details in by_code.items():
        lines += [f"  warning {code}: {d}" for d in details[:WARNINGS_SHOWN_PER_CODE]]
        if len(details) > WARNINGS_SHOWN_PER_CODE:
            more = len(details) - WARNINGS_SHOWN_PER_CODE
            lines.append(f"  warning {code}: and {more} more ({folder}/summary.md lists them)")
    return lines


# How `check --profile` names the kinds of step it sums (records.StepTime.kind)
KIND_TITLES = {
    "step": "the gate's own steps",
    "pytest": "pytest processes",
    "worktrees": "worktrees made ready or removed",
}


def profile_lines(
    steps: Sequence[StepTime], artifacts_seconds: float, started_after: float | None = None
) -> list[str]:
    """`check --profile`: each step's start and length in order of start (a
    timeline), then the sums by kind. Steps overlap
    (processes run `--jobs` at a time, the scan beside the oracle phase), so the
    sums may exceed the check's time. `started_after`: how long the process ran
    before the check began (the interpreter starting, andgate's modules loading), when
    known."""
    end = max((s.started + s.seconds for s in steps), default=0.0)
    lines = [
        f"andgate: where the check's {end:.2f} s went (timings.json; steps overlap)",
        f"  {'start':>8} {'seconds':>8}  step",
    ]
    lines += [f"  {s.started:>7.2f}s {s.seconds:>7.2f}s  {s.name}" for s in steps]
    sums: dict[str, float] = {}
    for s in steps:
        if s.kind != "phase":  # a phase holds the processes and worktrees summed here
            sums[s.kind] = sums.get(s.kind, 0.0) + s.seconds
    parts = [f"{KIND_TITLES.get(k, k)} {v:.2f} s" for k, v in sorted(sums.items())]
    lines.append(f"  in all: {'; '.join(parts)}; artifacts written in {artifacts_seconds:.2f} s")
    if started_after is not None:
        lines.append(f"  before the check: {started_after:.2f} s (Python and andgate loading)")
    return lines


def publish_to_github(verdict: Verdict, artifacts: Artifacts, repo: Path) -> None:
    """In GitHub Actions: the job summary, the step outputs and at most ten annotations."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    import json

    from andgate.report.actions import annotated, locate, publish, subject_of

    payload = json.loads(artifacts.verdict_json)
    summary = (artifacts.folder / "summary.md").read_text(encoding="utf-8", errors="replace")

    def read(path: str) -> bytes | None:
        try:
            return (repo / path).read_bytes()
        except OSError:
            return None

    locations = {subject_of(r): locate(subject_of(r), read) for r in annotated(payload)}
    # Annotations go to stderr, so `check --json > verdict.json` stays JSON: the runner
    # reads workflow commands from stderr as from stdout (actions/runner,
    # src/Runner.Worker/Handlers/ScriptHandler.cs: StepHost.OutputDataReceived and
    # ErrorDataReceived each feed an OutputManager holding the ActionCommandManager).
    for line in publish(
        payload, summary, artifacts.folder, verdict.exit_code, os.environ, locations
    ):
        print(line, file=sys.stderr, flush=True)
