"""The production-diff scan, on base..head before any test runs (`scan.py` decides).

Feeds the scan what only the repository knows: which changed files are production
code, their bytes on both sides, the names a new top-level module could shadow
(the standard library, every installed distribution, the project's own packages
on base), base's oracle files and base's production code (for ORACLE_LITERAL).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import PurePosixPath

from andgate.authorship import sort_changes
from andgate.config import BaseConfig
from andgate.git import Change, Git
from andgate.paths import ConfigChanges, matches
from andgate.scan import (
    FileChange,
    oracle_literals,
    oracle_parameters_from_production,
    scan_production,
)


@dataclass(frozen=True)
class ScanResult:
    suspicious: tuple[str, ...] = ()
    oracle_literals: tuple[str, ...] = ()
    oracle_from_production: tuple[str, ...] = ()


def scan_change(
    git: Git,
    base: str,
    head: str,
    changes: list[Change],
    config: BaseConfig,
    differs: ConfigChanges,
) -> ScanResult:
    manifest = config.manifest
    sorted_changes = sort_changes(
        changes,
        manifest,
        is_oracle_file=lambda path: matches(path, manifest.oracle.globs),
        config_differs=differs,
        approved_by=(),
        test_side=config.test_side,
    )
    production = set(sorted_changes.production_paths)
    base_files = [e for e in git.ls_tree(base) if e.kind == "blob"]
    packages = _packages([e.path for e in base_files])
    oracles = _blobs(git, base_files, lambda p: matches(p, manifest.oracle.globs))
    from_production = tuple(oracle_parameters_from_production(oracles, packages))
    file_changes = [
        _file_change(c, *git.read_sides(base, head, c))
        for c in changes
        if (c.new_path or c.old_path) in production
    ]
    if not file_changes:
        return ScanResult(oracle_from_production=from_production)
    allow = manifest.production_scan_allow
    found = scan_production(
        file_changes,
        shadowed=ShadowableNames(),
        project_packages=packages,
        allow=allow,
    )
    base_production = _read_when_iterated(
        lambda: _blobs(
            git, base_files, lambda p: p.endswith(".py") and not config.test_side.holds(p)
        )
    )
    literals = oracle_literals(oracles, base_production, file_changes, allow=allow)
    return ScanResult(
        tuple(f.message for f in found), tuple(f.message for f in literals), from_production
    )


def _file_change(change: Change, old: bytes | None, new: bytes | None) -> FileChange:
    return FileChange(
        path=change.new_path or change.old_path or "",
        old=old,
        new=new,
        old_path=change.old_path if change.old_path != change.new_path else None,
    )


def _blobs(git: Git, entries: Iterable, wanted) -> dict[str, bytes]:  # type: ignore[no-untyped-def,type-arg]
    chosen = [e for e in entries if wanted(e.path)]
    blobs = git.read_blobs(e.sha for e in chosen)
    return {e.path: blobs.get(e.sha, b"") for e in chosen}


def _read_when_iterated(read: Callable[[], dict[str, bytes]]) -> Iterator[bytes]:
    """The blobs `read` returns, read only if the scan iterates them: base's production
    code can be most of a repository, and `oracle_literals` needs it only when an
    added literal is one an oracle expects."""
    yield from read().values()


class ShadowableNames:
    """The standard library's modules and every installed distribution's import
    names, read on first use: only a change that adds a top-level module asks, and
    reading every distribution's metadata costs about 0.14 s before any test runs."""

    def __init__(self) -> None:
        self._names: frozenset[str] | None = None

    def __contains__(self, name: object) -> bool:
        if self._names is None:
            try:
                installed = set(metadata.packages_distributions())
            except Exception:  # a broken distribution must not stop the scan
                installed = set()
            self._names = frozenset(sys.stdlib_module_names) | frozenset(installed)
        return name in self._names


def _packages(paths: Iterable[str]) -> frozenset[str]:
    """The project's own top-level packages on base (at the root or under `src/`)."""
    names = set()
    for path in paths:
        parts = PurePosixPath(path).parts
        if len(parts) == 2 and parts[1] == "__init__.py":
            names.add(parts[0])
        elif len(parts) == 3 and parts[0] == "src" and parts[2] == "__init__.py":
            names.add(parts[1])
    return frozenset(names)
