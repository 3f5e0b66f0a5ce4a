"""`andgate freeze list | add | prune`: manage the freeze file in the working tree.

The freeze file named by the working tree's manifest is read and edited in
place, keeping its comments and order (see `freeze_edit`). `add` refuses a
freeze that could not work: longer than `max_freeze_days`, an id already
frozen, or an id that matches no test collected at HEAD, matches an oracle or
property item (those are never frozen), or matches only tests outside the
frozen_flake globs. Every edit is re-validated before it is written.

Exit codes: 0 done, 2 bad input (the message names the file, field and fix).
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from andgate.commands import options
from andgate.commands.common import (
    collect_inventory,
    open_repo,
    open_target,
    plural,
    read_file,
    table,
    worktree_config,
    worktree_manifest,
    write_atomic,
)
from andgate.errors import BadInput, FreezeEditError, FreezeFileError, guarded
from andgate.exitcodes import Exit
from andgate.git import Git
from andgate.plugin.classify import classify_item, freeze_matches
from andgate.process.requests import DEFAULT_TIMEOUT
from andgate.records import InventoryRecord, TrustClass
from andgate.trust.freeze import Freeze, FreezeSet, parse_freezes
from andgate.trust.freeze_edit import add_entry, remove_entries
from andgate.trust.manifest import Manifest, load_yaml

NEW_FILE_HEADER = (
    "# Frozen flaky tests: their outcome is logged and ignored until `expires`.\n"
    "# Manage with `andgate freeze list | add | prune`; every field is required.\n"
)
TRUSTED = {TrustClass.ORACLE, TrustClass.PROPERTY}


@dataclass(frozen=True)
class FreezeFile:
    manifest: Manifest
    path: str
    text: str | None
    freezes: FreezeSet

    @property
    def file_problem(self) -> str | None:
        """A problem with the file as a whole (not one entry)."""
        return next((p.message for p in self.freezes.invalid if p.index is None), None)


def load_freeze_file(root: Path, manifest_path: str) -> FreezeFile:
    manifest = worktree_manifest(root, manifest_path)
    path = manifest.frozen_flake.freeze_file
    raw = read_file(root, path)
    try:
        text = None if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text; save it as UTF-8") from None
    return FreezeFile(manifest, path, text, parse_freezes(text, path, manifest.max_freeze_days))


def _guard(run: Callable[[], int]) -> int:
    return guarded(run, Exit.COULD_NOT_RUN)


# -- list ---------------------------------------------------------------------------------


def run_freeze_list(repo: Path, *, manifest: str, today: dt.date) -> int:
    return _guard(lambda: _list(open_repo(repo).repo, manifest, today))


def _list(root: Path, manifest: str, today: dt.date) -> int:
    ff = load_freeze_file(root, manifest)
    if ff.text is None:
        print(f"andgate freeze list: no freeze file at {ff.path}: nothing is frozen")
        return Exit.OK
    valid = ff.freezes.valid
    print(f"andgate freeze list: {ff.path}, {plural(len(valid), 'freeze')}, today {today}")
    if valid:
        rows = [("id", "owner", "expires", "days left", "reason")]
        rows += [
            (f.id, f.owner, f.expires.isoformat(), _days_left(f, today), f.reason) for f in valid
        ]
        print("\n".join(table(rows)))
    for problem in ff.freezes.invalid:
        print(f"  INVALID  {problem.message}")
    if ff.freezes.invalid:
        return Exit.COULD_NOT_RUN
    return Exit.OK


def _days_left(freeze: Freeze, today: dt.date) -> str:
    left = freeze.days_left(today)
    if left > 0:
        return str(left)
    return "EXPIRED today" if left == 0 else f"EXPIRED {plural(-left, 'day')} ago"


# -- add ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewFreeze:
    id: str
    reason: str
    owner: str
    days: int | None


def run_freeze_add(
    repo: Path,
    new: NewFreeze,
    *,
    manifest: str,
    today: dt.date,
    timeout: float = DEFAULT_TIMEOUT,
) -> int:
    return _guard(lambda: _add(open_repo(repo), new, manifest, today, timeout))


def _add(git: Git, new: NewFreeze, manifest: str, today: dt.date, timeout: float) -> int:
    new = _checked_fields(new)
    ff = load_freeze_file(git.repo, manifest)
    if ff.file_problem:
        raise BadInput(ff.file_problem)
    days = _checked_days(new.days, ff.manifest)
    if any(new.id == e for e in _raw_ids(ff)):
        raise BadInput(
            f"{ff.path}: {new.id!r} already has a freeze entry; `andgate freeze prune` "
            "removes it once expired, or edit it by hand"
        )
    frozen = _frozen_items(git, new.id, manifest, today, timeout)
    entry = {
        "id": new.id,
        "reason": new.reason,
        "first_seen": today.isoformat(),
        "expires": (today + dt.timedelta(days=days)).isoformat(),
        "owner": new.owner,
    }
    text = ff.text if ff.text is not None else NEW_FILE_HEADER
    written = add_entry(text, entry, ff.path)
    _verify_edit(ff, written, expect=(*ff.freezes.valid, _as_freeze(entry)))
    write_atomic(git.repo / ff.path, written.encode("utf-8"), repo=git.repo)
    print(
        f"andgate freeze add: {ff.path}: froze {new.id!r} until {entry['expires']} "
        f"({plural(days, 'day')}), owner {new.owner}"
    )
    print("\n".join(table([(r.facts.nodeid, "frozen_flake") for r in frozen])))
    print("Commit it; check blocks the commit as TRUST_ROOT_CHANGED until an owner approves.")
    return Exit.OK


def _checked_fields(new: NewFreeze) -> NewFreeze:
    fields = {"ID": new.id, "--reason": new.reason, "--owner": new.owner}
    for flag, value in fields.items():
        if not value.strip():
            raise BadInput(f"freeze add: {flag} is empty; give a non-empty value")
        if any(c in value for c in "\r\n"):
            raise BadInput(f"freeze add: {flag} spans several lines; give one line")
    return replace(new, id=new.id.strip(), reason=new.reason.strip(), owner=new.owner.strip())


def _checked_days(days: int | None, manifest: Manifest) -> int:
    limit = manifest.max_freeze_days
    if days is None:
        return limit
    if days < 1:
        raise BadInput(f"freeze add: --days {days} must be at least 1")
    if days > limit:
        raise BadInput(
            f"freeze add: --days {days} is over max_freeze_days ({limit}) in "
            f"{manifest.path}; freeze for at most {limit} days, or fix the test"
        )
    return days


def _raw_ids(ff: FreezeFile) -> list[str]:
    """Every entry's id as written, valid or not (a duplicate would be invalid)."""
    if ff.text is None:
        return []
    try:
        data = load_yaml(ff.text, ff.path, FreezeFileError)
    except FreezeFileError as exc:
        raise BadInput(str(exc)) from None
    entries = data.get("freezes") if isinstance(data, Mapping) else None
    return [
        e["id"].strip() if isinstance(e, Mapping) and isinstance(e.get("id"), str) else ""
        for e in (entries if isinstance(entries, list) else [])
    ]


def _frozen_items(
    git: Git, freeze_id: str, manifest: str, today: dt.date, timeout: float
) -> list[InventoryRecord]:
    """The items the new freeze would freeze at HEAD; refuse one that freezes none."""
    config = worktree_config(git.repo, manifest)
    target = replace(open_target(git.repo, manifest, None, takes_rev=False), config=config)
    collected = collect_inventory(target, today, timeout)
    matched = [r for r in collected.records if freeze_matches(freeze_id, r.facts)]
    if not matched:
        raise BadInput(
            f"freeze add: {freeze_id!r} matches no test collected in {target.what}; "
            "give a node id (path::name), a file path, a file stem or a function name"
        )
    trusted = [r for r in matched if r.cls in TRUSTED]
    if trusted:
        r = trusted[0]
        raise BadInput(
            f"freeze add: {freeze_id!r} matches the {r.cls} item {r.facts.nodeid}; "
            "oracle and property tests are never frozen: fix the test, or use a more "
            "precise id"
        )
    rules = replace(collected.rules, live_freezes=(freeze_id,))
    frozen = [r for r in matched if classify_item(r.facts, rules)[0] is TrustClass.FROZEN_FLAKE]
    if not frozen:
        raise BadInput(
            f"freeze add: {freeze_id!r} matches {matched[0].facts.nodeid}, which no "
            f"classes.frozen_flake.globs pattern in {config.manifest.path} covers, so the "
            "freeze would freeze nothing; widen the globs first"
        )
    return frozen


def _as_freeze(entry: Mapping[str, str]) -> Freeze:
    return Freeze(
        entry["id"],
        entry["reason"],
        dt.date.fromisoformat(entry["first_seen"]),
        dt.date.fromisoformat(entry["expires"]),
        entry["owner"],
    )


def _verify_edit(ff: FreezeFile, text: str, *, expect: tuple[Freeze, ...]) -> None:
    """The edited text must parse to exactly the intended entries, and break no
    other entry; otherwise nothing is written."""
    after = parse_freezes(text, ff.path, ff.manifest.max_freeze_days)
    if after.valid != expect or len(after.invalid) != len(ff.freezes.invalid):
        raise FreezeEditError(
            f"{ff.path}: andgate could not edit this file's layout safely and wrote "
            "nothing; edit it by hand"
        )


# -- prune --------------------------------------------------------------------------------


def run_freeze_prune(repo: Path, *, manifest: str, today: dt.date) -> int:
    return _guard(lambda: _prune(open_repo(repo).repo, manifest, today))


def _prune(root: Path, manifest: str, today: dt.date) -> int:
    ff = load_freeze_file(root, manifest)
    if ff.file_problem:
        raise BadInput(ff.file_problem)
    expired = ff.freezes.expired(today)
    if ff.text is None or not expired:
        print(f"andgate freeze prune: no expired freeze in {ff.path} (today {today})")
        return Exit.OK
    gone = {f.id for f in expired}
    indexes = [i for i, freeze_id in enumerate(_raw_ids(ff)) if freeze_id in gone]
    written = remove_entries(ff.text, indexes, ff.path)
    _verify_edit(ff, written, expect=tuple(f for f in ff.freezes.valid if f.id not in gone))
    write_atomic(root / ff.path, written.encode("utf-8"), repo=root)
    print(f"andgate freeze prune: removed {plural(len(expired), 'expired freeze')} from {ff.path}:")
    rows = [
        (f.id, f"expired {f.expires.isoformat()}", f"owner {f.owner}", f.reason) for f in expired
    ]
    print("\n".join(table(rows)))
    return Exit.OK


# -- the command line ---------------------------------------------------------------------


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Manage the freeze file in the working tree, keeping its comments and order. Exit 0 "
        "done, 2 bad input."
    )
    actions = parser.add_subparsers(dest="freeze_command", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list",
        help="show each freeze with its days left",
        description="Show each freeze "
        "with its owner, expiry and days left; expired ones are marked.",
    )
    add = actions.add_parser(
        "add",
        help="freeze a flaky test",
        description="Append a freeze entry (first_seen today). Refused when longer than "
        "max_freeze_days, or when ID matches no test collected at HEAD, or matches an "
        "oracle or property item.",
    )
    add.add_argument("id", metavar="ID", help="node id, file path, file stem or function name")
    add.add_argument("--reason", required=True, help="why the test is frozen")
    add.add_argument("--owner", required=True, help="who fixes it before it expires")
    add.add_argument(
        "--days",
        type=options.positive_int,
        default=None,
        metavar="N",
        help="how long the freeze lasts (default and limit: max_freeze_days)",
    )
    options.add_timeout(add)
    prune = actions.add_parser(
        "prune",
        help="remove expired freezes",
        description="Remove expired freeze entries (expires <= today) and print what was removed.",
    )
    for action, handler in ((listing, _list_args), (add, _add_args), (prune, _prune_args)):
        options.add_repo(action)
        options.add_manifest(action)
        options.add_today(action)
        options.handled_by(action, handler)


def _list_args(args: argparse.Namespace) -> int:
    return run_freeze_list(args.repo, manifest=args.manifest, today=options.today(args))


def _add_args(args: argparse.Namespace) -> int:
    new = NewFreeze(args.id, args.reason, args.owner, args.days)
    return run_freeze_add(
        args.repo, new, manifest=args.manifest, today=options.today(args), timeout=args.timeout
    )


def _prune_args(args: argparse.Namespace) -> int:
    return run_freeze_prune(args.repo, manifest=args.manifest, today=options.today(args))
