"""Step 1, authorship: sort the files changed base..head by what they are.

A change to an oracle file, a fixture, a known-bad fixture or the lock is an
oracle-authorship change; a change to any other trust-root file (manifest,
freeze file, invariants, conftest.py, pytest configuration) is a trust-root
change. Either blocks unless an owner from the *base* manifest approved. So does a
change to what a pull request runs the gate with (`.github/workflows/`,
`.github/actions/`, CODEOWNERS), to the pytest plugins the project declares
(`pytest11`), and to the files the manifest's `trust_root_globs` name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Protocol

from andgate.git import Change
from andgate.records import ChangeFacts
from andgate.trust.manifest import Manifest
from andgate.trust.paths import (
    ConfigChanges,
    TestSide,
    is_gitattributes,
    is_pytest_config_name,
    is_test_file,
    is_test_module,
    is_under,
    matches,
)

NO_EXTRA_TEST_SIDE = TestSide()


class ScanFindings(Protocol):
    """What the production scan found (check/production/phase.py's ScanResult)."""

    @property
    def suspicious(self) -> tuple[str, ...]: ...

    @property
    def oracle_literals(self) -> tuple[str, ...]: ...


def is_oracle_side(path: str, manifest: Manifest, is_oracle_file: Callable[[str], bool]) -> bool:
    return (
        is_oracle_file(path)
        or is_under(path, manifest.fixtures_dir)
        or is_under(path, manifest.known_bad_dir)
        or path == manifest.lock_file
    )


# On `pull_request` GitHub runs the pull request's own copy of its workflows and local
# actions, and reads CODEOWNERS from these three places: each can rewrite the gate.
WORKFLOW_FOLDERS = (".github/workflows", ".github/actions")
CODEOWNERS_PATHS = frozenset({"CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS"})


def is_ci_definition(path: str) -> bool:
    return path in CODEOWNERS_PATHS or any(is_under(path, f) for f in WORKFLOW_FOLDERS)


def is_trust_root(path: str, manifest: Manifest, config_differs: Callable[[str], bool]) -> bool:
    named = {manifest.path, manifest.frozen_flake.freeze_file, manifest.property.invariants_file}
    if path in named or PurePosixPath(path).name == "conftest.py":
        return True
    if is_gitattributes(path):
        return True  # it can rewrite base's oracle files on checkout (filters, eol)
    if is_ci_definition(path) or matches(path, manifest.trust_root_globs):
        return True
    if isinstance(config_differs, ConfigChanges) and path in config_differs.plugins:
        return True
    return is_pytest_config_name(path) and config_differs(path)


def oracle_file_rule(
    manifest: Manifest, holders: Collection[str], base_oracle: Collection[str] | None = None
) -> Callable[[str], bool]:
    """Is a path an oracle-class file? With oracle markers, only a globbed file that
    held an oracle item on base or head (`holders`) counts. With `base_oracle` (base's
    files that match the oracle globs; None once an owner approved head), a test module
    the change adds is not one: its tests are the change's own, untrusted, and ran in
    the untrusted process; editing, deleting or renaming one of base's stays authorship,
    and so does adding any other file under an oracle glob (`plan.trees.oracle_files_rule`)."""
    oracle = manifest.oracle

    def globbed(path: str) -> bool:
        if base_oracle is not None and is_test_module(path) and path not in base_oracle:
            return False
        return matches(path, oracle.globs)

    if not oracle.markers:
        return globbed
    return lambda path: globbed(path) and path in holders


def sort_changes(
    changes: Iterable[Change],
    manifest: Manifest,
    *,
    is_oracle_file: Callable[[str], bool],
    config_differs: Callable[[str], bool],
    approved_by: tuple[str, ...],
    test_side: TestSide = NO_EXTRA_TEST_SIDE,
    scan: ScanFindings | None = None,
    earlier_commit_only: bool = False,
) -> ChangeFacts:
    oracle, trust_root, production, tests = set(), set(), set(), set()
    for path in {p for change in changes for p in change.paths}:
        if is_oracle_side(path, manifest, is_oracle_file):
            oracle.add(path)
        elif is_trust_root(path, manifest, config_differs):
            trust_root.add(path)
        elif path == manifest.disputes_file:
            # The change's own disputes: neither production nor trust root (contract
            # section 4), so disputing an oracle never makes a change "mixed".
            tests.add(path)
        elif manifest.production_globs:
            if matches(path, manifest.production_globs):
                production.add(path)
            elif test_side.holds(path):
                tests.add(path)
        elif test_side.holds(path):
            tests.add(path)
        else:
            production.add(path)
    return ChangeFacts(
        oracle_paths=tuple(sorted(oracle)),
        trust_root_paths=tuple(sorted(trust_root)),
        trust_root_why=_config_reasons(trust_root, config_differs),
        production_paths=tuple(sorted(production)),
        test_paths=tuple(sorted(tests)),
        approved_by=approved_by,
        earlier_commit_only=earlier_commit_only,
        require_human_owner=manifest.oracle.require_human_owner,
        suspicious=scan.suspicious if scan is not None else (),
        oracle_literals=scan.oracle_literals if scan is not None else (),
    )


def _config_reasons(
    paths: Iterable[str], config_differs: Callable[[str], bool]
) -> tuple[tuple[str, str], ...]:
    """Why each changed pytest config file counts, when the caller knows (check does)."""
    if not isinstance(config_differs, ConfigChanges):
        return ()
    why = {**config_differs.plugins, **config_differs}
    for path in paths:
        if path in config_differs and path in config_differs.plugins:
            why[path] = f"{config_differs[path]}; {config_differs.plugins[path]}"
    return tuple((p, why[p]) for p in sorted(paths) if p in why)


def adopting(
    facts: ChangeFacts, changes: Iterable[Change], agent_files: Collection[str] = ()
) -> ChangeFacts:
    """The facts of a change that adopts andgate. Its own manifest sorted the paths,
    and a manifest written by the change must not decide what counts as production
    code: `production_globs`, `test_support_globs`, a glob or folder that names code
    would let the change edit production code while it adopts. So every changed path
    is production unless the manifest's sorting put it on the test or trust side and
    it is not Python outside a test file by name or folder. `agent_files`: agent
    instruction files the change adds the andgate block to and changes in no other way
    (`adoption.agent_block_files`): `init --agents` writes them as part of adopting."""
    kept = {*facts.oracle_paths, *facts.trust_root_paths, *facts.test_paths}
    production = {
        path
        for change in changes
        for path in change.paths
        if (path not in kept or (path.endswith(".py") and not is_test_file(path)))
        and path not in agent_files
    }
    return replace(facts, production_paths=tuple(sorted(production)), adopting=True)
