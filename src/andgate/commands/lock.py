"""`andgate lock verify` / `andgate lock update`: the fixture lock in the working tree.

The lock pins the bytes of every file under `fixtures_dir`, one
`<sha256>  <path>` line per file, sorted, exactly as `sha256sum` writes them
(so `cd fixtures_dir && sha256sum -c lock` checks it too). Unlike `check`,
which compares committed trees, these commands look at the files a maintainer
is about to commit: tracked files plus untracked ones git does not ignore
(an ignored `__pycache__` under the fixtures must not end up in the lock).

`lock verify --rev REV` checks a commit instead, as `check` would: REV's lock against
REV's committed fixtures, with REV's manifest. `lock update` writes the working tree's
lock for the working tree's fixtures, so it refuses `--rev` (one line, exit 2): a lock
for another commit's fixtures would be wrong for the tree it lands in. To repair REV's
lock, check REV out and run `lock update` there.

Exit codes: 0 the lock matches (or was written), 1 mismatch, 2 could not run.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from andgate.commands import options
from andgate.commands.common import open_repo, plural, read_file, worktree_manifest, write_atomic
from andgate.errors import AndgateError, BadInput
from andgate.exitcodes import Exit
from andgate.git import Git, decode_path
from andgate.records import LockFacts
from andgate.trust import locks
from andgate.trust.config import load_manifest_at
from andgate.trust.manifest import Manifest
from andgate.trust.paths import is_under

# Said on every first line, as by every maintainer command: what was looked at.
WHERE = "; the working tree, uncommitted files included"


def run_lock_verify(repo: Path, *, manifest: str, rev: str | None = None) -> int:
    git = open_repo(repo)
    if rev is not None:
        return _verify_commit(git, manifest, rev)
    config = worktree_manifest(git.repo, manifest)
    lock = locks.parse_lock(read_file(git.repo, config.lock_file), config.lock_file)
    actual = fixture_digests(git, config.fixtures_dir)
    facts = locks.compare(lock, actual, config.fixtures_dir)
    return _report_verify(config, facts, len(actual), WHERE, "run `andgate lock update`")


def _verify_commit(git: Git, manifest_path: str, rev: str) -> int:
    """REV's lock against REV's committed fixtures, with REV's manifest (as `check`)."""
    commit = git.resolve(rev, what="--rev")
    config = load_manifest_at(git, commit, manifest_path)
    facts = locks.lock_facts(git, commit, commit, config, approved=False)
    files = len(committed_fixtures(git, commit, config.fixtures_dir))
    where = f"; --rev {rev} ({commit[:12]}), as committed"
    fix = f"check out {rev} and run `andgate lock update` there"
    return _report_verify(config, facts, files, where, fix)


def _report_verify(config: Manifest, facts: LockFacts, files: int, where: str, fix: str) -> int:
    if _matches(facts):
        print(
            f"andgate lock verify: {config.lock_file} matches "
            f"{plural(files, 'file')} under {config.fixtures_dir}{where}"
        )
        return Exit.OK
    print(f"andgate lock verify: {config.lock_file} does not match {config.fixtures_dir}{where}:")
    for line in _difference(facts):
        print(f"  {line}")
    print(
        f"If the fixtures changed on purpose, {fix}; committing "
        "fixtures or the lock needs an owner's approval (check: ORACLE_AUTHORSHIP)."
    )
    return Exit.BLOCK


def committed_fixtures(git: Git, commit: str, fixtures_dir: str) -> list[str]:
    """The files under `fixtures_dir` in a commit's tree."""
    return [
        e.path
        for e in git.ls_tree(commit, [fixtures_dir])
        if e.kind == "blob" and is_under(e.path, fixtures_dir)
    ]


def run_lock_update(repo: Path, *, manifest: str, rev: str | None = None) -> int:
    if rev is not None:
        raise BadInput(
            f"lock update --rev {rev}: the lock is written in the working tree, for the "
            "fixtures there; check that commit out and run `andgate lock update` there "
            f"(`andgate lock verify --rev {rev}` says whether its lock matches)"
        )
    git = open_repo(repo)
    config = worktree_manifest(git.repo, manifest)
    old_text = read_file(git.repo, config.lock_file)
    actual = fixture_digests(git, config.fixtures_dir)
    new_text = locks.format_lock(actual).encode("utf-8", "surrogateescape")
    if old_text == new_text:
        print(
            f"andgate lock update: {config.lock_file} is up to date "
            f"({plural(len(actual), 'file')} under {config.fixtures_dir}){WHERE}"
        )
        return Exit.OK
    old = locks.parse_lock(old_text, config.lock_file)
    facts = locks.compare(old, actual, config.fixtures_dir)
    write_atomic(git.repo / config.lock_file, new_text, repo=git.repo)
    print(
        f"andgate lock update: {'wrote' if old.exists else 'created'} {config.lock_file} "
        f"({plural(len(actual), 'file')} under {config.fixtures_dir}){WHERE}"
    )
    for line in _difference(replace(facts, problems=())):
        print(f"  {line}")
    return Exit.OK


def fixture_digests(git: Git, fixtures_dir: str) -> dict[str, str]:
    """sha256 of every file under `fixtures_dir` that a commit would carry,
    keyed by its path relative to `fixtures_dir`."""
    raw = git.run(
        "ls-files",
        "-z",
        "--cached",
        "--others",
        "--exclude-standard",
        "--",
        f":(literal){fixtures_dir}",
    ).stdout
    prefix = fixtures_dir.rstrip("/") + "/"
    digests = {}
    for path in sorted({decode_path(p) for p in raw.split(b"\0") if p}):
        disk = git.repo / path
        if not is_under(path, fixtures_dir) or not disk.is_file():
            continue  # a tracked file deleted on disk is simply not there any more
        rel = path[len(prefix) :]
        if "\n" in rel or "\\" in rel:
            raise AndgateError(
                f"{path}: a fixture name with a newline or backslash cannot be written "
                "as a sha256sum line; rename the file"
            )
        digests[rel] = locks.sha256(disk.read_bytes())
    return digests


def _matches(facts: LockFacts) -> bool:
    return not (facts.missing or facts.extra or facts.changed or facts.problems)


def _difference(facts: LockFacts) -> list[str]:
    lines = [f"added    {p} (not in the lock)" for p in facts.extra]
    lines += [f"removed  {p} (in the lock, no such file)" for p in facts.missing]
    lines += [f"changed  {p} (sha256 differs from the lock)" for p in facts.changed]
    lines += [f"problem  {p}" for p in facts.problems]
    return lines


# -- the command line ---------------------------------------------------------------------


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "The fixture lock pins the sha256 of every file under fixtures_dir (sha256sum "
        "format). Both commands use the working tree (verify --rev: a commit's lock and "
        "fixtures). Exit 0 match, 1 mismatch, 2 could not run."
    )
    actions = parser.add_subparsers(dest="lock_command", metavar="ACTION", required=True)
    for name, text, handler in (
        ("verify", "list fixture files added, removed or changed since the lock", _verify),
        ("update", "rewrite the lock from the fixture files (sorted, deterministic)", _update),
    ):
        action = actions.add_parser(name, help=text, description=f"{text[0].upper()}{text[1:]}.")
        options.add_repo(action)
        options.add_manifest(action)
        options.add_rev(
            action,
            "verify: check this commit's lock against its committed fixtures (default: the "
            "working tree); update refuses it: it writes the working tree's lock",
        )
        options.handled_by(action, handler)


def _verify(args: argparse.Namespace) -> int:
    return run_lock_verify(args.repo, manifest=args.manifest, rev=args.rev)


def _update(args: argparse.Namespace) -> int:
    return run_lock_update(args.repo, manifest=args.manifest, rev=args.rev)
