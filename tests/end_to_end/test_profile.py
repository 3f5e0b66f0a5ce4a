"""`andgate check --profile` and timings.json on the sample project, end to end."""

from __future__ import annotations

import json
import re
import sys

from andgate.commands.cli import main


def test_profile_prints_the_timeline_beside_json_on_stdout_and_timings_json_has_it(
    sample, capsys, monkeypatch
):
    head = sample.change(lambda r: r.write({"minilib/notes.py": "NOTE = 1\n"}))
    monkeypatch.chdir(sample.path)
    artifacts = sample.tmp / "profiled"
    argv = ["check", "--base", sample.base, "--head", head, "--json", "--profile", "--quiet"]
    code = main([*argv, "--today", "2026-11-25", "--artifacts", str(artifacts)])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert json.loads(captured.out)["verdict"] == "allow"  # stdout: the JSON alone
    assert "andgate: where the check's" in captured.err
    if sys.platform.startswith("linux"):  # the process's age comes from /proc
        assert re.search(r"before the check: \d+\.\d\d s", captured.err), captured.err
    timings = json.loads((artifacts / "timings.json").read_text(encoding="utf-8"))
    steps = {(s["name"], s["kind"]) for s in timings["steps"]}
    # the gate's steps, the phases, and each pytest process with its worktree
    assert {("oracle phase", "phase"), ("verdict", "step")} <= steps
    assert {("oracle", "pytest"), ("base oracle", "pytest")} <= steps
    assert ("oracle: worktree", "worktrees") in steps
    assert any(kind == "pytest" and name.startswith("known-bad ") for name, kind in steps)
    ends = [s["started_s"] + s["seconds"] for s in timings["steps"]]
    # each figure is rounded to the millisecond on its own: their sums may differ by one
    assert abs(timings["seconds"] - max(ends)) <= 0.0015
