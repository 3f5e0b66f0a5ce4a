"""`andgate dispute NODEID --reason TEXT` and `andgate dispute --list`: the sanctioned way
for an agent (or anyone writing a change) to say that an oracle test contradicts the
specification, instead of editing it (contract section 4, docs/disputes.md).

The entry goes into the working tree's disputes file (`disputes_file` of base's manifest,
where `check` reads it), only after the node id proved to be exactly one oracle item
collected at base, with base's own trust config, in a temporary worktree. Nothing else
is written. A dispute never lets a change in: `check` blocks with ORACLE_DISPUTED.

Exit codes: 0 written or listed; 1 refused (not exactly one oracle item at base, or
already disputed); 2 could not run (bad input, malformed disputes file, no repository).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path

from andgate.commands import options
from andgate.commands.common import (
    Target,
    collect_inventory,
    open_repo,
    plural,
    read_file,
    table,
)
from andgate.errors import AndgateError, BadInput, guarded
from andgate.exitcodes import Exit
from andgate.git import Git
from andgate.process.generated import read_generated
from andgate.process.requests import DEFAULT_TIMEOUT
from andgate.records import InventoryRecord, TrustClass
from andgate.trust.config import BaseConfig, load_base_config
from andgate.trust.disputes import (
    MAX_REASON,
    DisputeEntry,
    DisputesFileError,
    closest,
    items_under,
    parse_disputes,
    with_entry,
)
from andgate.trust.refs import resolve_base
from andgate.verdict import escaped

NEXT = (
    "Commit the file with your change and stop: `andgate check` blocks it with "
    "ORACLE_DISPUTED and shows your reason to the oracle's owner, who fixes the oracle "
    "or rejects the dispute."
)


class Refused(AndgateError):
    """The node id is not one oracle item at base, or is disputed already (exit 1)."""


@dataclass(frozen=True)
class Base:
    sha: str
    how: str  # how it was chosen, for the first line

    def describe(self) -> str:
        return f"base {self.sha[:12]} ({self.how})"


def run_dispute_add(
    repo: Path,
    nodeid: str,
    reason: str,
    *,
    base: str | None = None,
    manifest: str,
    timeout: float = DEFAULT_TIMEOUT,
) -> int:
    def add() -> int:
        try:
            new = _checked_input(nodeid, reason)  # before anything else, a repository too
            return _add(open_repo(repo), new, base, manifest, timeout)
        except Refused as exc:
            print(f"andgate dispute: {exc}", file=sys.stderr)
            return Exit.BLOCK

    return guarded(add, Exit.COULD_NOT_RUN)


def run_dispute_list(repo: Path, *, base: str | None = None, manifest: str) -> int:
    return guarded(lambda: _list(open_repo(repo), base, manifest), Exit.COULD_NOT_RUN)


def choose_base(git: Git, ref: str | None) -> Base:
    """`--base`, else the merge-base with the upstream default branch (as `check`),
    else HEAD: an agent's sandbox often has no remote."""
    if ref:
        return Base(git.resolve(ref, what="--base"), f"--base {ref}")
    try:
        choice = resolve_base(git, None, "HEAD")
        return Base(choice.sha, choice.how)
    except AndgateError:
        return Base(git.resolve("HEAD", what="HEAD"), "HEAD: no upstream branch; pass --base REF")


# -- add ----------------------------------------------------------------------------------


def _add(git: Git, new: DisputeEntry, base_ref: str | None, manifest: str, timeout: float) -> int:
    base = choose_base(git, base_ref)
    config = load_base_config(git, base.sha, manifest)
    path = config.manifest.disputes_file
    entries = _entries_in_worktree(git.repo, path)
    if any(e.nodeid == new.nodeid for e in entries):
        raise Refused(f"{path}: {new.nodeid} is disputed already; edit its reason there")
    print(f"andgate dispute: {base.describe()}, disputes file {path} in the working tree")
    record = _oracle_item_at(git, base, config, new.nodeid, timeout)
    written = with_entry(entries, new)
    if parse_disputes(written, path) != (*entries, new):  # never write what check would refuse
        raise BadInput(f"{path}: andgate could not write this entry safely; edit the file by hand")
    _write(git.repo, path, written)
    print(f"andgate dispute: {path}: disputed the oracle item {record.facts.nodeid}")
    print(f"  reason: {escaped(new.reason)}")
    print(NEXT)
    return Exit.OK


def _checked_input(nodeid: str, reason: str) -> DisputeEntry:
    nodeid, reason = nodeid.strip(), reason.strip()
    if not nodeid:
        raise BadInput("dispute: NODEID is empty; give the oracle item's node id (path::test)")
    if not reason:
        raise BadInput(
            "dispute: --reason is empty; say which part of the specification the test contradicts"
        )
    if not nodeid.isprintable() or any(not (c.isprintable() or c in "\n\t") for c in reason):
        raise BadInput("dispute: NODEID or --reason holds a control character; write plain text")
    if len(reason) > MAX_REASON:
        raise BadInput(
            f"dispute: --reason has {len(reason)} characters; keep it under {MAX_REASON}"
        )
    return DisputeEntry(nodeid, reason)


def _oracle_item_at(
    git: Git, base: Base, config: BaseConfig, nodeid: str, timeout: float
) -> InventoryRecord:
    """The one oracle item base collects under this exact node id, else a refusal
    that says what the id is instead."""
    # base's tree as committed, installed project redirected, and as check's runs of
    # base: the checkout's generated files that are data only (a version file)
    checkout = read_generated(
        git, config.manifest.generated_files, git.resolve("HEAD", what="HEAD")
    )
    at_base = Target(
        git, base.sha, base.sha, base.describe(), config, checkout.for_base(config.test_side)[0]
    )
    collected = collect_inventory(at_base, dt.date.today(), timeout)
    oracle = [r for r in collected.records if r.cls == TrustClass.ORACLE]
    exact = [r for r in collected.records if r.facts.nodeid == nodeid]
    if exact and exact[0].cls == TrustClass.ORACLE:
        return exact[0]
    at = f"at {base.describe()}"
    if exact:
        raise Refused(
            f"{nodeid} is in the {exact[0].cls} class {at}, not an oracle item; only oracle "
            "tests are disputed (fix or delete your own tests instead)"
        )
    ids = [r.facts.nodeid for r in oracle]
    under = items_under(nodeid, ids)
    if under:
        raise Refused(
            f"{nodeid} names {plural(len(under), 'oracle item')} {at}, e.g. {under[0]}; "
            "a dispute names exactly one node id (no folders, files, classes or prefixes)"
        )
    errors = f" ({plural(len(collected.collection_errors), 'file')} failed to collect)"
    example = closest(nodeid, ids) or (ids[0] if ids else "tests/oracles/test_x.py::test_y")
    raise Refused(
        f"{nodeid} is not a test collected {at}"
        + (errors if collected.collection_errors else "")
        + f"; give the node id pytest prints (`pytest --collect-only -q`), e.g. {example}"
    )


def _entries_in_worktree(root: Path, path: str) -> tuple[DisputeEntry, ...]:
    try:
        return parse_disputes(read_file(root, path), path)
    except DisputesFileError as exc:
        raise BadInput(f"{exc} (fix the file before adding to it)") from None


def _write(root: Path, rel: str, text: str) -> None:
    """Into the repository only, never through a symlink (a planted `.andgate` link)."""
    target = root
    for part in Path(rel).parts:
        target = target / part
        if target.is_symlink():
            raise BadInput(f"{rel}: {target} is a symbolic link; andgate never writes through one")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.andgate-tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)


# -- list ---------------------------------------------------------------------------------


def _list(git: Git, base_ref: str | None, manifest: str) -> int:
    base = choose_base(git, base_ref)
    path = load_base_config(git, base.sha, manifest).manifest.disputes_file
    text = read_file(git.repo, path)
    if text is None:
        print(f"andgate dispute --list: no disputes file at {path}: nothing is disputed")
        return Exit.OK
    try:
        entries = parse_disputes(text, path)
    except DisputesFileError as exc:
        raise BadInput(str(exc)) from None
    print(f"andgate dispute --list: {path}, {plural(len(entries), 'dispute')}")
    if entries:
        rows = [("nodeid", "reason")] + [(e.nodeid, escaped(e.reason, 120)) for e in entries]
        print("\n".join(table(rows)))
    return Exit.OK


# -- the command line ---------------------------------------------------------------------


def declare(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Record in the disputes file (disputes_file of base's manifest, default "
        ".andgate/disputes.yaml, in the working tree) that the oracle item NODEID contradicts "
        "the specification, after checking that NODEID is exactly one oracle item collected "
        "at base. Commit the file with the change: `andgate check` then blocks with "
        "ORACLE_DISPUTED and shows the reason to the oracle's owner, who fixes the oracle or "
        "rejects the dispute. Never edit an oracle test or its fixtures instead. Exit 0 "
        "written or listed, 1 refused (not one oracle item at base, or disputed already), "
        "2 could not run."
    )
    parser.add_argument(
        "nodeid", nargs="?", metavar="NODEID", help="the oracle item, as pytest prints it"
    )
    parser.add_argument(
        "--reason", metavar="TEXT", help="which part of the specification it contradicts"
    )
    parser.add_argument("--list", action="store_true", help="show the disputes in the working tree")
    parser.add_argument(
        "--base",
        metavar="REF",
        help="the commit the change is based on (default: merge-base with the upstream "
        "default branch, else HEAD)",
    )
    options.add_repo(parser)
    options.add_manifest(parser)
    options.add_timeout(parser)
    options.handled_by(parser, _dispute)


def _dispute(args: argparse.Namespace) -> int:
    if args.list:
        if args.nodeid or args.reason:
            raise BadInput("dispute --list takes no NODEID or --reason; run it alone")
        return run_dispute_list(args.repo, base=args.base, manifest=args.manifest)
    if not args.nodeid or args.reason is None:
        raise BadInput("dispute: give NODEID and --reason TEXT (or --list)")
    return run_dispute_add(
        args.repo,
        args.nodeid,
        args.reason,
        base=args.base,
        manifest=args.manifest,
        timeout=args.timeout,
    )
