"""The `andgate` command line: which commands there are, and dispatch; nothing else.

Each command declares its own options, beside its handler, in its own module
(`declare(parser)`, with the shared options of `commands.options`); the handler calls
the command's typed function, which returns an exit code (`exitcodes.Exit`), so tests
call it directly. This module lists the commands (`COMMANDS`), imports only the module
of the command being run (the others' imports would slow every start), and maps what
escapes a command to an exit code in one place: a user error is one line on stderr and
the command's could-not-run code (`errors.guarded`), Ctrl-C is `Exit.INTERRUPTED`.
"""

from __future__ import annotations

import argparse
import importlib
import io
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType

from andgate import __version__
from andgate.errors import Interrupted, guarded
from andgate.exitcodes import Exit
from andgate.plugin import isolation
from andgate.process.run import fix_mmap_threshold


@dataclass(frozen=True)
class Command:
    """A subcommand: the function that declares it (`module:function`, imported only
    when the command runs or the whole parser is built) and its line in `andgate --help`."""

    declare: str
    summary: str

    def declare_on(self, parser: argparse.ArgumentParser) -> None:
        module, _, function = self.declare.partition(":")
        declare: Callable[[argparse.ArgumentParser], None]
        declare = getattr(importlib.import_module(module), function)
        declare(parser)


# In the order `andgate --help` lists them. A new command: a module with `declare`
# (see `commands.options`) and one line here.
COMMANDS = {
    "check": Command(
        "andgate.commands.check:declare_check", "run the whole gate on a change (base..head)"
    ),
    "combine": Command(
        "andgate.commands.check:declare_combine",
        "the verdict from the bundles of N `check --shard I/N` jobs",
    ),
    "demo": Command("andgate.commands.demo:declare", "build a sample repo and gate canned changes"),
    "classify": Command(
        "andgate.commands.classify:declare", "print the trust inventory of the working tree"
    ),
    "replay-known-bad": Command(
        "andgate.commands.replay_known_bad:declare",
        "check that every known-bad fixture makes an oracle test fail",
    ),
    "lock": Command("andgate.commands.lock:declare", "verify or rewrite the fixture lock"),
    "freeze": Command("andgate.commands.freeze:declare", "list, add or prune frozen flaky tests"),
    "init": Command(
        "andgate.commands.init:declare", "scaffold the trust files in an existing repository"
    ),
    "doctor": Command(
        "andgate.commands.doctor:declare",
        "say what the next check would trip on, and the fix for each",
    ),
    "known-bad": Command(
        "andgate.commands.known_bad:declare",
        "propose known-bad fixtures (reverted fixes, mutants); refresh stale ones",
    ),
    "dispute": Command(
        "andgate.commands.dispute:declare",
        "say that an oracle test contradicts the specification (instead of editing it)",
    ),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only`, every other command is its name and summary
    alone (enough for `andgate --help` and for argparse's choices)."""
    parser = argparse.ArgumentParser(
        prog="andgate",
        description="A merge gate for pytest projects: sorts every test into a trust class "
        "and allows a change only when every class holds.",
    )
    parser.add_argument("--version", action="version", version=f"andgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        child = sub.add_parser(name, help=command.summary)
        if only is None or name == only:
            command.declare_on(child)
    return parser


def command_named(argv: Sequence[str]) -> str:
    """The subcommand `argv` names: its first word that is not an option (`andgate` itself
    takes no option with a value); "" for none (`andgate --help` declares no command)."""
    return next((word for word in argv if not word.startswith("-")), "")


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
    words = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(only=command_named(words)).parse_args(words)
    could_not_run: int = args.could_not_run
    # SIGTERM (CI cancelling a job) and SIGHUP (a closed terminal) clean up like Ctrl-C.
    caught = (signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.signal(signum, _raise_interrupted) for signum in caught}
    try:
        return guarded(lambda: args.handler(args), could_not_run)
    except KeyboardInterrupt:
        print("andgate: interrupted", file=sys.stderr)
        return Exit.INTERRUPTED
    except Exception as exc:  # the last net: "could not run", never allow, never block
        first = (str(exc).strip().splitlines() or [""])[0]
        print(f"andgate: internal error: {exc.__class__.__name__}: {first}", file=sys.stderr)
        return could_not_run
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
