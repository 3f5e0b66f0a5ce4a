"""Which commit each pytest process runs in, and which files each may collect.

Three trees matter besides base and head:

- the *trusted* tree: head's production code with base's test side (every test
  file, conftest.py and changed pytest configuration taken from base), so a
  change cannot alter an oracle outcome through helpers, `__init__.py` files or
  test data. With an owner's approval it is head itself.
- the *property* tree: the trusted tree plus head's accepted property files
  (property tests are agent-editable; their trust comes from the invariant and
  the recorded seeds).
- head, for the untrusted and frozen_flake processes.

Synthetic trees are real commits built in a private index (see
`Git.commit_overlay`), so worktrees can check them out and reset to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from andgate.check.cache import digest
from andgate.git import Git, TreeEntry
from andgate.plugin.classify import Rules, has_accepted_invariant
from andgate.process.integrity import ExpectedTestSide, expected_files
from andgate.trust.config import BaseConfig
from andgate.trust.paths import TestSide, is_pytest_config_name, is_test_module, matching


@dataclass(frozen=True)
class Plan:
    base: str
    head: str
    trusted: str
    property_tree: str
    base_oracle_files: tuple[str, ...]
    trusted_oracle_files: tuple[str, ...]
    trusted_oracle_digest: str
    property_files: tuple[str, ...]
    flake_candidates: tuple[str, ...]
    untrusted_deny: tuple[str, ...]
    oracle_sizes: Mapping[str, int]
    untrusted_sizes: Mapping[str, int]
    property_sizes: Mapping[str, int]
    flake_sizes: Mapping[str, int]
    head_rules: Rules
    head_paths: tuple[str, ...]
    base_oracle_rules: Rules
    trusted_oracle_rules: Rules
    property_rules: Rules
    # Each tree a trusted run checks out (base, trusted, property) -> its test side:
    # what such a run may load (`process.integrity`), and its files: what a reused
    # worktree must hold before such a run (`process.worktree.WorktreePool.listings`).
    test_side_files: Mapping[str, ExpectedTestSide] = field(default_factory=dict)
    listings: Mapping[str, Mapping[str, TreeEntry]] = field(default_factory=dict)


def listing(git: Git, commit: str) -> dict[str, TreeEntry]:
    return {e.path: e for e in git.ls_tree(commit) if e.kind == "blob"}


def sizes_of(git: Git, files: Mapping[str, TreeEntry], paths: Iterable[str]) -> dict[str, int]:
    """Byte sizes of some files of a listing: what shards are balanced by."""
    paths = list(paths)
    by_sha = git.blob_sizes(files[p].sha for p in paths)
    return {p: by_sha.get(files[p].sha, 0) for p in paths}


def is_test_side(path: str, side: TestSide, config_differs: Callable[[str], bool]) -> bool:
    return side.holds(path) or (is_pytest_config_name(path) and config_differs(path))


def test_side_overlay(
    base: Mapping[str, TreeEntry],
    head: Mapping[str, TreeEntry],
    side: TestSide,
    config_differs: Callable[[str], bool],
) -> dict[str, TreeEntry | None]:
    """Replacements that turn head's test side into base's (None deletes)."""
    replace: dict[str, TreeEntry | None] = {}
    for path in set(base) | set(head):
        if not is_test_side(path, side, config_differs):
            continue
        want, have = base.get(path), head.get(path)
        if want is None:
            replace[path] = None
        elif have is None or (have.sha, have.mode) != (want.sha, want.mode):
            replace[path] = want
    return replace


def apply_overlay(
    files: Mapping[str, TreeEntry], replace: Mapping[str, TreeEntry | None]
) -> dict[str, TreeEntry]:
    out = dict(files)
    for path, entry in replace.items():
        if entry is None:
            out.pop(path, None)
        else:
            out[path] = entry
    return out


def accepted_property_files(
    git: Git, files: Mapping[str, TreeEntry], config: BaseConfig
) -> tuple[frozenset[str], frozenset[str]]:
    """(files matching the property globs, those that declare an accepted invariant)."""
    prop = config.manifest.property
    globbed = matching(files, prop.globs)
    if not prop.require_accepted_invariant:
        return globbed, globbed
    blobs = git.read_blobs(files[p].sha for p in globbed)
    accepted = frozenset(
        p
        for p in globbed
        if has_accepted_invariant(
            blobs.get(files[p].sha, b"").decode("utf-8", "replace"), config.accepted
        )
    )
    return globbed, accepted


def flake_candidates(
    git: Git,
    files: Mapping[str, TreeEntry],
    flake_files: frozenset[str],
    freeze_ids: tuple[str, ...],
) -> tuple[str, ...]:
    """Files that may hold a frozen item, so the flake process imports only those.

    Node ids, paths and stems are matched exactly; a bare function name by a
    word search of the file text (a superset: the plugin decides per item).
    """
    if not freeze_ids:
        return ()
    chosen = set()
    names = [i for i in freeze_ids if re.fullmatch(r"\w+", i)]
    for path in flake_files:
        stem = PurePosixPath(path).stem
        if any(i in (path, stem) or i.startswith(path + "::") for i in freeze_ids):
            chosen.add(path)
    if names:
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
        rest = [p for p in flake_files if p not in chosen]
        blobs = git.read_blobs(files[p].sha for p in rest)
        chosen.update(
            p
            for p in rest
            if pattern.search(blobs.get(files[p].sha, b"").decode("utf-8", "replace"))
        )
    return tuple(sorted(chosen))


def oracle_files_rule(
    globs: Iterable[str], base_files: Mapping[str, TreeEntry], *, approved: bool
) -> Callable[[Iterable[str]], frozenset[str]]:
    """The oracle files among a tree's paths: those matching the oracle globs, except,
    until an owner approved head (or the change adopts andgate), a test module base does
    not hold.

    Contract section 1 classifies by glob, and docs/concepts.md says every test a change
    adds is untrusted: a test file the change adds under a folder glob is the change's
    own test until an owner accepts it, never an oracle that blocks its own change as
    ORACLE_AUTHORSHIP without running anywhere. Any other file it adds there (conftest,
    `__init__.py`, a helper) stays oracle side: it would shape the oracle runs."""
    globs = tuple(globs)
    if approved:
        return lambda paths: matching(paths, globs)
    return lambda paths: matching(
        (p for p in paths if p in base_files or not is_test_module(p)), globs
    )


def make_plan(
    git: Git,
    base: str,
    head: str,
    config: BaseConfig,
    *,
    approved: bool,
    live_freezes: tuple[str, ...],
    config_differs: Callable[[str], bool],
    scratch: Path,
) -> Plan:
    manifest = config.manifest
    base_files, head_files = listing(git, base), listing(git, head)
    side = config.test_side
    overlay = {} if approved else test_side_overlay(base_files, head_files, side, config_differs)
    trusted_files = apply_overlay(head_files, overlay)
    trusted = git.commit_overlay(head, overlay, scratch / "trusted.index", "andgate: trusted tree")

    prop_globbed, prop_accepted = accepted_property_files(git, head_files, config)
    prop_overlay = {
        p: head_files[p] for p in prop_accepted if trusted_files.get(p) != head_files[p]
    }
    property_tree = git.commit_overlay(
        trusted, prop_overlay, scratch / "property.index", "andgate: property tree"
    )

    oracle_markers = frozenset(manifest.oracle.markers)
    # Unapproved, only base's files are oracle files: a file the change adds under an
    # oracle glob is one of its own tests (untrusted, run in the untrusted process);
    # an owner's approval makes it an oracle file.
    oracle_of = oracle_files_rule(manifest.oracle.globs, base_files, approved=approved)
    head_oracle = oracle_of(head_files)
    flake_files = matching(head_files, manifest.frozen_flake.globs)
    head_rules = Rules(
        oracle_files=head_oracle,
        added_oracle_files=matching(head_files, manifest.oracle.globs) - head_oracle,
        oracle_markers=oracle_markers,
        property_glob_files=prop_globbed,
        property_files=prop_accepted,
        property_markers=frozenset(manifest.property.markers),
        flake_files=flake_files,
        flake_markers=frozenset(manifest.frozen_flake.markers),
        live_freezes=live_freezes,
    )
    base_oracle = matching(base_files, manifest.oracle.globs)
    trusted_oracle = oracle_of(trusted_files)
    deny: set[str] = set()
    if not oracle_markers:
        deny |= head_oracle
    if not manifest.property.markers:
        deny |= prop_accepted
    flakes = flake_candidates(git, head_files, flake_files, live_freezes)
    property_files = apply_overlay(trusted_files, prop_overlay)
    trees = {
        base: ("base", base_files),
        trusted: ("head" if approved else "base", trusted_files),
        property_tree: ("the property tree", property_files),
    }
    base_paths = frozenset(base_files)
    test_side_files = {
        commit: expected_files(git, label, files, side, config.test_names, base_paths)
        for commit, (label, files) in trees.items()
    }
    return Plan(
        base=base,
        head=head,
        trusted=trusted,
        property_tree=property_tree,
        base_oracle_files=tuple(sorted(base_oracle)),
        trusted_oracle_files=tuple(sorted(trusted_oracle)),
        trusted_oracle_digest=digest(f"{p} {trusted_files[p].sha}" for p in sorted(trusted_oracle)),
        property_files=tuple(sorted(prop_accepted)),
        flake_candidates=flakes,
        untrusted_deny=tuple(sorted(deny)),
        oracle_sizes=sizes_of(git, trusted_files, trusted_oracle),
        untrusted_sizes=sizes_of(
            git, head_files, (p for p in head_files if side.holds(p) and p not in deny)
        ),
        property_sizes=sizes_of(git, head_files, prop_accepted),
        flake_sizes=sizes_of(git, head_files, flakes),
        head_rules=head_rules,
        head_paths=tuple(sorted(head_files)),
        base_oracle_rules=Rules(oracle_files=base_oracle, oracle_markers=oracle_markers),
        trusted_oracle_rules=Rules(oracle_files=trusted_oracle, oracle_markers=oracle_markers),
        property_rules=Rules(
            oracle_files=trusted_oracle,
            oracle_markers=oracle_markers,
            property_glob_files=prop_globbed,
            property_files=prop_accepted,
            property_markers=frozenset(manifest.property.markers),
        ),
        test_side_files=test_side_files,
        listings={commit: files for commit, (_, files) in trees.items()},
    )
