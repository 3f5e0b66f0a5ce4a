"""`andgate check` and `andgate combine`: the gate's options from the command line, one
machine's shard or the whole check, and what it prints and publishes.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from andgate.report.console import print_verdict, publish_to_github

if TYPE_CHECKING:  # the check's modules load only when a check runs
    from andgate.check.options import CheckOptions
    from andgate.report.artifacts import Artifacts
    from andgate.verdict import Verdict


def _names(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in values if n.strip()))


def cmd_check(args: argparse.Namespace) -> int:
    from andgate.check.cache import default_cache_dir
    from andgate.check.options import CheckOptions
    from andgate.check.pipeline import run_check
    from andgate.commands.common import item_limit
    from andgate.report.progress import Progress
    from andgate.trust.github import names_from_env

    opts = CheckOptions(
        repo=args.repo,
        base=args.base,
        head=args.head,
        manifest=args.manifest,
        approved_by=_names(args.approved_by),
        approved_by_env=names_from_env(os.environ.get("ANDGATE_APPROVED_BY")),
        approvals=args.approvals,
        today=args.today or dt.date.today(),
        artifacts=args.artifacts,
        jobs=args.jobs,
        timeout=args.timeout,
        item_timeout=item_limit(args),
        hypothesis_seed=args.hypothesis_seed,
        cache_dir=None if args.no_cache else default_cache_dir(),
        progress=Progress(sys.stderr, quiet=args.quiet),
        discrimination=not args.no_discrimination,
        discrimination_budget=args.discrimination_budget,
        split=args.shard,
    )
    with workflow_commands_stopped():
        if opts.split is not None:
            return _run_shard(opts)
        verdict, artifacts = run_check(opts)
    return _show(verdict, artifacts, args)


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
    from andgate.exitcodes import ShardExit

    outcome = run_shard(opts)
    print(
        f"andgate: shard {outcome.split} ran {len(outcome.ran)} of {outcome.units} units; "
        f"bundle: {outcome.path}"
    )
    for error in outcome.errors:
        print(f"  GATE_ERROR: {error}")
    print("  the verdict comes from `andgate combine` over the bundles of all shards")
    return ShardExit.COULD_NOT_RUN if outcome.errors else ShardExit.PART_RAN


def cmd_combine(args: argparse.Namespace) -> int:
    from andgate.check.matrix import run_combine
    from andgate.check.options import CheckOptions

    verdict, artifacts = run_combine(
        args.bundles, CheckOptions(repo=args.repo, artifacts=args.artifacts, cache_dir=None)
    )
    return _show(verdict, artifacts, args)


def _show(verdict: Verdict, artifacts: Artifacts, args: argparse.Namespace) -> int:
    if args.json:
        # From memory: the bytes written to verdict.json, never read back from disk.
        print(artifacts.verdict_json.decode("utf-8"), end="")
    else:
        print_verdict(verdict, artifacts.folder)
    publish_to_github(verdict, artifacts, args.repo)
    return verdict.exit_code
