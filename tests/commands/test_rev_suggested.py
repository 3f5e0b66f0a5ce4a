"""A command's first line suggests `--rev REV` only when the command takes it (issue 43,
item 8: every header suggested `--rev`, and some commands had none)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import andgate.commands
from andgate.commands.cli import build_parser

COMMANDS = Path(andgate.commands.__file__).parent
TAKE_REV = [
    ["classify"],
    ["replay-known-bad"],
    ["doctor"],
    ["known-bad", "harvest"],
    ["known-bad", "mutants"],
    ["lock", "verify"],
]


@pytest.mark.parametrize("words", TAKE_REV, ids=" ".join)
def test_every_command_that_judges_a_commit_takes_rev(words):
    args = build_parser(only=words[0]).parse_args([*words, "--rev", "HEAD~1"])
    assert args.rev == "HEAD~1"


@pytest.mark.parametrize("words", [["known-bad", "refresh"]], ids=" ".join)
def test_commands_that_write_the_working_tree_take_no_rev(words):
    with pytest.raises(SystemExit):
        build_parser(only=words[0]).parse_args([*words, "--rev", "HEAD~1"])


def test_a_module_that_suggests_rev_declares_it():
    """`open_target` suggests `--rev` on the first line unless told `takes_rev=False`."""
    for module in sorted(COMMANDS.glob("*.py")):
        text = module.read_text(encoding="utf-8")
        calls = re.findall(r"open_target\(([^)]*)\)", text)
        suggesting = [c for c in calls if "takes_rev=False" not in c and "def " not in c]
        if not suggesting or module.name == "common.py":
            continue
        for command in _commands_using(module):
            assert "add_rev(" in command.read_text(encoding="utf-8"), (
                f"{command.name}: its first line suggests --rev (through {module.name})"
            )


def _commands_using(module: Path) -> list[Path]:
    """The command modules (those with a `declare`) that reach `module`: itself, or
    those that import it (a helper such as known_bad_session.py)."""
    text = module.read_text(encoding="utf-8")
    if "def declare(" in text:
        return [module]
    importing = f"from andgate.commands.{module.stem} import"
    found = [
        other
        for other in sorted(COMMANDS.glob("*.py"))
        if importing in other.read_text(encoding="utf-8")
        and "def declare(" in other.read_text(encoding="utf-8")
    ]
    assert found, f"{module.name} calls open_target, and no command module imports it"
    return found
