"""The production-diff scan: constructs that game tests, in the lines a change adds.

Agents that cannot pass a test honestly special-case its inputs, overload `==`,
detect the gate and behave only under it, exit the process, shadow a module the
oracle imports, or hide the working code in committed bytecode. None of that is
visible to a test run, so the scan reads base..head's production files before any
test runs and names each such construct with its file and line.

The rules come in families, one module each (`FAMILIES`; `rules.py` says the shape
they share): imports and shadowing (`imports.py`), harness references and hooks
(`harness.py`), process and environment effects (`effects.py`), files and
encodings (`files.py`), hard-coded answers (`hardcoded.py`). This module runs them.

Only what the change adds counts: a construct present identically in base (same
scope, same code) is never reported, so a project's long-standing `sys._getframe`
does not block every later change. Python files are read as ASTs; a `.py` that
does not parse falls back to patterns over its added lines. Pure: callers give
bytes and get findings back.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from pathlib import PurePosixPath

from andgate.check.production import effects, files, hardcoded, harness, imports
from andgate.check.production.common import (
    PYTHON_SUFFIXES,
    FileChange,
    Hit,
    ScanContext,
    ScanFinding,
    added_lines,
    is_allowed,
    is_binary,
    unique,
)
from andgate.check.production.rules import Family, Rules, compose, line_hits, module_hits
from andgate.records import Construct

FAMILIES: tuple[Family, ...] = (
    imports.FAMILY,
    harness.FAMILY,
    effects.FAMILY,
    files.FAMILY,
    hardcoded.FAMILY,
)
# What the families find that only warns (the rest is PRODUCTION_SUSPICIOUS).
WARNINGS = frozenset(c for family in FAMILIES for c in family.warns)


def scan_production(
    changes: Sequence[FileChange],
    *,
    shadowed: Container[str],
    project_packages: frozenset[str],
    allow: Mapping[str, frozenset[Construct]] = {},
    oracle_sources: Mapping[str, bytes] = {},
    given: Iterable[tuple[str, bytes]] = (),
    test_names: Mapping[str, str] = {},
    test_roots: Sequence[str] = (),
    families: Sequence[Family] = FAMILIES,
) -> list[ScanFinding]:
    """Every construct that games tests in what `changes` add (their production files),
    minus those `allow` (path glob -> constructs, from base's manifest) permits; with
    `oracle_sources` (base's oracle files and fixtures), also the literals they hold
    that an added line answers with (`WARNINGS` among them only warn), against what
    the author was `given` (base's files outside the test side, read only if needed);
    with `test_names` (base's test side's module names, `trust.test_names`) and
    `test_roots` (the folders tests import from), also the files that take one."""
    rules = compose(families)
    context = ScanContext(
        shadowed=shadowed,
        project_packages=project_packages,
        moved_packages=imports.moved_top_level(changes),
        oracle_sources=oracle_sources,
        given=given,
        test_names=test_names,
        test_roots=tuple(test_roots),
    )
    found: list[ScanFinding] = []
    for change in changes:
        for file_rule in rules.file_rules:
            found.extend(file_rule(change, context))
        found.extend(code_findings(change, rules))
    for change_rule in rules.change_rules:
        found.extend(change_rule(changes, context))
    return unique(f for f in found if not is_allowed(f, allow))


def code_findings(change: FileChange, rules: Rules) -> Iterator[ScanFinding]:
    """Constructs in the lines `change` adds to a Python file."""
    if change.new is None or PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES:
        return
    if change.is_symlink:
        return  # its bytes are a path, reported as a symlink
    if is_binary(change.new):
        return  # reported as a binary file; Python would not import it
    added = added_lines(change.old, change.new)
    if not added:
        return
    new_hits = module_hits(change.new, change.path, rules)
    if new_hits is None:
        for line, construct, detail in line_hits(change.new, added, rules):
            yield ScanFinding(change.path, line, construct, detail)
        return
    old_hits = module_hits(change.old, change.path, rules) if change.old is not None else []
    yield from new_constructs(change.path, new_hits, old_hits or [], added)


def new_constructs(
    path: str, new_hits: list[Hit], old_hits: list[Hit], added: frozenset[int]
) -> Iterator[ScanFinding]:
    """Hits on added lines that base did not have: the same construct and code in the
    same scope (function, class or module) is old, wherever its lines moved. A function
    that already inspected the stack gains nothing to review from a second look at it."""
    old = {h.key for h in old_hits}
    for hit in new_hits:
        if hit.key in old:
            continue
        touched = sorted(hit.lines & added)
        if touched or hit.guards & added:
            line = touched[0] if touched else min(hit.lines)
            yield ScanFinding(path, line, hit.construct, hit.detail)
