"""`andgate doctor`: what the next `check` would trip on, and the fix for each.

It judges the working tree as it is (uncommitted edits included), or the commit
`--rev` names (its committed workflows and lock too), as the other maintainer
commands do, says which on its first line, and looks at everything a first check depends on: the
manifest, the clone (a shallow one has no merge-base), the target branch (none
with andgate configuration: the change adopts andgate), the oracle and property
classes, the known-bad fixtures (present, and each biting), the generated files,
collection errors, the lock, the freezes and the CI workflow. Each finding is one
line naming the problem and the command or edit that fixes it.

Exit codes: 0 nothing would trip the next check, 1 something would, 2 could not run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from andgate.commands import options
from andgate.commands.common import (
    Target,
    collect_inventory,
    head_plan,
    open_repo,
    open_target,
    plural,
    read_file,
    run_environment,
    target_pool,
)
from andgate.commands.layout import (
    NOT_COLLECTED_FIX,
    property_empty_because,
    uncollected_trusted,
)
from andgate.commands.lock import fixture_digests
from andgate.commands.replay_known_bad import _replay_all
from andgate.commands.xfails import FIX as XFAIL_FIX
from andgate.commands.xfails import WHY as XFAIL_WHY
from andgate.errors import FreezeFileError, ManifestError
from andgate.exitcodes import Exit
from andgate.git import Git
from andgate.process.requests import DEFAULT_ITEM_TIMEOUT, DEFAULT_TIMEOUT
from andgate.records import Outcome, Reason, ReplayStatus, TrustClass
from andgate.trust import locks
from andgate.trust.adoption import has_andgate_config, target_branch
from andgate.trust.refs import local_ahead, short_ref

WORKFLOWS = ".github/workflows"


@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)  # what the next check trips on
    notes: list[str] = field(default_factory=list)  # worth knowing, trips nothing
    codes: list[str] = field(default_factory=list)  # each problem's code

    def problem(self, code: str, what: str, fix: str) -> None:
        self.problems.append(f"{code}: {what}; fix: {fix}")
        self.codes.append(code)

    def result(self) -> str:
        """The last line: how many problems, and how many of them block a check (a
        warning such as GENERATED_FILES, or no workflow running andgate, does not)."""
        blocking = [c for c in self.codes if c in BLOCKING]
        if len(blocking) == len(self.codes):
            return f"the next check would block: {plural(len(self.codes), 'problem')}"
        others = ", ".join(dict.fromkeys(c for c in self.codes if c not in BLOCKING))
        return (
            f"{plural(len(self.codes), 'problem')}; the next check would block on "
            f"{len(blocking) or 'none'} of them ({others}: no block, but fix it)"
        )


BLOCKING = frozenset(reason.value for reason in Reason)


def run_doctor(
    repo: Path,
    *,
    manifest: str,
    today: dt.date,
    jobs: int,
    timeout: float = DEFAULT_TIMEOUT,
    rev: str | None = None,
) -> int:
    git = open_repo(repo)
    # None: the working tree; else the commit whose files every finding reads
    commit = git.resolve(rev, what="--rev") if rev is not None else None
    found = Findings()
    _clone(git, found)
    try:
        target = open_target(git.repo, manifest, rev)
    except (ManifestError, FreezeFileError) as exc:
        found.problem("MANIFEST_INVALID", str(exc), "run `andgate init`, or fix the file named")
        target = None
    fallback = str(git.repo) if commit is None else f"--rev {rev} ({commit[:12]}), as committed"
    print(f"andgate doctor: {target.what if target else fallback}")
    _target_branch(git, manifest, found)
    _workflow(git, commit, found)
    if target is not None:
        named = _inventory(target, today, timeout, found)
        _known_bad(target, jobs, timeout, found, named)
        _lock(git, target, commit, found)
    for line in found.notes:
        print(f"  note: {line}")
    for index, line in enumerate(found.problems, 1):
        print(f"  {index}. {line}")
    if found.problems:
        print(f"result: {found.result()}")
        return Exit.BLOCK
    print("result: nothing the next check would trip on")
    return Exit.OK


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Look at the working tree as it is (uncommitted edits included; --rev for a commit, "
        "its committed workflows and lock too): the manifest, the clone, the target branch, "
        "the oracle and property classes, the known-bad fixtures (present and biting), "
        "generated files, collection errors, the lock, the freezes and the CI workflow. "
        "Exit 0 nothing would trip the next check, 1 something would, 2 could not run."
    )
    options.add_repo(parser)
    options.add_rev(parser)
    options.add_manifest(parser)
    options.add_today(parser)
    options.add_jobs(parser)
    options.add_timeout(parser)
    options.handled_by(parser, _doctor)


def _doctor(args: argparse.Namespace) -> int:
    return run_doctor(
        args.repo,
        manifest=args.manifest,
        today=options.today(args),
        jobs=args.jobs,
        timeout=args.timeout,
        rev=args.rev,
    )


def _clone(git: Git, found: Findings) -> None:
    if git.is_shallow():
        found.problem(
            "GATE_ERROR",
            "this is a shallow clone: check finds no merge-base with the target branch",
            "git fetch --unshallow (in CI: actions/checkout with fetch-depth: 0)",
        )


def _target_branch(git: Git, manifest: str, found: Findings) -> None:
    target = target_branch(git)
    if target is None:
        found.notes.append(
            "no upstream default branch (origin/HEAD, origin/main): pass check --base REF"
        )
        return
    upstream = git.default_upstream()
    if not os.environ.get("GITHUB_BASE_REF") and upstream is not None:
        ahead = local_ahead(git, upstream, "HEAD")
        note = f"check bases changes on {short_ref(upstream)} ({target[:12]})"
        if ahead is not None:
            name = short_ref(ahead)
            note += f"; your {name} is ahead of it: check --base {name} gates against {name}"
        found.notes.append(note)
    if not has_andgate_config(git, target, manifest):
        found.notes.append(
            f"the target branch ({target[:12]}) has no andgate configuration: the change "
            "that adds it adopts andgate (ADOPTING) and may not change production code"
        )


def _workflow(git: Git, commit: str | None, found: Findings) -> None:
    if not any(b"andgate" in text for text in _workflow_files(git, commit)):
        found.problem(
            "CI",
            f"no workflow under {WORKFLOWS}/ runs andgate, so no pull request is gated",
            "andgate init --github",
        )


def _workflow_files(git: Git, commit: str | None) -> list[bytes]:
    """The workflow files' bytes: in the working tree, or committed in `commit`."""
    if commit is None:
        folder = git.repo / WORKFLOWS
        files = sorted(folder.glob("*.y*ml")) if folder.is_dir() else []
        return [path.read_bytes() for path in files if path.is_file()]
    entries = [
        e
        for e in git.ls_tree(commit, [WORKFLOWS])
        if e.kind == "blob"
        and PurePosixPath(e.path).parent == PurePosixPath(WORKFLOWS)
        and PurePosixPath(e.path).suffix in (".yml", ".yaml")
    ]
    blobs = git.read_blobs(e.sha for e in entries)
    return [blobs[e.sha] for e in entries if e.sha in blobs]


def _inventory(target: Target, today: dt.date, timeout: float, found: Findings) -> set[str]:
    """The collection's findings; returns the oracle items named as xfail."""
    config, manifest = target.config, target.config.manifest
    collected = collect_inventory(target, today, timeout)
    _xfails(collected.xfails, manifest.path, found)
    for note in collected.notes:
        found.problem(
            "GENERATED_FILES",
            note.removeprefix("warning GENERATED_FILES: "),
            "list them under generated_files in the manifest",
        )
    for nodeid, message in collected.collection_errors[:5]:
        first = (message.strip().splitlines() or [""])[-1]
        found.problem(
            "COLLECTION_ERROR",
            f"{nodeid or '<session>'}: {first}",
            "make it collect (a missing generated file: generated_files in the manifest)",
        )
    missing = uncollected_trusted(
        target.git, target.commit, manifest, (r.facts.path for r in collected.records)
    )
    for path, why in missing.items():
        found.problem("NOT_COLLECTED", f"{path}: {why}", NOT_COLLECTED_FIX)
    classes = {r.cls for r in collected.records}
    if TrustClass.ORACLE not in classes:
        found.problem(
            "NO_ORACLE",
            "no oracle item is collected",
            f"point classes.oracle.globs in {manifest.path} at human-owned tests",
        )
    if manifest.require_property_class and TrustClass.PROPERTY not in classes:
        why = property_empty_because(config, missing)
        found.problem(
            "NO_PROPERTY",
            f"the property class is empty ({why})",
            f"add a seeded property test, or set require_property_class: false in {manifest.path}",
        )
    for freeze in config.freezes.expired(today):
        found.problem("FREEZE_EXPIRED", freeze.expired_message(), "andgate freeze prune")
    for problem in config.freezes.invalid:
        found.problem("FREEZE_INVALID", problem.message, f"fix {manifest.frozen_flake.freeze_file}")
    return {nodeid for nodeid, _ in collected.xfails}


MAX_NAMED = 5


def _xfails(xfails: Iterable[tuple[str, str]], manifest: str, found: Findings) -> None:
    """One problem per oracle file whose items an xfail mark makes xfail here."""
    by_file: dict[str, list[str]] = {}
    for nodeid, reason in xfails:
        shown = f"{nodeid} (xfail: {reason})" if reason else nodeid
        by_file.setdefault(nodeid.partition("::")[0], []).append(shown)
    for path, items in by_file.items():
        more = len(items) - MAX_NAMED
        named = ", ".join(items[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")
        found.problem(
            "ORACLE_FAILED",
            f"{path}: {plural(len(items), 'oracle item')} marked xfail, {named}: {XFAIL_WHY}",
            f"take {path} out of classes.oracle.globs in {manifest} (its items stay "
            f"untrusted), or {XFAIL_FIX}",
        )


def _known_bad(target: Target, jobs: int, timeout: float, found: Findings, named: set[str]) -> None:
    config = target.config
    manifest = config.manifest
    if not manifest.oracle_must_fail_known_bad:
        return
    if not config.known_bad:
        found.problem(
            "NO_KNOWN_BAD",
            f"no *.patch fixture under {manifest.known_bad_dir}",
            f"andgate known-bad mutants --write 3, then move one into {manifest.known_bad_dir}/",
        )
        return
    with target_pool(target) as (scratch, pool):
        plan = head_plan(target.git, target.commit, config, scratch)
        if not plan.trusted_oracle_files:
            return  # NO_ORACLE, reported above
        # replay-known-bad's default item limit: a hang costs a minute, not --timeout
        environment = run_environment(target, plan, DEFAULT_ITEM_TIMEOUT)
        limits = (jobs, timeout)
        baseline, replays = _replay_all(plan, target, pool, scratch, limits, environment)
    # The xfail items the collection named are not named twice; the first other one is.
    not_passing = [(n, what) for n, what in baseline.not_passing if n not in named]
    if baseline.error:
        found.problem("ORACLE_FAILED", baseline.error, "fix the oracle class on this tree first")
    elif not_passing:
        nodeid, what = not_passing[0]
        if what in (Outcome.XFAILED.value, Outcome.XPASSED.value):
            found.problem(
                "ORACLE_FAILED",
                f"{nodeid} {what} (pytest.xfail(), or a mark added while collecting): {XFAIL_WHY}",
                f"take {nodeid.partition('::')[0]} out of classes.oracle.globs, or {XFAIL_FIX}",
            )
        else:
            what = f"{nodeid} {what} does not pass"
            found.problem("ORACLE_FAILED", what, "fix the oracle class on this tree first")
    for replay in replays:
        if replay.status is ReplayStatus.STALE:
            found.problem(
                "KNOWN_BAD_STALE",
                f"{replay.name} does not apply: {replay.problem}",
                f"andgate known-bad refresh {replay.name}, in the change that moved the code",
            )
        elif replay.status is ReplayStatus.GREEN:
            found.problem(
                "ORACLE_NEUTRALIZED",
                f"{replay.name} leaves every oracle item passing",
                "strengthen the oracle, or replace the fixture",
            )
        elif replay.status is ReplayStatus.ERROR:
            found.problem("GATE_ERROR", f"{replay.name}: {replay.error}", "see its log")


def _lock(git: Git, target: Target, commit: str | None, found: Findings) -> None:
    manifest = target.config.manifest
    if commit is None:
        lock = locks.parse_lock(read_file(git.repo, manifest.lock_file), manifest.lock_file)
        digests = fixture_digests(git, manifest.fixtures_dir)
        facts = locks.compare(lock, digests, manifest.fixtures_dir)
        fix = "andgate lock update"
    else:
        facts = locks.lock_facts(git, commit, commit, manifest, approved=False)
        fix = "check that commit out and run andgate lock update there"
    if facts.missing or facts.extra or facts.changed or facts.problems:
        found.problem(
            "LOCK_MISMATCH",
            f"{manifest.lock_file} does not match the files under {manifest.fixtures_dir}",
            fix,
        )
