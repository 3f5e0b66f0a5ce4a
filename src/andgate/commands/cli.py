"""The `andgate` command line: argparse declarations and dispatch, nothing else.

Each subcommand is a typed function elsewhere that takes explicit arguments and
returns an exit code, so tests call it directly. User errors surface as one
line on stderr; "the gate said block" (1) and "the gate could not run" (2) are
different exit codes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import math
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from andgate import __version__
from andgate.commands.check import cmd_check, cmd_combine
from andgate.errors import BadInput, Interrupted, guarded
from andgate.exitcodes import (
    CheckExit,
    ClassifyExit,
    DemoExit,
    DisputeExit,
    DoctorExit,
    FreezeExit,
    HarvestExit,
    InitExit,
    LockExit,
    ReplayExit,
)
from andgate.plugin import isolation
from andgate.process.requests import DEFAULT_ITEM_TIMEOUT, DEFAULT_TIMEOUT, ITEM_TIMEOUT_FLOOR
from andgate.process.run import fix_mmap_threshold
from andgate.trust.manifest import DEFAULT_MANIFEST

if TYPE_CHECKING:  # imported when --shard is parsed, not at every start
    from andgate.check.units import Split


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date; use YYYY-MM-DD") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 1")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 0")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not math.isfinite(value) or value <= 0:  # nan and inf would never time out
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds > 0")
    return value


def _default_jobs() -> int:
    """$ANDGATE_JOBS (a CI setting, like --jobs in every call), else the CPUs."""
    try:
        return max(1, int(os.environ.get("ANDGATE_JOBS", "")))
    except ValueError:
        return os.cpu_count() or 1


def _add_repo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="repository to gate (default: the current directory)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="andgate",
        description="A merge gate for pytest projects: sorts every test into a trust class "
        "and allows a change only when every class holds.",
    )
    parser.add_argument("--version", action="version", version=f"andgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = sub.add_parser(
        "check",
        help="run the whole gate on a change (base..head)",
        description="Run the gate on the change base..head and print the "
        "verdict. Exit 0 allow, 1 block, 2 could not run.",
    )
    check.add_argument(
        "--base",
        metavar="REF",
        help="the commit the change is based on (default: merge-base with "
        "the upstream default branch)",
    )
    check.add_argument(
        "--head",
        default="HEAD",
        metavar="REF",
        help="the change's commit (default: HEAD; uncommitted work is not gated)",
    )
    _add_repo(check)
    check.add_argument(
        "--manifest",
        default=DEFAULT_MANIFEST,
        metavar="PATH",
        help=f"trust manifest path in the repository (default: {DEFAULT_MANIFEST})",
    )
    check.add_argument(
        "--approved-by",
        action="append",
        default=[],
        metavar="NAME",
        help="an owner who approved trust-root changes (repeatable; also ANDGATE_APPROVED_BY=a,b)",
    )
    check.add_argument(
        "--today",
        type=_date,
        default=None,
        metavar="YYYY-MM-DD",
        help="the date freezes are judged against (default: today)",
    )
    check.add_argument(
        "--artifacts",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to write the artifacts (default: artifacts/ in the repo)",
    )
    check.add_argument(
        "--jobs",
        type=_positive_int,
        default=_default_jobs(),
        metavar="N",
        help="pytest processes to run at once (default: $ANDGATE_JOBS, else the number of CPUs)",
    )
    check.add_argument(
        "--timeout",
        type=_positive_float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"limit for each pytest process in seconds (default: {DEFAULT_TIMEOUT:.0f})",
    )
    check.add_argument(
        "--item-timeout",
        type=_positive_float,
        default=DEFAULT_ITEM_TIMEOUT,
        metavar="S",
        help=f"limit for each test item in seconds, at least {ITEM_TIMEOUT_FLOOR:.0f}: an "
        "item past it fails, named, and the rest of its class still runs "
        f"(default: {DEFAULT_ITEM_TIMEOUT:.0f})",
    )
    # Tests only: a lower floor, so that a test of a hanging item takes seconds.
    check.add_argument(
        "--item-timeout-floor", type=float, default=ITEM_TIMEOUT_FLOOR, help=argparse.SUPPRESS
    )
    check.add_argument(
        "--hypothesis-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed for Hypothesis property tests (default: derived from base)",
    )
    check.add_argument(
        "--no-cache",
        action="store_true",
        help="ignore the killer cache (known-bad replays run the whole oracle class)",
    )
    check.add_argument(
        "--approvals",
        choices=("none", "github-reviews"),
        default="none",
        help="github-reviews: owners' approving pull-request reviews count: of the gated head, "
        "or of an earlier commit whose protected files are unchanged (GitHub Actions: "
        "GITHUB_EVENT_PATH, GITHUB_TOKEN); default: none",
    )
    check.add_argument(
        "--json",
        action="store_true",
        help="print the verdict JSON on stdout, and nothing else (annotations go to stderr)",
    )
    check.add_argument(
        "--quiet", action="store_true", help="no status lines on stderr while the phases run"
    )
    check.add_argument(
        "--no-discrimination",
        action="store_true",
        help="skip the discrimination report (do the tests the change adds fail against "
        "known-bad fixtures or mutants of the lines it touched?)",
    )
    check.add_argument(
        "--discrimination-budget",
        type=_positive_float,
        default=None,
        metavar="S",
        help="seconds the discrimination report may run on after the test classes end; "
        "what it did not get to is reported (default: a quarter of the classes' time, at "
        "least 5, at most 60)",
    )
    check.add_argument(
        "--shard",
        type=_split,
        default=None,
        metavar="I/N",
        help="run part I of N of the check (a CI matrix job) and write bundle.json to the "
        "artifacts folder; `andgate combine` gives the verdict",
    )
    _add_combine(sub)

    demo = sub.add_parser(
        "demo",
        help="build a sample repo and gate canned changes",
        description="Build a throwaway sample repository and run the gate "
        "on canned changes; exit 0 when every verdict is as "
        "expected.",
    )
    demo.add_argument("--keep", action="store_true", help="keep the sample repository")
    _add_classify(sub)
    _add_replay_known_bad(sub)
    _add_lock(sub)
    _add_freeze(sub)
    _add_init(sub)
    _add_doctor(sub)
    _add_known_bad(sub)
    _add_dispute(sub)
    return parser


def _split(text: str) -> Split:
    from andgate.check.units import Split

    try:
        return Split.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--shard {text}: ")) from exc


def _add_combine(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "combine",
        help="the verdict from the bundles of N `check --shard I/N` jobs",
        description="Check that the N shard bundles belong to one check and cover every "
        "unit once, then decide as `check` would. Exit 0 allow, 1 block, 2 could not run "
        "(a missing, duplicated or mismatched bundle is GATE_ERROR).",
    )
    parser.add_argument(
        "bundles",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="each shard's artifacts folder (or its bundle.json)",
    )
    _add_repo(parser)
    parser.add_argument(
        "--artifacts",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to write the artifacts (default: artifacts/ in the repo)",
    )
    parser.add_argument("--json", action="store_true", help="print the verdict JSON on stdout")


def _add_manifest(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest",
        default=DEFAULT_MANIFEST,
        metavar="PATH",
        help=f"trust manifest path in the repository (default: {DEFAULT_MANIFEST})",
    )


def _add_today(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--today",
        type=_date,
        default=None,
        metavar="YYYY-MM-DD",
        help="the date freezes are judged against (default: today)",
    )


def _add_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"limit for each pytest process in seconds (default: {DEFAULT_TIMEOUT:.0f})",
    )


def _add_rev(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rev",
        metavar="REV",
        default=None,
        help="judge this commit (default: the working tree as it is, uncommitted edits included)",
    )


def _add_classify(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "classify",
        help="print the trust inventory of the working tree",
        description="Collect the tests of the working tree as it is (uncommitted edits "
        "included; --rev for a commit) in a temporary worktree and classify them with "
        "its trust config; for untrusted items, say why, and say what check would block "
        "on. Exit 0 ok, 2 expired freeze, 3 no oracle item, 4 invalid manifest or "
        "freeze file, 5 could not run.",
    )
    _add_repo(parser)
    _add_rev(parser)
    _add_manifest(parser)
    _add_today(parser)
    _add_timeout(parser)
    parser.add_argument("--json", action="store_true", help="print the inventory as JSON")


def _add_replay_known_bad(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "replay-known-bad",
        help="check that every known-bad fixture makes an oracle test fail",
        description="Apply each known-bad fixture to the working tree as it is "
        "(uncommitted edits included; --rev for a commit), each in its own temporary "
        "worktree, and run the oracle class (the working tree is never touched). Exit 0 "
        "every fixture bit, 1 one stayed green or did not apply, 3 no fixtures.",
    )
    _add_repo(parser)
    _add_rev(parser)
    _add_manifest(parser)
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=_default_jobs(),
        metavar="N",
        help="pytest processes to run at once (default: $ANDGATE_JOBS, else the number of CPUs)",
    )
    _add_timeout(parser)
    _add_item_timeout(parser)


def _add_item_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--item-timeout",
        type=_positive_float,
        default=DEFAULT_ITEM_TIMEOUT,
        metavar="S",
        help=f"limit for each test item in seconds, at least {ITEM_TIMEOUT_FLOOR:.0f} "
        f"(default: {DEFAULT_ITEM_TIMEOUT:.0f})",
    )


def _add_lock(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "lock",
        help="verify or rewrite the fixture lock",
        description="The fixture lock pins the sha256 of every file under fixtures_dir "
        "(sha256sum format). Both commands use the working tree (verify --rev: a commit's "
        "lock and fixtures). Exit 0 match, 1 mismatch, 2 could not run.",
    )
    actions = parser.add_subparsers(dest="lock_command", metavar="ACTION", required=True)
    for name, text in (
        ("verify", "list fixture files added, removed or changed since the lock"),
        ("update", "rewrite the lock from the fixture files (sorted, deterministic)"),
    ):
        action = actions.add_parser(name, help=text, description=f"{text[0].upper()}{text[1:]}.")
        _add_repo(action)
        _add_manifest(action)
        action.add_argument(
            "--rev",
            metavar="REV",
            default=None,
            help="verify: check this commit's lock against its committed fixtures (default: "
            "the working tree); update refuses it: it writes the working tree's lock",
        )


def _add_freeze(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "freeze",
        help="list, add or prune frozen flaky tests",
        description="Manage the freeze file in the working tree, keeping its comments "
        "and order. Exit 0 done, 2 bad input.",
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
        type=_positive_int,
        default=None,
        metavar="N",
        help="how long the freeze lasts (default and limit: max_freeze_days)",
    )
    _add_timeout(add)
    prune = actions.add_parser(
        "prune",
        help="remove expired freezes",
        description="Remove expired freeze entries (expires <= today) and print what was removed.",
    )
    for action in (listing, add, prune):
        _add_repo(action)
        _add_manifest(action)
        _add_today(action)


def _add_init(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "init",
        help="scaffold the trust files in an existing repository",
        description="Write the manifest, oracle and known-bad folders, INVARIANTS.md, the "
        "freeze file and an empty lock; suggest globs for existing test folders and "
        "markers. Never overwrites a file. Exit 0 done, 2 could not write.",
    )
    _add_repo(parser)
    _add_manifest(parser)
    parser.add_argument(
        "--github",
        action="store_true",
        help="also write .github/workflows/andgate.yml (the secure pull-request workflow)",
    )
    parser.add_argument(
        "--agents",
        metavar="FILE",
        help="add a short block to the agent instruction file FILE (e.g. AGENTS.md): never "
        "edit oracle tests; if one contradicts the task, run `andgate dispute` and stop",
    )


def _add_dispute(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "dispute",
        help="say that an oracle test contradicts the specification (instead of editing it)",
        description="Record in the disputes file (disputes_file of base's manifest, default "
        ".andgate/disputes.yaml, in the working tree) that the oracle item NODEID contradicts "
        "the specification, after checking that NODEID is exactly one oracle item collected "
        "at base. Commit the file with the change: `andgate check` then blocks with "
        "ORACLE_DISPUTED and shows the reason to the oracle's owner, who fixes the oracle or "
        "rejects the dispute. Never edit an oracle test or its fixtures instead. Exit 0 "
        "written or listed, 1 refused (not one oracle item at base, or disputed already), "
        "2 could not run.",
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
    _add_repo(parser)
    _add_manifest(parser)
    _add_timeout(parser)


def _add_doctor(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "doctor",
        help="say what the next check would trip on, and the fix for each",
        description="Look at the working tree as it is (uncommitted edits included; --rev "
        "for a commit, its committed workflows and lock too): the "
        "manifest, the clone, the target branch, the oracle and property classes, the "
        "known-bad fixtures (present and biting), generated files, collection errors, "
        "the lock, the freezes and the CI workflow. Exit 0 nothing would trip the next "
        "check, 1 something would, 2 could not run.",
    )
    _add_repo(parser)
    _add_rev(parser)
    _add_manifest(parser)
    _add_today(parser)
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=_default_jobs(),
        metavar="N",
        help="pytest processes to run at once (default: $ANDGATE_JOBS, else the number of CPUs)",
    )
    _add_timeout(parser)


def _add_known_bad(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "known-bad",
        help="propose known-bad fixtures: reverted fixes from history, mutants",
        description="Find where known-bad fixtures come from, on the working tree as it "
        "is (uncommitted edits included; --rev for a commit) in temporary worktrees. "
        "Candidates go to a proposals folder, never into known_bad_dir. Exit 0 done, 2 "
        "could not run.",
    )
    actions = parser.add_subparsers(dest="known_bad_command", metavar="ACTION", required=True)
    harvest = actions.add_parser(
        "harvest",
        help="revert past production changes on HEAD; propose those the oracle kills",
        description="Walk the history for commits that changed production code, revert "
        "each one's production diff on HEAD (three-way; only what applies cleanly) and run "
        "the oracle class against it. Reverts the oracle kills are written as candidate "
        "fixtures, with a report that also lists the fixes the oracle misses. Exit 0 "
        "done, 2 could not run.",
    )
    harvest.add_argument(
        "--since", metavar="REV", help="walk only commits after REV (default: all history)"
    )
    harvest.add_argument(
        "--limit",
        type=_positive_int,
        default=50,
        metavar="N",
        help="at most N commits that changed production code (default: 50)",
    )
    mutants = actions.add_parser(
        "mutants",
        help="mutate production functions; report where the oracle class is blind",
        description="Small mutants of HEAD's production functions (comparisons, and/or, "
        "not, constants, returns, removed statements), each run against the oracle "
        "class; report per file and function how many survive. Exit 0 done, 2 could "
        "not run.",
    )
    mutants.add_argument(
        "--paths",
        nargs="+",
        default=[],
        metavar="GLOB",
        help="production files to mutate (gitignore-style globs; default: all)",
    )
    mutants.add_argument(
        "--write",
        type=_count,
        default=0,
        metavar="N",
        help="write the N most useful killed mutants as candidate fixtures (default: 0)",
    )
    for action in (harvest, mutants):
        _add_repo(action)
        _add_rev(action)
        _add_manifest(action)
        action.add_argument(
            "--out",
            type=Path,
            default=None,
            metavar="DIR",
            help="proposals folder (default: artifacts/known_bad_proposals/ in the repo; "
            "never inside known_bad_dir)",
        )
        action.add_argument(
            "--budget",
            type=_positive_float,
            default=600.0,
            metavar="S",
            help="time budget in seconds; what is left undone is reported (default: 600)",
        )
        action.add_argument(
            "--jobs",
            type=_positive_int,
            default=_default_jobs(),
            metavar="N",
            help="pytest processes to run at once (default: $ANDGATE_JOBS, else the CPUs)",
        )
        action.add_argument(
            "--timeout",
            type=_positive_float,
            default=300.0,
            metavar="S",
            help="limit for each pytest process in seconds (default: 300)",
        )
        _add_item_timeout(action)
        action.add_argument(
            "--no-cache",
            action="store_true",
            help="neither read nor write andgate's cache (remembered killers and, for "
            "harvest, reverts the oracle class let through)",
        )


def cmd_demo(args: argparse.Namespace) -> int:
    from andgate.commands.demo import run_demo

    return run_demo(keep=args.keep)


def cmd_classify(args: argparse.Namespace) -> int:
    from andgate.commands.classify import run_classify

    return run_classify(
        args.repo,
        manifest=args.manifest,
        today=args.today or dt.date.today(),
        as_json=args.json,
        timeout=args.timeout,
        rev=args.rev,
    )


def cmd_replay_known_bad(args: argparse.Namespace) -> int:
    from andgate.commands.common import item_limit
    from andgate.commands.replay_known_bad import run_replay_known_bad

    return run_replay_known_bad(
        args.repo,
        manifest=args.manifest,
        jobs=args.jobs,
        timeout=args.timeout,
        rev=args.rev,
        item_timeout=item_limit(args),
    )


def cmd_lock(args: argparse.Namespace) -> int:
    from andgate.commands.lock import run_lock_update, run_lock_verify

    run = run_lock_verify if args.lock_command == "verify" else run_lock_update
    return run(args.repo, manifest=args.manifest, rev=args.rev)


def cmd_freeze(args: argparse.Namespace) -> int:
    from andgate.commands import freeze

    today = args.today or dt.date.today()
    if args.freeze_command == "add":
        new = freeze.NewFreeze(args.id, args.reason, args.owner, args.days)
        return freeze.run_freeze_add(
            args.repo, new, manifest=args.manifest, today=today, timeout=args.timeout
        )
    run = freeze.run_freeze_list if args.freeze_command == "list" else freeze.run_freeze_prune
    return run(args.repo, manifest=args.manifest, today=today)


def cmd_init(args: argparse.Namespace) -> int:
    from andgate.commands.init import run_init

    return run_init(args.repo, manifest=args.manifest, github=args.github, agents=args.agents)


def cmd_dispute(args: argparse.Namespace) -> int:
    from andgate.commands.dispute import run_dispute_add, run_dispute_list

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


def cmd_doctor(args: argparse.Namespace) -> int:
    from andgate.commands.doctor import run_doctor

    return run_doctor(
        args.repo,
        manifest=args.manifest,
        today=args.today or dt.date.today(),
        jobs=args.jobs,
        timeout=args.timeout,
        rev=args.rev,
    )


def cmd_known_bad(args: argparse.Namespace) -> int:
    from andgate.check.cache import default_cache_dir
    from andgate.commands import known_bad
    from andgate.commands.common import item_limit

    common = {
        "manifest": args.manifest,
        "out": args.out,
        "budget": args.budget,
        "jobs": args.jobs,
        "timeout": args.timeout,
        "rev": args.rev,
        "cache_dir": None if args.no_cache else default_cache_dir(),
        "item_timeout": item_limit(args),
    }
    if args.known_bad_command == "harvest":
        return known_bad.run_harvest(args.repo, since=args.since, limit=args.limit, **common)
    return known_bad.run_mutants(args.repo, paths=tuple(args.paths), write=args.write, **common)


# The exit code a user error (one line on stderr) ends each command with.
COULD_NOT_RUN = {
    "check": CheckExit.COULD_NOT_RUN,
    "combine": CheckExit.COULD_NOT_RUN,
    "demo": DemoExit.COULD_NOT_RUN,
    "classify": ClassifyExit.COULD_NOT_RUN,
    "replay-known-bad": ReplayExit.COULD_NOT_RUN,
    "lock": LockExit.COULD_NOT_RUN,
    "freeze": FreezeExit.COULD_NOT_RUN,
    "init": InitExit.COULD_NOT_RUN,
    "doctor": DoctorExit.COULD_NOT_RUN,
    "known-bad": HarvestExit.COULD_NOT_RUN,  # MutantsExit.COULD_NOT_RUN is the same code
    "dispute": DisputeExit.COULD_NOT_RUN,
}


COMMANDS = {
    "check": cmd_check,
    "combine": cmd_combine,
    "demo": cmd_demo,
    "classify": cmd_classify,
    "replay-known-bad": cmd_replay_known_bad,
    "lock": cmd_lock,
    "freeze": cmd_freeze,
    "init": cmd_init,
    "doctor": cmd_doctor,
    "known-bad": cmd_known_bad,
    "dispute": cmd_dispute,
}


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(f"received signal {signum}")


def _tolerant_streams() -> None:
    """A file name that is not UTF-8 reaches messages as lone surrogates
    (git paths are decoded with surrogateescape): print it escaped, never die on it."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    _tolerant_streams()
    fix_mmap_threshold()  # large freed buffers go back to the system (glibc)
    isolation.make_undumpable()  # test processes cannot trace or read the gate
    args = build_parser().parse_args(argv)
    # SIGTERM (CI cancelling a job) and SIGHUP (a closed terminal) clean up like Ctrl-C.
    caught = (signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.signal(signum, _raise_interrupted) for signum in caught}
    try:
        return guarded(lambda: COMMANDS[args.command](args), COULD_NOT_RUN[args.command])
    except KeyboardInterrupt:
        print("andgate: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the last net: exit 2 ("could not run"), never 0, never 1
        first = (str(exc).strip().splitlines() or [""])[0]
        print(f"andgate: internal error: {exc.__class__.__name__}: {first}", file=sys.stderr)
        return 2
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
