"""What the approval evidence reads from git before any test runs: which oracle items
the change edits (`edited.py`), both sides of the edited files, the production code
they import and the change touched, the tree base's side runs in, and the killer
cache's keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from andgate.check.cache import digest
from andgate.check.context import PhaseContext
from andgate.check.discrimination.changed_tests import changed_tests
from andgate.check.evidence.edited import (
    EditedFile,
    conftest_reach,
    edited_files,
    helper_reach,
)
from andgate.check.evidence.imports import imported_files, parse
from andgate.check.evidence.targets import names_read_by, touched_lines
from andgate.check.plan.trees import apply_overlay, listing, test_side_overlay
from andgate.git import REGULAR_FILE_MODES, Change, Git, TreeEntry
from andgate.process.integrity import ExpectedTestSide, expected_files
from andgate.trust.paths import ConfigChanges, matching


@dataclass(frozen=True)
class Inputs:
    """What the evidence reads from git before any test runs."""

    edited: tuple[EditedFile, ...]
    head_files: tuple[str, ...]  # head's oracle files the change added or edited
    base_tree: str  # head's production code with base's test side
    base_expected: ExpectedTestSide  # what a trusted run of it may load
    production: Mapping[str, str]  # head's text of the production files read
    imported: frozenset[str]  # the production files the edited test files import
    names: frozenset[str]  # what the edited tests (and their modules' helpers) name
    touched: Mapping[str, frozenset[int]]  # production file -> lines the change touched
    base_digest: str  # the killer cache's keys: base's edited files, head's oracle files
    head_digest: str

    @property
    def base_files(self) -> tuple[str, ...]:
        """Base's edited oracle files (a deleted one included)."""
        return tuple(e.path for e in self.edited)


def edited_in(ctx: PhaseContext, git: Git, changes: Sequence[Change]) -> tuple[EditedFile, ...]:
    """The oracle files of base the change edits, with the items it edits in each."""
    plan, config = ctx.plan, ctx.config
    base_oracle = frozenset(plan.base_oracle_files)
    sides = {
        c: git.read_sides(plan.base, plan.head, c) for c in changes if c.old_path in base_oracle
    }
    reach = conftest_reach(changes)
    # base's oracle files can import only what base has: an added file reaches none
    helpers = [
        c.old_path
        for c in changes
        if c.old_path
        and c.status != "A"
        and c.old_path.endswith(".py")
        and config.test_side.holds(c.old_path)
        and c.old_path not in base_oracle
    ]
    if helpers:
        base_files = listing(git, plan.base)
        blobs = git.read_blobs(base_files[p].sha for p in base_oracle if p in base_files)
        sources = {p: blobs.get(base_files[p].sha, b"") for p in base_oracle if p in base_files}
        by_helper = helper_reach(sources, helpers, frozenset(base_files))

        def reached(path: str) -> bool:
            return reach(path) or by_helper(path)

        return edited_files(changes, base_oracle, sides, reached)
    return edited_files(changes, base_oracle, sides, reach)


def read_inputs(
    ctx: PhaseContext,
    git: Git,
    changes: Sequence[Change],
    differs: ConfigChanges,
    edited: tuple[EditedFile, ...],
) -> Inputs:
    """The evidence's inputs, read at once (before any test runs)."""
    plan = ctx.plan
    base_files, head_files = listing(git, plan.base), listing(git, plan.head)
    base_tree, expected = _base_tree(ctx, git, differs, base_files, head_files)
    head_oracle = frozenset(plan.head_rules.oracle_files)
    changed = {c.new_path for c in changes if c.new_path and c.status in "AMRCT"}
    ours = {e.head_path for e in edited if e.head_path}
    head_edited = tuple(sorted(p for p in head_oracle if p in changed or p in ours))
    production = _production_paths(ctx, head_files)
    tests = _test_sources(git, edited, base_files, head_files)
    imported: set[str] = set()
    names: set[str] = set()
    for path, source, functions in tests:
        tree = parse(source)
        if tree is not None:
            imported |= set(imported_files(path, tree, production))
            names |= names_read_by(tree, functions)
    touched = {
        c.new_path: frozenset(touched_lines(*git.read_sides(plan.base, plan.head, c)))
        for c in changes
        if c.new_path in production and c.status in "AMRCT"
    }
    wanted = sorted(imported | set(touched))
    blobs = git.read_blobs(head_files[p].sha for p in wanted)
    texts = {p: blobs.get(head_files[p].sha, b"").decode("utf-8", "replace") for p in wanted}
    return Inputs(
        edited=edited,
        head_files=head_edited,
        base_tree=base_tree,
        base_expected=expected,
        production=texts,
        imported=frozenset(imported),
        names=frozenset(names),
        touched=touched,
        base_digest=_digest("base", base_files, (e.path for e in edited)),
        head_digest=_digest("head", head_files, head_oracle),
    )


def _base_tree(
    ctx: PhaseContext,
    git: Git,
    differs: ConfigChanges,
    base_files: Mapping[str, TreeEntry],
    head_files: Mapping[str, TreeEntry],
) -> tuple[str, ExpectedTestSide]:
    """Head's production code with base's test side: the trusted tree of an
    unapproved check (once approved, built here, and held to its files)."""
    plan, config = ctx.plan, ctx.config
    if not ctx.approved:
        return plan.trusted, plan.test_side_files[plan.trusted]
    side = config.test_side
    overlay = test_side_overlay(base_files, head_files, side, differs)
    tree = git.commit_overlay(
        plan.head, overlay, ctx.scratch / "evidence.index", "andgate: base's test side"
    )
    files = apply_overlay(head_files, overlay)
    ctx.pool.listings[tree] = files
    expected = expected_files(git, "base", files, side, config.test_names, frozenset(base_files))
    return tree, expected


def _production_paths(ctx: PhaseContext, head_files: Mapping[str, TreeEntry]) -> frozenset[str]:
    """Head's Python production files (regular files: a link has no code to mutate)."""
    config = ctx.config
    paths = [
        p
        for p, e in head_files.items()
        if p.endswith(".py") and e.mode in REGULAR_FILE_MODES and not config.test_side.holds(p)
    ]
    if config.manifest.production_globs:
        return frozenset(matching(paths, config.manifest.production_globs))
    return frozenset(paths)


def _test_sources(
    git: Git,
    edited: Iterable[EditedFile],
    base_files: Mapping[str, TreeEntry],
    head_files: Mapping[str, TreeEntry],
) -> list[tuple[str, bytes, frozenset[str] | None]]:
    """Both sides of each edited oracle file, each with the test functions that count
    there (None: all): base's edited ones, and head's that are new or changed."""
    shas = [base_files[e.path].sha for e in edited if e.path in base_files]
    shas += [
        head_files[e.head_path].sha for e in edited if e.head_path and e.head_path in head_files
    ]
    blobs = git.read_blobs(shas)
    out: list[tuple[str, bytes, frozenset[str] | None]] = []
    for e in edited:
        before = blobs.get(base_files[e.path].sha) if e.path in base_files else None
        if before is not None:
            out.append((e.path, before, e.functions))
        if e.head_path and e.head_path in head_files:
            after = blobs.get(head_files[e.head_path].sha, b"")
            counted = None if e.functions is None else changed_tests(before, after)
            out.append((e.head_path, after, counted))
    return out


def _digest(side: str, files: Mapping[str, TreeEntry], paths: Iterable[str]) -> str:
    """The killer cache's key of one side: its files' blobs."""
    blobs = (f"{p} {files[p].sha}" for p in sorted(paths) if p in files)
    return digest([f"evidence {side}", *blobs])
