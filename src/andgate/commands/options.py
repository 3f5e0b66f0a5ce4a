"""The options several commands share, each declared once, and how a command names its
handler.

A command module declares its own options in `declare(parser)`, calling the helpers
here for the shared ones (`add_repo`, `add_jobs`, `add_timeout`, ...) so that every
command spells, types and documents them alike, and ends with `handled_by`: the
function that turns the parsed arguments into a call of the command's typed function,
and the exit code a user error ends it with. `cli.py` then only dispatches.

This module is imported at every start: it imports nothing heavier than the defaults
it shows.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
from collections.abc import Callable
from pathlib import Path

from andgate.errors import BadInput
from andgate.exitcodes import Exit
from andgate.process.requests import DEFAULT_ITEM_TIMEOUT, DEFAULT_TIMEOUT, ITEM_TIMEOUT_FLOOR
from andgate.trust.manifest import DEFAULT_MANIFEST

Handler = Callable[[argparse.Namespace], int]

REV_HELP = "judge this commit (default: the working tree as it is, uncommitted edits included)"


def handled_by(
    parser: argparse.ArgumentParser, handler: Handler, *, could_not_run: int = Exit.COULD_NOT_RUN
) -> None:
    """`handler` runs the command `parser` parses; a user error (`AndgateError`) or an
    internal one ends it with `could_not_run` (classify's is its own)."""
    parser.set_defaults(handler=handler, could_not_run=could_not_run)


# -- the types of option values: a bad value is argparse's one-line usage error, exit 2 --


def date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date; use YYYY-MM-DD") from None


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 1")
    return value


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 0")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not math.isfinite(value) or value <= 0:  # nan and inf would never time out
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds > 0")
    return value


def default_jobs() -> int:
    """$ANDGATE_JOBS (a CI setting, like --jobs in every call), else the CPUs."""
    try:
        return max(1, int(os.environ.get("ANDGATE_JOBS", "")))
    except ValueError:
        return os.cpu_count() or 1


# -- the shared options --------------------------------------------------------------------


def add_repo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="repository to gate (default: the current directory)",
    )


def add_manifest(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--manifest",
        default=DEFAULT_MANIFEST,
        metavar="PATH",
        help=f"trust manifest path in the repository (default: {DEFAULT_MANIFEST})",
    )


def add_rev(parser: argparse.ArgumentParser, help: str = REV_HELP) -> None:
    parser.add_argument("--rev", metavar="REV", default=None, help=help)


def add_today(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--today",
        type=date,
        default=None,
        metavar="YYYY-MM-DD",
        help="the date freezes are judged against (default: today)",
    )


def today(args: argparse.Namespace) -> dt.date:
    """`--today`, else the current date (read when the command runs, not when parsed)."""
    return args.today or dt.date.today()


def add_jobs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=default_jobs(),
        metavar="N",
        help="pytest processes to run at once (default: $ANDGATE_JOBS, else the number of CPUs)",
    )


def add_timeout(parser: argparse.ArgumentParser, default: float = DEFAULT_TIMEOUT) -> None:
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=default,
        metavar="S",
        help=f"limit for each pytest process in seconds (default: {default:.0f})",
    )


def add_item_timeout(parser: argparse.ArgumentParser) -> None:
    """`--item-timeout S`, read with `item_timeout(args)`."""
    parser.add_argument(
        "--item-timeout",
        type=positive_float,
        default=DEFAULT_ITEM_TIMEOUT,
        metavar="S",
        help=f"limit for each test item in seconds, at least {ITEM_TIMEOUT_FLOOR:.0f}: an "
        "item past it fails, named, and the rest of its class still runs "
        f"(default: {DEFAULT_ITEM_TIMEOUT:.0f})",
    )
    # Tests only: a lower floor, so that a test of a hanging item takes seconds.
    parser.add_argument(
        "--item-timeout-floor", type=float, default=ITEM_TIMEOUT_FLOOR, help=argparse.SUPPRESS
    )


def item_timeout(args: argparse.Namespace) -> float:
    if args.item_timeout < args.item_timeout_floor:
        raise BadInput(
            f"--item-timeout {args.item_timeout:g}: at least {args.item_timeout_floor:g} s, "
            "so that a loaded CI machine does not fail honest items; raise it"
        )
    return float(args.item_timeout)


def add_artifacts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--artifacts",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to write the artifacts (default: artifacts/ in the repo)",
    )


def add_no_cache(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--no-cache", action="store_true", help=help)


def add_json(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--json", action="store_true", help=help)
