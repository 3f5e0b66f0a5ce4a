"""`andgate demo` reports expected against actual verdicts and fails on a mismatch."""

from __future__ import annotations

from dataclasses import replace

import pytest

from andgate.commands.demo import CHANGES, run_demo


@pytest.mark.slow  # end to end: starts the gate's pytest processes
def test_demo_subset_matches(capsys):
    assert run_demo(changes=CHANGES[:1]) == 0  # the block rows: tests/end_to_end/test_check.py
    out = capsys.readouterr().out
    assert "honest fix with its own tests" in out
    assert "every verdict as expected" in out


def test_demo_exits_1_when_a_verdict_differs(capsys, monkeypatch, tmp_path):
    """The table and the exit code, against a gate that decides allow (the real gate
    is run above)."""
    import andgate.commands.demo
    from andgate.commands.sample import SampleRepo
    from andgate.records import Bit, Decision
    from andgate.verdict import Verdict

    def allow(repo, base, change, artifacts):
        return Verdict(Decision.ALLOW, (), dict.fromkeys(Bit, True), (), {})

    monkeypatch.setattr(andgate.commands.demo, "_gate_change", allow)
    monkeypatch.setattr(
        andgate.commands.demo, "build_sample", lambda path: (SampleRepo(path), "0" * 40)
    )
    wrong = replace(CHANGES[0], verdict="block", reasons=("ORACLE_FAILED",))
    assert run_demo(changes=(CHANGES[0], wrong)) == 1
    out = capsys.readouterr().out
    assert "SOME VERDICTS DIFFER" in out
    rows = [line.split()[0] for line in out.splitlines()[3:5]]
    assert rows == ["yes", "NO"], out


@pytest.mark.slow  # end to end: one gate run
def test_the_demos_approved_change_is_approved_under_ci_too(capsys, monkeypatch):
    """CI runs `andgate demo`: with CI set, --approved-by counts only where the
    manifest lists cli (the demo's does), or its approved change would block."""
    monkeypatch.setenv("CI", "true")
    approved = next(c for c in CHANGES if c.approvals)
    assert run_demo(changes=(approved,)) == 0, capsys.readouterr().out


def test_a_sample_patch_is_the_diff_byte_for_byte(make_repo):
    """The known-bad fixtures the samples (and the tests' projects) are built with: a
    hunk that ends in blank context lines ends in lines that hold a single space, and
    a patch stripped of them is corrupt (`git apply` refuses it)."""
    source = '"""A module."""\n\nimport re\n\nLIMIT = 1\nWORD = re.compile("w")\n\n\ndef f():\n'
    repo = make_repo({"m.py": source + "    pass\n"})
    patch = repo.diff_of([("m.py", "LIMIT = 1", "LIMIT = 2")])
    assert patch.endswith('+LIMIT = 2\n WORD = re.compile("w")\n \n \n'), patch
    repo.git.run("apply", "--check", input=patch.encode())
