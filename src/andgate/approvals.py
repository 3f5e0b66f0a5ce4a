"""Owners' approvals: from `--approved-by`, `ANDGATE_APPROVED_BY` and pull-request
reviews, kept only where base's manifest allows the source and names the owner."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from andgate.github import Approval, approvals_from_environment, select_approvals
from andgate.manifest import Manifest
from andgate.records import Finding, Warning_

SOURCES = ("none", "github-reviews")  # --approvals


def gather_approvals(
    manifest: Manifest,
    head: str,
    *,
    cli: Sequence[str],
    env: Sequence[str],
    reviews: str = "none",
    environ: Mapping[str, str] | None = None,
) -> tuple[tuple[Approval, ...], list[Finding]]:
    """The approvals that count, and an APPROVAL_IGNORED warning for every one that
    does not (and for every reason reviews could not be read: never an approval)."""
    found: tuple[Approval, ...] = ()
    problems: tuple[str, ...] = ()
    if reviews == "github-reviews":
        found, problems = approvals_from_environment(
            os.environ if environ is None else environ, gated_head=head, owners=manifest.owners
        )
    kept, ignored = select_approvals(
        allowed=manifest.approval_sources,
        owners=manifest.owners,
        cli=cli,
        env=env,
        reviews=found,
    )
    warnings = [Finding(Warning_.APPROVAL_IGNORED, text) for text in (*problems, *ignored)]
    return kept, warnings
