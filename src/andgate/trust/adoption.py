"""Adoption: the change that adds andgate to a repository (contract section 4).

The gate reads its configuration from base, so a change cannot relax its own
gate. The first change has no base configuration to read: when neither base nor
the branch the change targets holds andgate configuration anywhere (the manifest
path, `[tool.andgate]`), and head adds a manifest, the change *adopts* andgate.
It is checked against head's own manifest, trust files and test side (there was
no gate to weaken), counts no approvals, and may not change production code.
When head has no manifest either, the check cannot run: `MANIFEST_INVALID`
naming the base commit it looked at.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from andgate.errors import AndgateError, ManifestError
from andgate.git import Change, Git
from andgate.records import Finding, Warning_

PYPROJECT = "pyproject.toml"


def has_andgate_config(git: Git, commit: str, manifest_path: str) -> bool:
    """Whether `commit` holds the manifest or a `[tool.andgate]` table."""
    if git.read_blob(commit, manifest_path) is not None:
        return True
    raw = git.read_blob(commit, PYPROJECT)
    if raw is None:
        return False
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # unreadable: it may hold the table, so this is not an adoption
    tool = data.get("tool")
    return isinstance(tool, dict) and "andgate" in tool


def target_branch(git: Git) -> str | None:
    """The branch the change targets: the pull request's base branch under CI
    (`GITHUB_BASE_REF`), else the upstream default branch; None when neither is
    found."""
    ref = os.environ.get("GITHUB_BASE_REF", "").strip()
    if ref:
        for candidate in (f"refs/remotes/origin/{ref}", f"refs/heads/{ref}"):
            try:
                return git.resolve(candidate, what="the pull request's base branch")
            except AndgateError:
                continue
        return None
    upstream = git.default_upstream()
    if upstream is None:
        return None
    try:
        return git.resolve(upstream, what="the upstream default branch")
    except AndgateError:
        return None


@dataclass(frozen=True)
class Adoption:
    """Where `check` reads its configuration from: base, or head when adopting."""

    config_commit: str
    adopting: bool

    def warning(self) -> Finding | None:
        if not self.adopting:
            return None
        return Finding(
            Warning_.ADOPTING,
            f"neither base nor the target branch has andgate configuration: this change "
            f"adopts andgate and is checked against its own manifest "
            f"({self.config_commit[:12]}); it may not change production code, and no "
            "approval counts. From the next change on, base's manifest decides",
        )


def config_source(git: Git, base: str, head: str, manifest_path: str) -> Adoption:
    """Base's configuration, or head's when the change adopts andgate; a
    ManifestError naming base when neither side has a manifest."""
    if has_andgate_config(git, base, manifest_path):
        return Adoption(base, adopting=False)
    target = target_branch(git)
    if target is not None and target != base and has_andgate_config(git, target, manifest_path):
        return Adoption(base, adopting=False)  # base is behind its target: base's error
    if git.read_blob(head, manifest_path) is not None:
        return Adoption(head, adopting=True)
    raise ManifestError(
        f"{manifest_path}: manifest not found at base {base[:12]} nor at head {head[:12]}; "
        "create it with `andgate init`, commit it in a change of its own (that change "
        "adopts andgate) or pass --manifest PATH"
    )


# -- the agent instruction block `andgate init --agents FILE` writes ---------------------------

AGENTS_MARKER = "<!-- andgate: oracle disputes -->"
AGENT_BLOCK = """\
{marker}
## Oracle tests (andgate)

This repository is gated by andgate. The oracle tests (the files `{manifest}` names
under `classes.oracle`), their fixtures, the known-bad patches and the lock file are
owned by humans.

- Never edit, skip, delete or weaken an oracle test or its fixtures, and never make
  production code behave differently under test.
- If an oracle test contradicts your task, do not work around it. Run
  `andgate dispute NODEID --reason "which part of the task it contradicts"`, commit
  the disputes file it writes with your change, and stop. The gate blocks the change
  with ORACLE_DISPUTED and shows your reason to the test's owner, who decides.
"""
# Files Python (or an installer) reads as code: never an agent instruction file.
CODE_SUFFIXES = frozenset({".py", ".pyi", ".pyx", ".pxd", ".pth", ".so", ".pyd", ".cfg", ".toml"})


def agent_block(manifest: str) -> str:
    return AGENT_BLOCK.format(marker=AGENTS_MARKER, manifest=manifest)


def with_agent_block(existing: str | None, manifest: str) -> str:
    """An agent instruction file with the block added: created, or appended to."""
    block = agent_block(manifest)
    return existing.rstrip("\n") + "\n\n" + block if existing else block


def agent_block_files(
    git: Git, base: str, head: str, changes: Iterable[Change], manifest: str
) -> frozenset[str]:
    """The files the adopting change adds the andgate block to, and changes in no other
    way, exactly as `andgate init --agents FILE` writes them: documentation for coding
    agents, which an adopting change may add (it is no production code)."""
    found = set()
    for change in changes:
        path = change.paths[-1]
        if len(change.paths) != 1 or PurePosixPath(path).suffix.lower() in CODE_SUFFIXES:
            continue  # a rename or a deletion is no block added; code is code
        after = git.read_blob(head, path)
        before = git.read_blob(base, path)
        try:
            text = None if after is None else after.decode("utf-8")
            old = None if before is None else before.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text is not None and text == with_agent_block(old, manifest):
            found.add(path)
    return frozenset(found)
