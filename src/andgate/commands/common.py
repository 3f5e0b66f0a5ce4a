"""Machinery the maintainer's commands share: the repository, its trust config,
and a collect-only inventory of HEAD.

`classify` and `replay-known-bad` judge the committed HEAD with HEAD's own
config, exactly as `check` would judge it as a base. `lock` and `freeze` edit
trust files in the working tree, so they read the working tree's config. Tests
never run in the user's working tree: every pytest process gets a temporary
worktree of HEAD.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from andgate import writer
from andgate.classify import Rules, accepted_invariants
from andgate.config import BaseConfig, load_base_config
from andgate.errors import AndgateError
from andgate.freeze import parse_freezes
from andgate.git import Git
from andgate.inventory import Record
from andgate.manifest import Manifest, parse_manifest
from andgate.plan import Plan, make_plan
from andgate.records import Role
from andgate.run import RunRequest, RunResult, run_pytest
from andgate.worktree import scratch_dir, worktree_pool


def open_repo(repo: Path) -> Git:
    """The repository containing `repo`, addressed at its top level."""
    return Git(Git(repo).toplevel())


def head_config(git: Git, manifest_path: str) -> tuple[str, BaseConfig]:
    """HEAD's sha and the trust config committed there (as `check` reads a base)."""
    head = git.resolve("HEAD", what="HEAD")
    return head, load_base_config(git, head, manifest_path)


def read_file(root: Path, rel: str) -> bytes | None:
    """A working-tree file's bytes, or None when it does not exist."""
    try:
        return (root / rel).read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise AndgateError(f"{rel}: is a folder, expected a file; fix the path") from None


def worktree_manifest(root: Path, manifest_path: str) -> Manifest:
    return parse_manifest(read_file(root, manifest_path), manifest_path)


def worktree_config(root: Path, manifest_path: str) -> BaseConfig:
    """The trust config as the working tree has it now (known-bad fixtures are
    not read: no command that uses this replays them)."""
    manifest = worktree_manifest(root, manifest_path)
    freeze_file = manifest.frozen_flake.freeze_file
    invariants = read_file(root, manifest.property.invariants_file)
    return BaseConfig(
        manifest=manifest,
        freezes=parse_freezes(read_file(root, freeze_file), freeze_file, manifest.max_freeze_days),
        accepted=accepted_invariants(invariants.decode("utf-8", "replace"))
        if invariants
        else frozenset(),
        invariants_found=invariants is not None,
        known_bad=(),
    )


@dataclass(frozen=True)
class Collected:
    """Every item pytest collected at one commit, classified by the given config."""

    head: str
    rules: Rules
    records: tuple[Record, ...]
    collection_errors: tuple[tuple[str, str], ...]


def head_plan(
    git: Git, head: str, config: BaseConfig, scratch: Path, live_freezes: tuple[str, ...] = ()
) -> Plan:
    """The plan `check` would make for head against itself: every tree is head
    (an approved change to nothing), so no synthetic commit is written."""
    return make_plan(
        git,
        head,
        head,
        config,
        approved=True,
        live_freezes=live_freezes,
        config_differs=lambda _path: False,
        scratch=scratch,
    )


def collect_inventory(
    git: Git, head: str, config: BaseConfig, today: dt.date, timeout: float
) -> Collected:
    """Collect (never run) every test of `head` in a temporary worktree.

    The rules are the ones `check` uses for head's untrusted process, with
    base = head: one collect-only process classifies every item.
    """
    with scratch_dir() as scratch, worktree_pool(git, scratch / "worktrees") as pool:
        plan = head_plan(git, head, config, scratch, config.live_freeze_ids(today))
        request = RunRequest("collect", Role.COLLECT, plan.head_rules, collect_only=True)
        with pool.lease(head) as worktree:
            result = run_pytest(request, worktree.path, scratch, timeout)
    if result.error:
        raise AndgateError(f"could not collect the tests of HEAD: {result.error}")
    return Collected(head, plan.head_rules, _records(result), result.collection_errors)


def _records(result: RunResult) -> tuple[Record, ...]:
    records = {i.facts.nodeid: Record(i.facts, i.cls, i.why, None) for i in result.items}
    return tuple(sorted(records.values(), key=lambda r: r.facts.nodeid))


def write_atomic(path: Path, data: bytes, *, repo: Path) -> None:
    """Replace a file in one step, so an interrupted write leaves the old one; never
    through a symlink anywhere below the repository's top (`writer.write_file`)."""
    writer.write_file(path, data, anchor=repo)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def table(rows: list[tuple[str, ...]]) -> list[str]:
    """Left-aligned columns, two spaces apart, indented under a heading."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
