"""The production-diff scan, on base..head: its inputs read before any test runs,
its analysis beside the oracle phase (`scan.scan_production` runs every family of
rules).

Feeds the scan what only the repository knows: which changed files are production
code, their bytes on both sides, the names a new top-level module could shadow
(the standard library, every installed distribution, the project's own packages
on base), base's oracle files and fixtures, and what the author was given: base's
files outside the test side (for hard-coded answers and ORACLE_LITERAL).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import PurePosixPath

from andgate.check.production.common import FileChange, ScanFinding, is_allowed, is_binary
from andgate.check.production.hardcoded import oracle_parameters_from_production
from andgate.check.production.scan import WARNINGS, scan_production
from andgate.git import Change, Git, TreeEntry
from andgate.process.generated import NONE, Generated
from andgate.process.requests import RunEnvironment
from andgate.process.results import RunResult
from andgate.process.signals import in_background, wait_future
from andgate.records import Construct
from andgate.trust.authorship import is_oracle_side, sort_changes
from andgate.trust.config import BaseConfig
from andgate.trust.paths import ConfigChanges, is_under, matches

MAX_GIVEN_BYTES = 2_000_000  # a bigger file is a data dump, not documentation


@dataclass(frozen=True)
class ScanResult:
    suspicious: tuple[str, ...] = ()
    oracle_literals: tuple[str, ...] = ()
    oracle_from_production: tuple[str, ...] = ()

    @property
    def oracle_from_production_files(self) -> frozenset[str]:
        return files_of(self.oracle_from_production)


def files_of(findings: Iterable[str]) -> frozenset[str]:
    """The files of oracle-from-production findings
    (`hardcoded.oracle_parameters_from_production` begins each with `path::function`)."""
    return frozenset(m.partition("::")[0] for m in findings)


@dataclass(frozen=True)
class PendingScan:
    """A scan under way: what the oracle phase needs is known at once; the rest of
    the analysis (parsing every changed file and matching literals, most of the
    scan's time) runs in a thread beside the oracle phase."""

    oracle_from_production: tuple[str, ...]
    analysis: Future[ScanResult]

    @property
    def oracle_from_production_files(self) -> frozenset[str]:
        return files_of(self.oracle_from_production)

    def result(self) -> ScanResult:
        """The whole scan, waiting for it (interruptibly); raises what it raised."""
        return wait_future(self.analysis)


def scan_change(
    git: Git,
    base: str,
    head: str,
    changes: list[Change],
    config: BaseConfig,
    differs: ConfigChanges,
    generated: Generated = NONE,
) -> ScanResult:
    """The whole scan, in the calling thread's time (`start_scan`, then wait)."""
    return start_scan(git, base, head, changes, config, differs, generated).result()


def start_scan(
    git: Git,
    base: str,
    head: str,
    changes: list[Change],
    config: BaseConfig,
    differs: ConfigChanges,
    generated: Generated = NONE,
) -> PendingScan:
    """`generated`: the checkout's generated files, production code the change's own
    build produced: scanned as files the change adds.

    Read here, before any test runs: the changed files' bytes, base's tree, its
    oracle files and fixtures, and (when the change adds a path) the installed
    environment's module names. The analysis, in a thread beside the oracle phase
    (whose processes run the change's code), reads what the author was given
    (base's other files) only if it needs them, each checked against its id in
    base's tree; `check` waits for it before the first untrusted test runs."""
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
    fixtures = _blobs(git, base_files, lambda p: _is_fixture_data(p, manifest.fixtures_dir))
    from_production = tuple(oracle_parameters_from_production(oracles, packages))
    file_changes = [
        _file_change(c, *git.read_sides(base, head, c))
        for c in changes
        if (c.new_path or c.old_path) in production
    ]
    file_changes += [FileChange(path=f.path, old=None, new=f.data) for f in generated.files]
    shadowed = ShadowableNames()
    if any(change.path_is_new for change in file_changes):
        shadowed.load()  # the environment as installed, before the change's code runs

    def analyse() -> ScanResult:
        if not file_changes:
            return ScanResult(oracle_from_production=from_production)
        given = _given(
            git,
            base_files,
            lambda p: (
                not config.test_side.holds(p)
                and not is_oracle_side(p, manifest, lambda q: matches(q, manifest.oracle.globs))
            ),
        )
        found = scan_production(
            file_changes,
            shadowed=shadowed,
            project_packages=packages,
            allow=manifest.production_scan_allow,
            oracle_sources={**oracles, **fixtures},
            given=given,
            test_names=config.test_names,
            test_roots=config.test_roots,
        )
        return ScanResult(
            tuple(f.message for f in found if f.construct not in WARNINGS),
            tuple(f.message for f in found if f.construct in WARNINGS),
            from_production,
        )

    return PendingScan(from_production, in_background("scan", analyse))


def _file_change(change: Change, old: bytes | None, new: bytes | None) -> FileChange:
    return FileChange(
        path=change.new_path or change.old_path or "",
        old=old,
        new=new,
        old_path=change.old_path if change.old_path != change.new_path else None,
        old_mode=change.old_mode if change.old_path else None,
        new_mode=change.new_mode if change.new_path else None,
    )


def _blobs(git: Git, entries: Iterable, wanted) -> dict[str, bytes]:  # type: ignore[no-untyped-def,type-arg]
    chosen = [e for e in entries if wanted(e.path)]
    blobs = git.read_blobs(e.sha for e in chosen)
    return {e.path: blobs.get(e.sha, b"") for e in chosen}


def _is_fixture_data(path: str, fixtures_dir: str) -> bool:
    """An oracle fixture a hard-coded answer could come from: its JSON cases."""
    return is_under(path, fixtures_dir) and path.endswith(".json")


def _given(
    git: Git, entries: list[TreeEntry], wanted: Callable[[str], bool]
) -> Iterator[tuple[str, bytes]]:
    """What the author was given (base's text files `wanted` says are not the test
    side), read only if the scan iterates it: it can be most of a repository, and
    `hard_coded_answers` needs it only when an added literal is one an oracle holds."""
    chosen = [e for e in entries if wanted(e.path)]
    sizes = git.blob_sizes(e.sha for e in chosen)
    chosen = [e for e in chosen if sizes.get(e.sha, 0) <= MAX_GIVEN_BYTES]
    # Read beside the oracle phase, whose processes run the change's code: checked
    # against the ids base's tree gave before any test ran. (A size it lies about
    # only leaves a file out: a literal then counts as not given, which blocks.)
    blobs = git.read_blobs((e.sha for e in chosen), verify=True)
    for entry in chosen:
        data = blobs.get(entry.sha, b"")
        if not is_binary(data):
            yield entry.path, data


class ShadowableNames:
    """The standard library's modules and every installed distribution's import
    names, read on first use: only a change that adds a top-level module asks, and
    reading every distribution's metadata costs about 0.14 s before any test runs."""

    def __init__(self) -> None:
        self._names: frozenset[str] | None = None

    def load(self) -> frozenset[str]:
        if self._names is None:
            try:
                installed = set(metadata.packages_distributions())
            except Exception:  # a broken distribution must not stop the scan
                installed = set()
            self._names = frozenset(sys.stdlib_module_names) | frozenset(installed)
        return self._names

    def __contains__(self, name: object) -> bool:
        return name in self.load()


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


def with_unscanned_imports(
    scan: ScanResult,
    runs: Iterable[RunResult],
    changes: Iterable[Change],
    allow: Mapping[str, frozenset[Construct]],
    is_test_side: Callable[[str], bool] = lambda path: False,
) -> ScanResult:
    """The scan's findings plus each module a run imported from its worktree that
    the scan did not read as Python source (a symlink, a file of another kind;
    `redirect.unscanned_modules`) when the change touched it or what it leads to:
    what is imported must be what was scanned. A link from test code to test code is
    not production code (the test side is judged by where it runs, never scanned).
    An owner's `symlink` allow entry for the path covers a link, as it covers the
    scan's own finding."""
    changed = {p for c in changes for p in c.paths}
    found = dict.fromkeys(scan.suspicious)
    for run in runs:
        for module, path, target, why in run.unscanned:
            if path not in changed and target not in changed:
                continue
            if is_test_side(path) and is_test_side(target):
                continue
            finding = ScanFinding(path, None, Construct.SYMLINK, why)
            if why.startswith("reached through") and is_allowed(finding, allow):
                continue
            found[
                f"{path}: the {run.label} process imported {module} from it, {why}, leading "
                f"to {target}: not the Python source the production scan read"
            ] = None
    return replace(scan, suspicious=tuple(found))


def with_installed_hooks(scan: ScanResult, environment: RunEnvironment) -> ScanResult:
    """The scan's findings plus what the project's own installed distribution puts
    into the environment beyond its packages and the standard editable hook
    (contract section 4): a pytest plugin base does not declare (the trusted
    processes ran without it), a `.pth` file that runs code, a start-up module."""
    found = dict.fromkeys(scan.suspicious)
    for name in environment.head_only_plugins:
        found[
            f"the project's installed distribution registers the pytest plugin {name!r} "
            "(a pytest11 entry point) that base's build configuration does not declare; "
            "the oracle, property and replay processes ran without it"
        ] = None
    for hook in environment.startup_hooks:
        found[
            f"{hook}, installed by the project's distribution, which may install only its "
            "packages and the standard editable hook"
        ] = None
    return replace(scan, suspicious=tuple(found))
