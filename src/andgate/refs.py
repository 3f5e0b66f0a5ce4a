"""Which commits a check gates: `--base` (or the merge-base with the upstream
default branch) and `--head`, and what in the checkout is not gated."""

from __future__ import annotations

from andgate.errors import AndgateError
from andgate.git import Git
from andgate.records import Finding, Warning_


def resolve_base(git: Git, base: str | None, head: str) -> str:
    """`base` as a commit, else the merge-base of `head` with the upstream
    default branch; every way this can fail says how to fix it."""
    if base:
        return git.resolve(base, what="--base")
    upstream = git.default_upstream()
    if upstream is None:
        raise AndgateError(
            "--base is required: no upstream default branch (origin/HEAD, "
            "origin/main) was found; pass --base REF, e.g. --base origin/main"
        )
    merge_base = git.merge_base(upstream, head)
    if merge_base is not None:
        return merge_base
    if git.is_shallow():
        raise AndgateError(
            f"--base: no merge-base of {upstream} and {head} in this shallow clone: "
            "fetch full history (git fetch --unshallow, or actions/checkout with "
            "fetch-depth: 0)"
        )
    raise AndgateError(f"--base: {upstream} and {head} share no history; pass --base REF")


def refuse_empty_range(base_ref: str | None, base: str, head: str) -> None:
    """A range with nothing in it is a user error, not an allow."""
    if base == head:
        raise AndgateError(
            f"--base {base_ref or base[:12]} is the same commit as --head: nothing "
            "to gate; pass the branch point, e.g. --base origin/main"
        )


def uncommitted_warning(git: Git, head: str) -> Finding | None:
    """Work in the checkout is not what gets gated when HEAD is the head commit."""
    if git.resolve("HEAD", what="HEAD") != head:
        return None
    dirty = git.dirty_paths()
    if not dirty:
        return None
    return Finding(
        Warning_.UNCOMMITTED_CHANGES,
        f"{len(dirty)} uncommitted path(s) (e.g. {dirty[0]}) are not gated: "
        "andgate checks the committed HEAD",
    )
