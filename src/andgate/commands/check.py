"""`andgate check` and `andgate combine`: the gate's options from the command line, one
machine's shard or the whole check, and what it prints and publishes.

Light at import: the check's modules load only when a check runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from andgate.commands import options
from andgate.report.console import print_verdict, profile_lines, publish_to_github

if TYPE_CHECKING:  # the check's modules load only when a check runs
    from andgate.check.options import CheckOptions
    from andgate.check.units import Split
    from andgate.report.artifacts import Artifacts
    from andgate.verdict import Verdict


def _names(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in values if n.strip()))


def cmd_check(args: argparse.Namespace) -> int:
    from andgate.check.cache import default_cache_dir
    from andgate.check.options import CheckOptions
    from andgate.check.pipeline import run_check
    from andgate.report.progress import Progress
    from andgate.trust.github import names_from_env

    started_after = process_age()  # --profile: Python, andgate and the check's modules loaded
    opts = CheckOptions(
        repo=args.repo,
        base=args.base,
        head=args.head,
        manifest=args.manifest,
        approved_by=_names(args.approved_by),
        approved_by_env=names_from_env(os.environ.get("ANDGATE_APPROVED_BY")),
        approvals=args.approvals,
        today=options.today(args),
        artifacts=args.artifacts,
        jobs=args.jobs,
        timeout=args.timeout,
        item_timeout=options.item_timeout(args),
        hypothesis_seed=args.hypothesis_seed,
        cache_dir=None if args.no_cache else default_cache_dir(),
        progress=Progress(sys.stderr, quiet=args.quiet),
        discrimination=not args.no_discrimination,
        discrimination_budget=args.discrimination_budget,
        evidence=not args.no_evidence,
        evidence_budget=args.evidence_budget,
        split=args.shard,
        announce=partial(print, file=sys.stderr if args.json else sys.stdout, flush=True),
    )
    with workflow_commands_stopped():
        if opts.split is not None:
            return _run_shard(opts)
        verdict, artifacts = run_check(opts)
    return _show(verdict, artifacts, args, started_after)


def process_age() -> float | None:
    """Seconds since this process started (Linux's /proc), None where unknown."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()
        with open("/proc/uptime", encoding="ascii") as uptime:
            now = float(uptime.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        return max(now - int(fields[19]) / ticks, 0.0)  # field 22: starttime
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def workflow_commands_stopped() -> Iterator[None]:
    """In GitHub Actions, while tests run: the runner ignores workflow commands.

    Test output goes to log files, never to andgate's streams; but a test can write to
    the pipes the runner reads through another process of the step (the shell that
    started andgate: /proc/PID/fd/1). The runner's ActionCommandManager, one per step
    for stdout and stderr alike, ignores every command after `::stop-commands::TOKEN`
    until a `::TOKEN::` line (actions/runner, src/Runner.Worker/ActionCommandManager.cs);
    the token lives only in this process's memory."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        yield
        return
    from andgate.report.actions import stop_commands

    start, end = stop_commands()
    print(start, file=sys.stderr, flush=True)
    try:
        yield
    finally:
        print(end, file=sys.stderr, flush=True)


def _run_shard(opts: CheckOptions) -> int:
    from andgate.check.matrix import run_shard

    outcome = run_shard(opts)
    print(
        f"andgate: shard {outcome.split} ran {len(outcome.ran)} of {outcome.units} units; "
        f"bundle: {outcome.path}"
    )
    for error in outcome.errors:
        print(f"  GATE_ERROR: {error}")
    print("  the verdict comes from `andgate combine` over the bundles of all shards")
    return outcome.exit_code


def cmd_combine(args: argparse.Namespace) -> int:
    from andgate.check.matrix import run_combine
    from andgate.check.options import CheckOptions

    verdict, artifacts = run_combine(
        args.bundles, CheckOptions(repo=args.repo, artifacts=args.artifacts, cache_dir=None)
    )
    return _show(verdict, artifacts, args)


def _show(
    verdict: Verdict,
    artifacts: Artifacts,
    args: argparse.Namespace,
    started_after: float | None = None,
) -> int:
    if args.json:
        # From memory: the bytes written to verdict.json, never read back from disk.
        print(artifacts.verdict_json.decode("utf-8"), end="")
    else:
        print_verdict(verdict, artifacts.folder)
    if getattr(args, "profile", False):  # stdout holds only the JSON with --json
        out = sys.stderr if args.json else sys.stdout
        for line in profile_lines(artifacts.timings, artifacts.seconds, started_after):
            print(line, file=out)
    publish_to_github(verdict, artifacts, args.repo)
    return verdict.exit_code


# -- the command line ---------------------------------------------------------------------


def declare_check(parser: argparse.ArgumentParser) -> None:
    from andgate.check.options import DEFAULT_EVIDENCE_BUDGET  # only once check is asked for

    parser.description = (
        "Run the gate on the change base..head and print the verdict. Exit 0 allow, 1 block, "
        "2 could not run."
    )
    parser.add_argument(
        "--base",
        metavar="REF",
        help="the commit the change is based on (default: the merge-base with the upstream "
        "default branch; the first line says which, and when your local branch is ahead)",
    )
    parser.add_argument(
        "--head",
        default="HEAD",
        metavar="REF",
        help="the change's commit (default: HEAD; uncommitted work is not gated)",
    )
    options.add_repo(parser)
    options.add_manifest(parser)
    parser.add_argument(
        "--approved-by",
        action="append",
        default=[],
        metavar="NAME",
        help="an owner who approved trust-root changes (repeatable; also ANDGATE_APPROVED_BY=a,b)",
    )
    options.add_today(parser)
    options.add_artifacts(parser)
    options.add_jobs(parser)
    options.add_timeout(parser)
    options.add_item_timeout(parser)
    parser.add_argument(
        "--hypothesis-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed for Hypothesis property tests (default: derived from base)",
    )
    options.add_no_cache(
        parser, "ignore the killer cache (known-bad replays run the whole oracle class)"
    )
    parser.add_argument(
        "--approvals",
        choices=("none", "github-reviews"),
        default="none",
        help="github-reviews: owners' approving pull-request reviews count: of the gated head, "
        "or of an earlier commit whose protected files are unchanged (GitHub Actions: "
        "GITHUB_EVENT_PATH, GITHUB_TOKEN); default: none",
    )
    options.add_json(
        parser, "print the verdict JSON on stdout, and nothing else (annotations go to stderr)"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no status lines on stderr while the phases run"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="after the verdict, print where the check's time went, step by step (the "
        "artifacts' timings.json holds it on every check)",
    )
    parser.add_argument(
        "--no-discrimination",
        action="store_true",
        help="skip the discrimination report (do the tests the change adds fail against "
        "known-bad fixtures or mutants of the lines it touched?)",
    )
    parser.add_argument(
        "--discrimination-budget",
        type=options.positive_float,
        default=None,
        metavar="S",
        help="seconds the discrimination report may run on after the test classes end; "
        "what it did not get to is reported (default: a quarter of the classes' time, at "
        "least 5, at most 60)",
    )
    parser.add_argument(
        "--no-evidence",
        action="store_true",
        help="do not measure what an edit of oracle items gives up (ORACLE_WEAKENED: the "
        "failures it hides and the mutants it lets through)",
    )
    parser.add_argument(
        "--evidence-budget",
        type=options.positive_float,
        default=None,
        metavar="S",
        help="seconds the approval evidence may add to the check; what it did not get to is "
        f"reported (default: {DEFAULT_EVIDENCE_BUDGET:g})",
    )
    parser.add_argument(
        "--shard",
        type=_split,
        default=None,
        metavar="I/N",
        help="run part I of N of the check (a CI matrix job) and write bundle.json to the "
        "artifacts folder; `andgate combine` gives the verdict",
    )
    options.handled_by(parser, cmd_check)


def _split(text: str) -> Split:
    from andgate.check.units import Split  # only when --shard is given

    try:
        return Split.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--shard {text}: ")) from exc


def declare_combine(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Check that the N shard bundles belong to one check and cover every unit once, then "
        "decide as `check` would. Exit 0 allow, 1 block, 2 could not run (a missing, "
        "duplicated or mismatched bundle is GATE_ERROR)."
    )
    parser.add_argument(
        "bundles",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="each shard's artifacts folder (or its bundle.json)",
    )
    options.add_repo(parser)
    options.add_artifacts(parser)
    options.add_json(parser, "print the verdict JSON on stdout")
    options.handled_by(parser, cmd_combine)
