"""What a check prints: the verdict on stdout, and in GitHub Actions the job summary,
step outputs and annotations (`actions.py` renders them).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the reporters load only when a check has written them
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
    for warning in verdict.warnings:
        print(f"  warning {warning.code.value}: {warning.detail}")
    if end:
        print(end)
    counts = ", ".join(f"{k} {v}" for k, v in verdict.counts.items())
    print(f"  tests: {counts}")
    print(f"  artifacts: {folder}/summary.md")


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
