"""Owners' approvals: from `--approved-by`, `ANDGATE_APPROVED_BY` and pull-request
reviews, kept only where base's manifest allows the source and names the owner.

Under CI a pull request can edit what calls andgate (its own workflow file) and what
earlier steps put into the environment, so there `ANDGATE_APPROVED_BY` never counts
and `--approved-by` counts only when base's manifest lists `cli` in
`approvals.sources` itself (the default list does not open it). An owner's review
of an earlier commit counts when its protected diff equals head's (protected.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from andgate.errors import GitError
from andgate.records import Finding, Warning_
from andgate.trust.github import (
    Approval,
    Binding,
    IgnoredReview,
    approvals_from_environment,
    select_approvals,
)
from andgate.trust.manifest import Manifest
from andgate.trust.protected import ProtectedDiff, ProtectedReader

SOURCES = ("none", "github-reviews")  # --approvals
CI_VARIABLES = ("GITHUB_ACTIONS", "CI", "GITHUB_EVENT_PATH")


@dataclass
class ReviewBinder:
    """Binds an owner's review of an earlier commit to head by the protected diff:
    (merge-base(reviewed, base), reviewed) against (base, head)."""

    reader: ProtectedReader
    base: str
    head: str
    ignored: list[IgnoredReview] = field(default_factory=list)

    @cached_property
    def head_diff(self) -> ProtectedDiff:
        return self.reader.diff(self.base, self.head)

    def __call__(self, review: Mapping[str, Any]) -> Binding:
        commit = str(review.get("commit_id", "")).lower()
        then = self._reviewed_diff(commit)
        if isinstance(then, str):
            return Binding(problem=then)
        changed = then.differing(self.head_diff)
        if changed:
            login = str((review.get("user") or {}).get("login", "?"))
            url = review.get("html_url")
            rid = review.get("id")
            self.ignored.append(
                IgnoredReview(
                    login,
                    rid if isinstance(rid, int) else None,
                    commit,
                    url if isinstance(url, str) else None,
                    changed,
                )
            )
            return Binding(changed=changed)
        return Binding(digest=then.digest)

    def _reviewed_diff(self, commit: str) -> ProtectedDiff | str:
        git = self.reader.git
        try:
            git.resolve(commit, what="the reviewed commit")
        except GitError:
            return (
                f"the reviewed commit {commit[:12]} is not in this clone "
                "(actions/checkout with fetch-depth: 0 fetches the pull request's history)"
            )
        review_base = git.merge_base(commit, self.base)
        if review_base is None:
            return f"the reviewed commit {commit[:12]} shares no history with base"
        return self.reader.diff(review_base, commit)


def under_ci(environ: Mapping[str, str]) -> str | None:
    """The first CI variable that is set, or None outside CI."""
    return next((name for name in CI_VARIABLES if name in environ), None)


def _ci_filter(
    manifest: Manifest, cli: Sequence[str], env: Sequence[str], ci: str
) -> tuple[tuple[str, ...], list[str]]:
    """Under CI: the `--approved-by` names that may count, and why the rest do not."""
    why = [
        f"approval by {name} from ANDGATE_APPROVED_BY ignored: under CI ({ci} is set) the "
        "environment is whatever a pull request's workflow puts there; approve with a "
        "pull-request review"
        for name in env
    ]
    if "cli" in manifest.approval_sources and manifest.approval_sources_listed:
        return tuple(cli), why
    why += [
        f"approval by {name} from --approved-by ignored: under CI ({ci} is set) it counts only "
        "when the base manifest lists cli in approvals.sources itself, since a pull request "
        "can edit the workflow that passes it; approve with a pull-request review"
        for name in cli
    ]
    return (), why


def gather_approvals(
    manifest: Manifest,
    head: str,
    *,
    cli: Sequence[str],
    env: Sequence[str],
    reviews: str = "none",
    environ: Mapping[str, str] | None = None,
    binder: ReviewBinder | None = None,
) -> tuple[tuple[Approval, ...], list[Finding]]:
    """The approvals that count, and an APPROVAL_IGNORED warning for every one that
    does not (and for every reason reviews could not be read: never an approval).
    With `binder`, each approval carries the protected digest it covers, and an
    owner's review of an earlier commit counts when that digest is head's."""
    environ = os.environ if environ is None else environ
    ci_ignored: list[str] = []
    if (ci := under_ci(environ)) is not None:
        cli, ci_ignored = _ci_filter(manifest, cli, env, ci)
        env = ()
    found: tuple[Approval, ...] = ()
    problems: tuple[str, ...] = ()
    if reviews == "github-reviews":
        found, problems = approvals_from_environment(
            environ, gated_head=head, owners=manifest.owners, bind=binder
        )
    kept, ignored = select_approvals(
        allowed=manifest.approval_sources,
        owners=manifest.owners,
        cli=cli,
        env=env,
        reviews=found,
    )
    if binder is not None and kept:
        digest = binder.head_diff.digest
        kept = tuple(replace(a, protected_digest=a.protected_digest or digest) for a in kept)
    texts = (*ci_ignored, *problems, *ignored)
    return kept, [Finding(Warning_.APPROVAL_IGNORED, text) for text in texts]
