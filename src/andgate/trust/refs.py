"""Which commits a check gates: `--base` (or the merge-base with the upstream default
branch, said on the first line) and `--head`, and what in the checkout is not gated."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from andgate.errors import AndgateError
from andgate.git import Git
from andgate.records import Finding, Warning_
from andgate.trust.github import SHA_RE


@dataclass(frozen=True)
class BaseChoice:
    """The commit a check gates against, and how it was chosen (for the first line)."""

    sha: str
    how: str

    def describe(self) -> str:
        return f"base {self.sha[:12]} ({self.how})"


def short_ref(ref: str) -> str:
    for prefix in ("refs/heads/", "refs/remotes/"):
        if ref.startswith(prefix):
            return ref.removeprefix(prefix)
    return ref


def local_default(git: Git, upstream: str | None, head: str) -> str | None:
    """The local branch of the upstream default branch's name (else main, else master),
    when `head` is not on it: a branch `head` is on, or is behind, holds the change."""
    names = [f"refs/heads/{upstream.rsplit('/', 1)[-1]}"] if upstream else []
    names += ["refs/heads/main", "refs/heads/master"]
    head_sha = git.resolve(head, what="--head")
    for ref in names:
        if git.run("rev-parse", "--verify", "--quiet", ref, check=False).returncode != 0:
            continue
        return None if git.merge_base(ref, head_sha) == head_sha else ref
    return None


def local_ahead(git: Git, upstream: str, head: str) -> str | None:
    """The local default branch, when it holds every commit of `upstream` and more (an
    adoption committed on `main` and not pushed): a base the user may have meant."""
    local = local_default(git, upstream, head)
    if local is None:
        return None
    up = git.resolve(upstream, what="the upstream branch")
    if up != git.resolve(local, what="the local branch") and git.merge_base(up, local) == up:
        return local
    return None


def resolve_base(git: Git, base: str | None, head: str) -> BaseChoice:
    """`base` as a commit, else the merge-base of `head` with the upstream default
    branch (contract section 3); every way this can fail says how to fix it. How it was
    picked is said on the command's first line, with the local default branch when that
    one is ahead of the upstream (then `--base` names it)."""
    if base:
        sha = git.resolve(base, what="--base")
        return BaseChoice(sha, "--base" if base.lower() == sha else f"--base {base}")
    upstream = git.default_upstream()
    if upstream is None:
        local = local_default(git, None, head)
        hint = f"--base {short_ref(local)}" if local else "--base origin/main"
        raise AndgateError(
            "--base is required: no upstream default branch (origin/HEAD, "
            f"origin/main) was found; pass --base REF, e.g. {hint}"
        )
    merge_base = git.merge_base(upstream, head)
    if merge_base is not None:
        how = f"merge-base of {head} with {short_ref(upstream)}"
        ahead = local_ahead(git, upstream, head)
        if ahead is not None:
            name = short_ref(ahead)
            how += f"; your {name} is ahead of it: --base {name} gates against {name}"
        return BaseChoice(merge_base, how)
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


def refuse_refs_other_than_the_event(
    git: Git, base: str, head: str, environ: Mapping[str, str]
) -> None:
    """Under GitHub Actions, a pull request's own workflow could gate something other
    than the pull request (an old head, a base of its choosing): `--head` must be the
    event's head and `--base` its base or their merge-base, else GATE_ERROR."""
    if "GITHUB_ACTIONS" not in environ or not environ.get("GITHUB_EVENT_PATH"):
        return
    refs = _event_refs(Path(environ["GITHUB_EVENT_PATH"]))
    if refs is None:
        return  # not a pull request or merge queue event: there is no change to compare
    event_base, event_head = refs
    fix = (
        "pass --base ${{ github.event.pull_request.base.sha }} "
        "--head ${{ github.event.pull_request.head.sha }}"
    )
    if head.lower() != event_head:
        raise AndgateError(
            f"--head {head[:12]} is not the pull request event's head {event_head[:12]}; {fix}"
        )
    allowed = {event_base}
    if (merge_base := git.merge_base(event_base, head)) is not None:
        allowed.add(merge_base.lower())
    if base.lower() not in allowed:
        raise AndgateError(
            f"--base {base[:12]} is neither the pull request event's base {event_base[:12]} "
            f"nor its merge-base with head; {fix}"
        )


def _event_refs(path: Path) -> tuple[str, str] | None:
    """(base sha, head sha) of a pull_request* or merge_group event; None for others."""
    try:
        event = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise AndgateError(f"GITHUB_EVENT_PATH {path}: cannot read the event ({exc})") from None
    if not isinstance(event, dict):
        raise AndgateError(f"GITHUB_EVENT_PATH {path}: the event is not a JSON object")
    pr, group = event.get("pull_request"), event.get("merge_group")
    if isinstance(pr, dict):
        pair = (_dig(pr, "base", "sha"), _dig(pr, "head", "sha"))
    elif isinstance(group, dict):
        pair = (group.get("base_sha"), group.get("head_sha"))
    else:
        return None
    if not all(isinstance(sha, str) and SHA_RE.match(sha.lower()) for sha in pair):
        raise AndgateError(f"GITHUB_EVENT_PATH {path}: the event names no base and head SHA")
    return str(pair[0]).lower(), str(pair[1]).lower()


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data
