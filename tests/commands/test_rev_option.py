"""`--rev REV` on every maintainer command (issue 37 item 4, issue 43 item 8; contract
section 3): `lock verify`, `doctor`, `known-bad harvest` and `known-bad mutants` judge
the commit REV names, not the working tree, and say so on their first line;
`lock update --rev` refuses in one line, exit 2 (docs/commands.md). In each test the
working tree is made to disagree with REV, so only a command that read REV passes.
(`classify` and `replay-known-bad` have theirs in their own test files.)"""

from __future__ import annotations

import datetime as dt
import json

from andgate.commands.cli import main
from andgate.commands.doctor import run_doctor
from andgate.commands.known_bad import run_harvest, run_mutants

MANIFEST = "tests/trust_manifest.yaml"
FIXTURES = "tests/oracles/fixtures"
LOCK = "tests/oracles/locks.sha256"
WORKFLOW = ".github/workflows/andgate.yml"


def as_committed(sample, rev: str = "HEAD") -> str:
    sha = sample.repo.run("rev-parse", rev).strip()
    return f"--rev {rev} ({sha[:12]}), as committed"


# -- lock ----------------------------------------------------------------------------------


def test_lock_verify_rev_checks_the_commits_lock_and_fixtures(sample, capsys):
    sample.repo.write({f"{FIXTURES}/new.json": "{}\n"})  # the working tree: one file unlocked
    assert main(["lock", "verify", "--repo", str(sample.path)]) == 1
    assert "added    tests/oracles/fixtures/new.json" in capsys.readouterr().out

    assert main(["lock", "verify", "--repo", str(sample.path), "--rev", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        f"andgate lock verify: {LOCK} matches 1 file under {FIXTURES}; {as_committed(sample)}"
    )


def test_lock_verify_rev_reports_a_commit_whose_fixtures_outran_its_lock(sample, capsys):
    sample.repo.write({f"{FIXTURES}/new.json": "{}\n"})
    sample.repo.commit("a fixture without its lock line")
    sample.repo.delete(f"{FIXTURES}/new.json")  # the working tree matches again
    assert main(["lock", "verify", "--repo", str(sample.path)]) == 0
    capsys.readouterr()
    assert main(["lock", "verify", "--repo", str(sample.path), "--rev", "HEAD"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith(f"; {as_committed(sample)}:")
    assert "added    tests/oracles/fixtures/new.json (not in the lock)" in out
    assert "check out HEAD and run `andgate lock update` there" in out
    assert main(["lock", "verify", "--repo", str(sample.path), "--rev", "HEAD~1"]) == 0


def test_lock_verify_rev_names_an_unknown_rev_in_one_line(sample, capsys):
    assert main(["lock", "verify", "--repo", str(sample.path), "--rev", "nosuchref"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "nosuchref" in err


def test_lock_update_refuses_rev_in_one_line_and_writes_nothing(sample, capsys):
    before = (sample.path / LOCK).read_bytes()
    sample.repo.write({f"{FIXTURES}/new.json": "{}\n"})
    assert main(["lock", "update", "--repo", str(sample.path), "--rev", "HEAD"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("andgate: lock update --rev HEAD: the lock is written in the working")
    assert "andgate lock verify --rev HEAD" in line
    assert (sample.path / LOCK).read_bytes() == before


# -- doctor --------------------------------------------------------------------------------


def test_doctor_rev_reads_the_commits_files_not_the_working_tree(sample, capsys):
    sample.repo.write({WORKFLOW: "jobs: {gate: {steps: [{run: andgate check}]}}\n"})
    sample.repo.commit("gate with andgate")
    # The working tree disagrees: the workflow gone, a fixture the lock does not pin.
    sample.repo.delete(WORKFLOW)
    sample.repo.write({f"{FIXTURES}/new.json": "{}\n"})
    today = dt.date(2026, 12, 1)

    run_doctor(sample.path, manifest=MANIFEST, today=today, jobs=2)
    worktree = capsys.readouterr().out
    assert worktree.splitlines()[0].startswith("andgate doctor: the working tree (HEAD ")
    assert "CI: no workflow" in worktree and "LOCK_MISMATCH" in worktree

    assert main(["doctor", "--repo", str(sample.path), "--rev", "HEAD", "--jobs", "2"]) in (0, 1)
    committed = capsys.readouterr().out
    assert committed.splitlines()[0] == f"andgate doctor: {as_committed(sample)}"
    assert "CI: no workflow" not in committed and "LOCK_MISMATCH" not in committed


def test_doctor_rev_with_a_broken_manifest_still_names_the_commit(sample, capsys):
    sample.repo.write({MANIFEST: "version: 2\n"})
    sample.repo.commit("a manifest of the wrong version")
    code = run_doctor(
        sample.path, manifest=MANIFEST, today=dt.date(2026, 12, 1), jobs=1, rev="HEAD"
    )
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0] == f"andgate doctor: {as_committed(sample)}"
    assert "MANIFEST_INVALID" in out


# -- known-bad -----------------------------------------------------------------------------

KEEPS_TAIL = "range(0, len(items), n)]"
DROPS_TAIL = "range(0, len(items) - len(items) % n, n)]"


def test_harvest_rev_reverts_on_the_commit_not_the_working_tree(sample, capsys):
    repo = sample.repo
    repo.edit("minilib/text.py", KEEPS_TAIL, DROPS_TAIL)
    since = repo.commit("chunk: faster loop")
    repo.edit("minilib/text.py", DROPS_TAIL, KEEPS_TAIL)
    repo.commit("Fix chunk dropping the short tail")
    # Uncommitted: the fixed line rewritten, so the fix's revert would not apply here.
    repo.edit("minilib/text.py", KEEPS_TAIL, "range(0, len(items), n or 1)]")
    out = sample.tmp / "proposals"
    code = run_harvest(sample.path, manifest=MANIFEST, since=since, out=out, jobs=2, rev="HEAD")
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == f"andgate known-bad harvest: {as_committed(sample)}"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    fates = {r["subject"]: r["fate"] for r in report["results"]}
    assert fates == {"Fix chunk dropping the short tail": "killed"}


MAGNITUDE = "def magnitude(x):\n    if x >= 0:\n        return x\n    return -x\n"


def test_mutants_rev_mutates_the_commits_code_not_the_working_tree(sample, capsys):
    sample.repo.write(
        {
            "minilib/absolute.py": MAGNITUDE,
            "tests/oracles/test_absolute_oracle.py": (
                "from minilib.absolute import magnitude\n\n\n"
                "def test_magnitude():\n    assert magnitude(3) == 3\n"
            ),
        }
    )
    sample.repo.commit("absolute values, with an oracle")
    sample.repo.delete("minilib/absolute.py")  # uncommitted: nothing there to mutate
    out = sample.tmp / "proposals"
    code = run_mutants(
        sample.path,
        manifest=MANIFEST,
        paths=("minilib/absolute.py",),
        write=1,
        out=out,
        jobs=2,
        rev="HEAD",
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == f"andgate known-bad mutants: {as_committed(sample)}"
    report = json.loads((out / "mutants.json").read_text(encoding="utf-8"))
    assert [f["function"] for f in report["functions"]] == ["magnitude"]
