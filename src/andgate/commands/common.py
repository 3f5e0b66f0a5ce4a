"""Machinery the maintainer's commands share: the repository, its trust config,
and a collect-only inventory of what they judge.

`classify`, `replay-known-bad` and `known-bad` judge the working tree as it is,
uncommitted edits included (a commit of it, built in a private index:
`snapshot_worktree`, `Target`),
or the commit `--rev` names, with that tree's own config, exactly as `check`
would judge it as a base; their first line says which. They run pytest as
`check` does: an installed project imports the worktree's code
(`run_environment`), and the checkout's generated files are carried into every
worktree (`target_pool`). `lock` and `freeze` edit trust files in the working
tree, so they read the working tree's config (`lock verify --rev` reads the
commit's manifest, lock and fixtures; `lock update` refuses `--rev`). Tests never run in the user's
working tree: every pytest process gets a temporary worktree.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from andgate import writer
from andgate.check.plan.trees import Plan, make_plan
from andgate.errors import AndgateError
from andgate.git import SYNTHETIC_IDENTITY, Git, decode_path
from andgate.plugin.classify import Rules, accepted_invariants
from andgate.process.generated import (
    Generated,
    generated_warning,
    read_generated,
    unnamed_generated,
)
from andgate.process.installed import find_installed_project
from andgate.process.requests import RunEnvironment, RunRequest
from andgate.process.results import RunResult
from andgate.process.run import run_pytest
from andgate.process.worktree import WorktreePool, scratch_dir, worktree_pool
from andgate.records import InventoryRecord, Role
from andgate.trust.config import BaseConfig, load_base_config
from andgate.trust.freeze import parse_freezes
from andgate.trust.manifest import Manifest, parse_manifest


def open_repo(repo: Path) -> Git:
    """The repository containing `repo`, addressed at its top level."""
    return Git(Git(repo).toplevel())


def head_config(git: Git, manifest_path: str) -> tuple[str, BaseConfig]:
    """HEAD's sha and the trust config committed there (as `check` reads a base)."""
    head = git.resolve("HEAD", what="HEAD")
    return head, load_base_config(git, head, manifest_path)


@dataclass(frozen=True)
class Target:
    """What a maintainer command judges: `commit` (the working tree's snapshot,
    or `--rev`), the config it holds, and the checkout's generated files."""

    git: Git
    commit: str
    history: str  # the commit whose history `harvest` walks (HEAD, or --rev)
    what: str  # for the first line: which tree, uncommitted edits or not
    config: BaseConfig
    generated: Generated

    def first_line(self, command: str) -> str:
        return f"andgate {command}: {self.what}"


def open_target(
    repo: Path, manifest_path: str, rev: str | None, *, takes_rev: bool = True
) -> Target:
    """The working tree as it is (`rev` None), or the commit `rev` names. `takes_rev`:
    whether the command has `--rev` (its first line suggests it only then)."""
    git = open_repo(repo)
    head = git.resolve("HEAD", what="HEAD")
    if rev is not None:
        commit = git.resolve(rev, what="--rev")
        what = f"--rev {rev} ({commit[:12]}), as committed"
        history = commit
    else:
        with scratch_dir("andgate-snapshot-") as folder:
            commit = snapshot_worktree(git, folder / "index")
        edits = "no uncommitted edits" if commit == head else "uncommitted edits included"
        hint = "; --rev REV for a commit" if takes_rev else ""
        what = f"the working tree (HEAD {head[:12]}, {edits}{hint})"
        history = head
    config = load_base_config(git, commit, manifest_path)
    # The checkout's generated files belong to its HEAD (and to the working tree on it).
    at = head if rev is None else commit
    generated = read_generated(git, config.manifest.generated_files, at)
    return Target(git, commit, history, what, config, generated)


def snapshot_worktree(git: Git, index_file: Path) -> str:
    """HEAD, or a commit (child of HEAD) of the working tree as it is: tracked
    edits, deletions and untracked files git does not ignore. Built in a private
    copy of the index, so the user's index is never touched."""
    head = git.resolve("HEAD", what="HEAD")
    env = {"GIT_INDEX_FILE": str(index_file), **SYNTHETIC_IDENTITY}
    git.run("read-tree", head, env=env)
    # A virtualenv the project's .gitignore does not name is not the project's:
    # hashing it would take long and fill .git with objects.
    skipped = [f":(exclude,literal){d}" for d in _untracked_environments(git)]
    git.run("add", "-A", "--", ".", *skipped, env=env)
    tree = git.out("write-tree", env=env)
    if tree == git.out("rev-parse", f"{head}^{{tree}}"):
        return head
    return git.out("commit-tree", tree, "-p", head, "-m", "andgate: the working tree", env=env)


def _untracked_environments(git: Git) -> list[str]:
    """Untracked, not ignored folders holding a virtualenv (`pyvenv.cfg`)."""
    listing = ("--others", "--exclude-standard", "--directory", "--no-empty-directory")
    raw = git.run("ls-files", "-z", *listing).stdout
    folders = [decode_path(p).rstrip("/") for p in raw.split(b"\0") if p.endswith(b"/")]
    return [f for f in folders if (git.repo / f / "pyvenv.cfg").is_file()]


def run_environment(
    target: Target, plan: Plan, item_timeout: float | None = None
) -> RunEnvironment:
    """As `check`'s runs: an installed project imports the worktree's code, and each
    test item has `item_timeout` seconds (None: no item limit, as for a collection)."""
    return RunEnvironment(
        checkout=target.git.repo,
        project=find_installed_project(target.git.repo, plan.head_paths),
        scrub_env=target.config.manifest.scrub_env,
        item_timeout=item_timeout,
    )


def generated_notes(target: Target, environment: RunEnvironment) -> list[str]:
    """The GENERATED_FILES warning, as a line for the command's output. The working
    tree's snapshot holds its untracked files (trust folders `init` just wrote inside a
    flat layout's package): the worktrees have them, so they are not named."""
    carried = list(target.generated.paths)
    if target.commit != target.history:
        carried += [e.path for e in target.git.ls_tree(target.commit) if e.kind == "blob"]
    unnamed = unnamed_generated(
        target.git, environment.project, target.config.manifest.generated_files, carried
    )
    warning = generated_warning(unnamed)
    return [] if warning is None else [f"warning GENERATED_FILES: {warning.detail}"]


@contextmanager
def target_pool(target: Target) -> Iterator[tuple[Path, WorktreePool]]:
    """A scratch folder and a pool of worktrees that carry the generated files."""
    with (
        scratch_dir() as scratch,
        worktree_pool(target.git, scratch / "worktrees", target.generated) as pool,
    ):
        yield scratch, pool


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
    records: tuple[InventoryRecord, ...]
    collection_errors: tuple[tuple[str, str], ...]
    notes: tuple[str, ...] = ()  # warnings about the run (GENERATED_FILES)
    # Oracle items an xfail mark makes xfail here, with its reason: they never pass.
    xfails: tuple[tuple[str, str], ...] = ()


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


def collect_inventory(target: Target, today: dt.date, timeout: float) -> Collected:
    """Collect (never run) every test of the target in a temporary worktree.

    The rules are the ones `check` uses for head's untrusted process, with
    base = head: one collect-only process classifies every item.
    """
    head, config = target.commit, target.config
    with target_pool(target) as (scratch, pool):
        plan = head_plan(target.git, head, config, scratch, config.live_freeze_ids(today))
        environment = run_environment(target, plan)
        request = RunRequest(
            "collect", Role.COLLECT, plan.head_rules, collect_only=True, environment=environment
        )
        with pool.lease(head) as worktree:
            result = run_pytest(request, worktree.path, scratch, timeout)
    if result.error:
        raise AndgateError(f"could not collect the tests of {target.what}: {result.error}")
    notes = tuple(generated_notes(target, environment))
    xfails = tuple(
        (i.facts.nodeid, i.xfail_mark)
        for i in result.selected("oracle")
        if i.xfail_mark is not None
    )
    return Collected(
        head, plan.head_rules, _records(result), result.collection_errors, notes, xfails
    )


def _records(result: RunResult) -> tuple[InventoryRecord, ...]:
    records = {i.facts.nodeid: InventoryRecord(i.facts, i.cls, i.why, None) for i in result.items}
    return tuple(sorted(records.values(), key=lambda r: r.facts.nodeid))


def write_atomic(path: Path, data: bytes, *, repo: Path) -> None:
    """Replace a file in one step, so an interrupted write leaves the old one; never
    through a symlink anywhere below the repository's top (`writer.write_file`)."""
    writer.write_file(path, data, anchor=repo)


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """Left-aligned columns, two spaces apart, indented under a heading."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
