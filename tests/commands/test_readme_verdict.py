"""The verdict the README shows is what `andgate check` prints for the demo's
tautological change (issue 43, item 8: the README's demo description matches the demo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from andgate.commands.cli import main
from andgate.commands.demo import tautological_tests
from andgate.commands.sample import AGENT, SAMPLE_TODAY, build_sample

pytestmark = pytest.mark.slow  # builds the demo's repository and runs a check

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")


def test_the_readme_verdict_is_the_demos(tmp_path, capsys, monkeypatch):
    shown = README.split("## What a verdict looks like", 1)[1].split("```", 2)[1]
    command, first, *verdict = shown.strip().splitlines()[1:]  # after ```text
    assert command == "$ andgate check --base origin/main"
    repo, base = build_sample(tmp_path / "sample")
    repo.run("checkout", "-q", "-b", "agent", base)
    tautological_tests(repo)
    head = repo.commit("broken slugify + tautological tests", who=AGENT)  # the demo's title
    repo.run("update-ref", "refs/remotes/origin/main", base)
    monkeypatch.chdir(repo.path)
    argv = ["check", "--base", "origin/main", "--today", SAMPLE_TODAY, "--quiet"]
    assert main([*argv, "--no-discrimination", "--artifacts", "artifacts"]) == 1
    out = capsys.readouterr().out.splitlines()
    commits = f"base {base[:12]} (--base origin/main), head {head[:12]} (HEAD)"
    assert out[0] == first == f"andgate check: {commits}"  # fixed dates: the same shas
    assert [line.replace(f"{repo.path}/", "") for line in out[1:]] == verdict
    assert os.path.isfile("artifacts/summary.md")
