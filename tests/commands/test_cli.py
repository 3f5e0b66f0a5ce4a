"""The dispatcher: every command is declared in its own module, only the command being run
is imported, shared options are declared once, and what escapes a command becomes one
exit code in one place."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from andgate.commands import cli
from andgate.commands.cli import COMMANDS, build_parser, command_named
from andgate.errors import BadInput
from andgate.exitcodes import ClassifyExit, Exit


def leaf_parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every parser that runs a command (`lock verify`, `classify`, ...), by its words."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = {}
            for name, child in action.choices.items():
                found |= leaf_parsers(child, (*path, name))
            return found
    return {path: parser}


LEAVES = leaf_parsers(build_parser())
# The least each leaf needs to parse.
REQUIRED = {("combine",): ["DIR"], ("freeze", "add"): ["ID", "--reason", "r", "--owner", "o"]}


def test_every_command_of_the_table_is_declared():
    assert {words[0] for words in LEAVES} == set(COMMANDS)
    assert {("lock", "verify"), ("freeze", "add"), ("known-bad", "mutants")} <= set(LEAVES)


@pytest.mark.parametrize("words", sorted(LEAVES), ids=" ".join)
def test_every_command_names_its_handler_and_its_could_not_run_code(words):
    args = build_parser().parse_args([*words, *REQUIRED.get(words, [])])
    assert callable(args.handler)
    expected = ClassifyExit.COULD_NOT_RUN if words == ("classify",) else Exit.COULD_NOT_RUN
    assert args.could_not_run == expected


@pytest.mark.parametrize("words", sorted(LEAVES), ids=" ".join)
def test_the_parser_built_for_one_command_is_the_whole_parsers_part(words):
    alone = leaf_parsers(build_parser(only=words[0]))
    assert alone[words].format_help() == LEAVES[words].format_help()


def test_the_top_level_help_needs_no_command_module():
    assert build_parser(only="").format_help() == build_parser().format_help()


SHARED = ("--repo", "--manifest", "--today", "--jobs", "--artifacts", "--item-timeout")


@pytest.mark.parametrize("flag", SHARED)
def test_a_shared_option_means_the_same_in_every_command(flag):
    """Declared once (`commands.options`): the same type, default, metavar and help."""
    seen = {
        (action.type, repr(action.default), action.metavar, action.help)
        for parser in LEAVES.values()
        for action in parser._actions
        if flag in action.option_strings
    }
    assert len(seen) == 1, seen


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["check", "--base", "x"], "check"),
        (["--version"], ""),
        ([], ""),
        (["-h", "lock"], "lock"),
        (["--", "freeze", "list"], "freeze"),
    ],
)
def test_the_command_is_the_first_word_that_is_no_option(argv, command):
    assert command_named(argv) == command


def test_a_command_imports_only_its_own_module():
    """`andgate lock verify` does not pay for known-bad's or demo's imports."""
    code = (
        "import contextlib, io, sys\n"
        "from andgate.commands import cli\n"
        "with contextlib.redirect_stderr(io.StringIO()):\n"
        "    cli.main(['lock', 'verify', '--repo', sys.argv[1]])\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('andgate.commands.'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "/nonexistent/andgate-test"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = set(result.stdout.split())
    assert "andgate.commands.lock" in loaded
    assert not loaded & {
        "andgate.commands.known_bad",
        "andgate.commands.demo",
        "andgate.commands.init",
        "andgate.commands.doctor",
        "andgate.commands.classify",
    }, loaded


def _raising(exc: BaseException):
    def handler(*args: object, **kwargs: object) -> int:
        raise exc

    return handler


@pytest.mark.parametrize(
    ("argv", "function", "code"),
    [
        (["lock", "verify"], "andgate.commands.lock.run_lock_verify", Exit.COULD_NOT_RUN),
        (["classify"], "andgate.commands.classify.run_classify", ClassifyExit.COULD_NOT_RUN),
    ],
)
def test_an_internal_error_ends_the_command_with_its_could_not_run_code(
    argv, function, code, monkeypatch, capsys
):
    """classify's is 5: 2 would say "expired freeze" (fixed with the one exit-code enum)."""
    monkeypatch.setattr(function, _raising(RuntimeError("boom\nmore")))
    assert cli.main(argv) == code
    assert capsys.readouterr().err == "andgate: internal error: RuntimeError: boom\n"


def test_a_user_error_is_one_line_and_the_could_not_run_code(monkeypatch, capsys):
    monkeypatch.setattr(
        "andgate.commands.classify.run_classify", _raising(BadInput("x.yaml: fix it"))
    )
    assert cli.main(["classify"]) == ClassifyExit.COULD_NOT_RUN
    assert capsys.readouterr().err == "andgate: x.yaml: fix it\n"


def test_ctrl_c_is_130_for_every_command(monkeypatch, capsys):
    monkeypatch.setattr("andgate.commands.lock.run_lock_update", _raising(KeyboardInterrupt()))
    assert cli.main(["lock", "update"]) == Exit.INTERRUPTED == 130
    assert capsys.readouterr().err == "andgate: interrupted\n"


def test_a_usage_error_is_argparses_exit_2(capsys):
    with pytest.raises(SystemExit) as exit:
        cli.main(["check", "--jobs", "0"])
    assert exit.value.code == Exit.COULD_NOT_RUN
    assert "argument --jobs: '0' must be a whole number >= 1" in capsys.readouterr().err
