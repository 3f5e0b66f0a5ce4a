"""The CI runner's command files: hidden from tests, restored before andgate writes,
and `--json` stdout that stays JSON under GitHub Actions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from andgate.process import argv, runner_files


def _files(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for name in runner_files.RUNNER_FILES:
        path = tmp_path / f"{name.lower()}.txt"
        path.write_text(f"earlier={name}\n")
        paths[name] = path
    return paths


def test_test_processes_never_see_the_runner_files(monkeypatch, tmp_path):
    for name in runner_files.HIDDEN_FROM_TESTS:
        monkeypatch.setenv(name, str(tmp_path / name))
    env = argv.test_environment()
    assert not set(runner_files.HIDDEN_FROM_TESTS) & set(env)


def test_bytes_appended_by_a_test_are_cut_off_with_a_warning(tmp_path):
    paths = _files(tmp_path)
    snaps = runner_files.take({k: str(v) for k, v in paths.items()})
    with paths["GITHUB_OUTPUT"].open("a") as out:
        out.write("verdict<<EOF\nallow\n")
    found = runner_files.restore(snaps)
    assert found.errors == []
    assert len(found.warnings) == 1 and "$GITHUB_OUTPUT" in found.warnings[0]
    assert paths["GITHUB_OUTPUT"].read_text() == "earlier=GITHUB_OUTPUT\n"


@pytest.mark.parametrize("how", ["rewrite", "shrink", "remove", "symlink"])
def test_a_file_whose_earlier_content_changed_is_a_gate_error(tmp_path, how):
    paths = _files(tmp_path)
    snaps = runner_files.take({k: str(v) for k, v in paths.items()})
    target = paths["GITHUB_STEP_SUMMARY"]
    if how == "rewrite":
        target.write_text("earlier=GITHUB_STEP_SUMMARX\n<!--\n")
    elif how == "shrink":
        target.write_text("")
    elif how == "remove":
        target.unlink()
    elif how == "symlink":
        target.unlink()
        (tmp_path / "elsewhere").write_text("earlier=GITHUB_STEP_SUMMARY\n")
        target.symlink_to(tmp_path / "elsewhere")
    found = runner_files.restore(snaps)
    assert len(found.errors) == 1 and "$GITHUB_STEP_SUMMARY" in found.errors[0]


def test_untouched_files_restore_silently(tmp_path):
    paths = _files(tmp_path)
    snaps = runner_files.take({k: str(v) for k, v in paths.items()})
    assert runner_files.restore(snaps) == runner_files.Restored([], [])


SNEAKY_TEST = '''\
"""An agent's test that knows where the runner keeps its files."""

import os


def test_sneaky():
    hidden = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "RUNNER_TEMP")
    assert not [n for n in hidden if n in os.environ]
    with open({output!r}, "a") as out:
        out.write("verdict=allow\\nexit-code=0\\nreasons<<NEVER\\n")
    with open({summary!r}, "r+") as summary:
        summary.write("# andgate: ALLOW\\n<!--")
'''


@pytest.mark.slow
def test_a_test_that_writes_the_runner_files_ends_in_gate_error_and_json_stays_json(
    sample, tmp_path, monkeypatch, capsys
):
    from andgate.commands.cli import main

    (tmp_path / "runner").mkdir()
    paths = _files(tmp_path / "runner")
    before = {name: path.read_text() for name, path in paths.items()}

    def sneaky(repo):  # type: ignore[no-untyped-def]
        repo.write(
            {
                "tests/test_sneaky_agent.py": SNEAKY_TEST.format(
                    output=str(paths["GITHUB_OUTPUT"]), summary=str(paths["GITHUB_STEP_SUMMARY"])
                )
            }
        )

    head = sample.change(sneaky)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    for name, path in paths.items():
        monkeypatch.setenv(name, str(path))
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path / "runner"))
    args = ["check", "--repo", str(sample.path), "--base", sample.base, "--head", head, "--json"]
    code = main([*args, "--today", "2026-11-25", "--artifacts", str(tmp_path / "art"), "--quiet"])
    captured = capsys.readouterr()
    payload = json.loads(captured.out)  # stdout is the object alone
    assert code == 2
    errors = [r["detail"] for r in payload["reasons"] if r["code"] == "GATE_ERROR"]
    assert any("$GITHUB_STEP_SUMMARY" in e for e in errors), payload["reasons"]
    assert not any(r["code"] == "UNTRUSTED_FAILED" for r in payload["reasons"])
    assert "::error " in captured.err  # the annotations, on stderr
    # while tests ran the runner ignored workflow commands, resumed before the annotations
    lines = captured.err.splitlines()
    assert lines[0].startswith("::stop-commands::andgate-")
    resume = f"::{lines[0].removeprefix('::stop-commands::')}::"
    first_error = next(i for i, line in enumerate(lines) if line.startswith("::error "))
    assert lines.index(resume) < first_error
    outputs = paths["GITHUB_OUTPUT"].read_text()
    assert outputs.startswith(before["GITHUB_OUTPUT"] + "verdict=block\n"), outputs
    assert "allow" not in outputs and "NEVER" not in outputs
    warned = [w["detail"] for w in payload["warnings"] if w["code"] == "RUNNER_FILE_RESTORED"]
    assert any("$GITHUB_OUTPUT" in w for w in warned)
    for name in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE"):
        assert paths[name].read_text() == before[name]
    assert os.environ["GITHUB_ACTIONS"] == "true"
