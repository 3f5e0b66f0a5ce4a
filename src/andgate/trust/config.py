"""Trust configuration read from the base commit.

The manifest, freeze file, invariants and known-bad fixtures always come from
`--base`, never from the change under review: a change cannot loosen its own gate.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from andgate.git import Git
from andgate.plugin.classify import accepted_invariants
from andgate.trust.freeze import FreezeSet, parse_freezes
from andgate.trust.manifest import Manifest, parse_manifest
from andgate.trust.paths import TestSide, is_under, matches, test_side
from andgate.trust.pytest_config import (
    CANDIDATES,
    tree_pythonpath,
    tree_runs_xdist,
    tree_testpaths,
)
from andgate.trust.test_names import sys_path_roots, test_side_names


@dataclass(frozen=True)
class KnownBad:
    name: str
    path: str
    patch: bytes


@dataclass(frozen=True)
class BaseConfig:
    manifest: Manifest
    freezes: FreezeSet
    accepted: frozenset[str]
    invariants_found: bool
    known_bad: tuple[KnownBad, ...]
    test_side: TestSide = field(default_factory=TestSide)
    # The module names base's test side provides -> the test-side path providing each
    # (`trust.test_names.test_side_names`): trusted runs import them from there only;
    # and the folders a test run imports from (`test_names.sys_path_roots`), under which
    # a production path's names are `test_names.importable_as(path, test_roots)`.
    test_names: Mapping[str, str] = field(default_factory=dict)
    test_roots: tuple[str, ...] = ()

    def live_freeze_ids(self, today: dt.date) -> tuple[str, ...]:
        return tuple(f.id for f in self.freezes.live(today))

    def invariants_problem(self, at: str = "") -> str | None:
        """Why no property file can be trusted, when the invariants file is the cause."""
        prop = self.manifest.property
        fix = "one '- <invariant>' line per invariant a human accepted"
        if not prop.require_accepted_invariant:
            return None
        if not self.invariants_found:
            return f"{prop.invariants_file}{at} is missing; add it with {fix}"
        if not self.accepted:
            return f"{prop.invariants_file}{at} lists no invariant; add {fix}"
        return None


def load_manifest_at(git: Git, commit: str, path: str) -> Manifest:
    source = f"{path} (at {commit[:12]})"
    return parse_manifest(git.read_blob(commit, path), path, source)


def load_base_config(git: Git, base: str, manifest_path: str) -> BaseConfig:
    manifest = load_manifest_at(git, base, manifest_path)
    at = f"(at {base[:12]})"
    freeze_file = manifest.frozen_flake.freeze_file
    freezes = parse_freezes(
        git.read_blob(base, freeze_file), f"{freeze_file} {at}", manifest.max_freeze_days
    )
    invariants = git.read_blob(base, manifest.property.invariants_file)
    accepted = (
        accepted_invariants(invariants.decode("utf-8", "replace")) if invariants else frozenset()
    )
    side, names, roots = load_test_side(git, base, manifest)
    return BaseConfig(
        manifest=manifest,
        freezes=freezes,
        accepted=accepted,
        invariants_found=invariants is not None,
        known_bad=known_bad_fixtures(git, base, manifest.known_bad_dir),
        test_side=side,
        test_names=names,
        test_roots=roots,
    )


def load_test_side(
    git: Git, commit: str, manifest: Manifest
) -> tuple[TestSide, dict[str, str], tuple[str, ...]]:
    """The test side as `commit` defines it (contract section 2), the module names it
    provides (`test_names.test_side_names`) and the folders tests import from."""
    files = [e.path for e in git.ls_tree(commit) if e.kind == "blob"]
    found = {e.path: e.sha for e in git.ls_tree(commit, CANDIDATES) if e.kind == "blob"}
    blobs = git.read_blobs(found.values())
    configs = {path: blobs.get(sha, b"") for path, sha in found.items() if "/" not in path}
    trusted_globs = (*manifest.oracle.globs, *manifest.property.globs)
    side = test_side(
        files,
        testpaths=tree_testpaths(configs),
        trusted_globs=trusted_globs,
        support_globs=manifest.test_support_globs,
    )
    import_roots = (*tree_pythonpath(configs), *tree_testpaths(configs))

    def collected(path: str) -> bool:
        return matches(path, trusted_globs)

    names = test_side_names(files, side.holds, import_roots, collected)
    return side, names, tuple(sorted(sys_path_roots(files, side.holds, import_roots, collected)))


def known_bad_fixtures(git: Git, commit: str, folder: str) -> tuple[KnownBad, ...]:
    """Every `*.patch` under `folder` at `commit`, named by its path without `.patch`."""
    entries = [
        e
        for e in git.ls_tree(commit, [folder])
        if e.kind == "blob" and e.path.endswith(".patch") and is_under(e.path, folder)
    ]
    blobs = git.read_blobs(e.sha for e in entries)
    fixtures = []
    for entry in sorted(entries, key=lambda e: e.path):
        name = str(PurePosixPath(entry.path).relative_to(folder).with_suffix(""))
        fixtures.append(KnownBad(name, entry.path, blobs.get(entry.sha, b"")))
    return tuple(fixtures)


def runs_xdist(git: Git, *commits: str) -> bool:
    """Whether the project's own pytest configuration at any of these commits starts
    pytest-xdist workers (PYTEST_ADDOPTS never reaches a run: `run.test_environment`)."""
    for commit in commits:
        roots = {e.path: e.sha for e in git.ls_tree(commit, CANDIDATES) if e.kind == "blob"}
        blobs = git.read_blobs(roots.values())
        files = {path: blobs.get(sha, b"") for path, sha in roots.items() if "/" not in path}
        if tree_runs_xdist(files):
            return True
    return False
