"""`andgate known-bad harvest` and `andgate known-bad mutants`: where fixtures come from.

The sample project gets a scripted history on top of its base: a regression and
its fix (the fix's revert is caught by an oracle), a fix no oracle notices, a fix
whose lines a later commit rewrote (its revert no longer applies), and a
test-only commit (not production code, never walked as a fix). The mutants test
adds a tiny module with one oracle test: one mutant is killed, one survives
because no oracle looks there, and one is equivalent-looking (`>=` -> `>` in an
absolute value) and survives too.
"""

from __future__ import annotations

import json

import pytest

from andgate.check.discrimination.mutate import mutants_of
from andgate.commands.cli import main
from andgate.commands.harvest import same_code
from andgate.commands.known_bad import run_harvest, run_mutants
from stories import AGENT_SLUG_TEST

MANIFEST = "tests/trust_manifest.yaml"
KNOWN_BAD = "tests/oracles/known_bad"
KEEPS_TAIL = "range(0, len(items), n)]"
DROPS_TAIL = "range(0, len(items) - len(items) % n, n)]"
MAGNITUDE = '''"""Absolute values."""


def magnitude(x):
    if x >= 0:
        return x
    return -x
'''


def scripted_history(sample) -> dict[str, str]:
    """Commits on top of the sample's base; returns subject -> sha."""
    repo, shas = sample.repo, {}

    def commit(subject: str) -> None:
        shas[subject] = repo.commit(subject)

    repo.edit("minilib/text.py", KEEPS_TAIL, DROPS_TAIL)
    commit("chunk: faster loop")
    repo.edit("minilib/text.py", DROPS_TAIL, KEEPS_TAIL)
    commit("Fix chunk dropping the short tail")
    repo.edit("minilib/text.py", 'r"[^a-z0-9]"', 'r"[^a-z0-9]+"')
    repo.write({"tests/test_slugify_agent.py": AGENT_SLUG_TEST})  # the fix's own test
    commit("Fix slugify doubling dashes")
    repo.edit("minilib/mathx.py", "return sum(xs) / len(xs)", "return sum(xs, 0.0) / len(xs)")
    commit("Fix mean of booleans")
    repo.edit(
        "minilib/mathx.py",
        "return sum(xs, 0.0) / len(xs)",
        "total = sum(xs, 0.0)\n    return total / len(xs)",
    )
    commit("mean: name the total")
    repo.edit("minilib/mathx.py", '"""Arithmetic mean', '"""The arithmetic mean')
    commit("docs: mean")
    repo.write({"tests/test_more.py": "def test_more():\n    assert True\n"})
    commit("tests: one more")
    return shas


@pytest.mark.slow
def test_harvest_proposes_the_caught_revert_and_lists_the_missed_and_stale(
    sample, capsys, fingerprint
):
    shas = scripted_history(sample)
    before = fingerprint(sample.path)
    out = sample.tmp / "proposals"
    code = run_harvest(
        sample.path,
        manifest=MANIFEST,
        since=shas["chunk: faster loop"],
        out=out,
        jobs=2,
        cache_dir=sample.tmp / "cache",
    )
    assert code == 0
    captured = capsys.readouterr()
    assert fingerprint(sample.path) == before
    report = json.loads((out / "report.json").read_text())
    assert report["schema"] == "andgate.harvest/1"
    assert report["commits_scanned"] == 6  # the test-only commit is walked, not replayed
    fates = {r["subject"]: r["fate"] for r in report["results"]}
    assert fates == FATES
    assert report["applied"] == 4
    killed = next(r for r in report["results"] if r["fate"] == "killed")
    assert killed["killed_by"] == ["tests/oracles/test_text_oracle.py::test_chunk_keeps_short_tail"]
    assert killed["files"] == ["minilib/text.py"]
    name = f"kb_{shas['Fix chunk dropping the short tail'][:10]}_fix_chunk_dropping_the_short_tail"
    assert killed["fixture"] == f"{name}.patch"
    patch = (out / f"{name}.patch").read_text()
    assert patch.startswith("diff --git a/minilib/text.py b/minilib/text.py")
    assert f"+    return [items[i : i + n] for i in {DROPS_TAIL}\n" in patch
    assert sorted(p.name for p in out.glob("*.patch")) == [f"{name}.patch"]
    assert len(list((out / "missed").glob("*.patch"))) == 1
    missed = next(r for r in report["results"] if r["fate"] == "missed")
    assert missed["shown_by"] == ["tests/test_slugify_agent.py::test_slugify_collapses_separators"]
    stale = next(r for r in report["results"] if r["fate"] == "stale")
    assert "does not apply to HEAD" in stale["problem"]
    md = (out / "report.md").read_text()
    assert "## Fixes the oracle class misses (1)" in md
    assert "## Let through, not shown to be a fix (1)" in md
    assert "Fix slugify doubling dashes" in md
    assert not list((sample.path / KNOWN_BAD).glob("kb_*_fix_*"))
    assert "harvest: 5/5 commits, 1 killed, 1 missed" in captured.err
    assert (
        "1 killed (proposed), 1 missed by the oracle class, 1 let through but not shown to "
        "be a fix, 1 no longer apply"
    ) in captured.out
    assert sample.repo.run("worktree", "list").count("\n") == 0
    assert not any(r["remembered"] for r in report["results"])

    # Again with the same cache: the reverts the oracle let through are not replayed,
    # and nothing changes fate (a remembered pass can never make a revert look caught).
    again = sample.tmp / "again"
    assert run_harvest(sample.path, manifest=MANIFEST, since=shas["chunk: faster loop"],
                       out=again, jobs=2, cache_dir=sample.tmp / "cache") == 0  # fmt: skip
    second = json.loads((again / "report.json").read_text())
    assert {r["subject"]: r["fate"] for r in second["results"]} == FATES
    remembered = {r["subject"] for r in second["results"] if r["remembered"]}
    assert remembered == {"Fix slugify doubling dashes", "mean: name the total"}
    assert "2 let through in an earlier run" in capsys.readouterr().out


FATES = {
    "Fix chunk dropping the short tail": "killed",
    "Fix slugify doubling dashes": "missed",  # its own test fails on the revert
    "Fix mean of booleans": "stale",
    "mean: name the total": "not shown to be a fix",  # a refactor: no test of its own
    "docs: mean": "cosmetic",  # skipped before any worktree
}


@pytest.mark.slow
def test_mutants_report_killed_and_survivors_and_write_the_killed_one(sample, capsys):
    sample.repo.write(
        {
            "minilib/absolute.py": MAGNITUDE,
            "tests/oracles/test_absolute_oracle.py": (
                "from minilib.absolute import magnitude\n\n\n"
                "def test_magnitude_of_a_positive_number():\n"
                "    assert magnitude(3) == 3\n"
            ),
        }
    )
    sample.repo.commit("absolute values, with an oracle")
    out = sample.tmp / "proposals"
    code = run_mutants(
        sample.path,
        manifest=MANIFEST,
        paths=("minilib/absolute.py",),
        write=1,
        out=out,
        jobs=2,
        cache_dir=sample.tmp / "cache",
    )
    assert code == 0
    text = capsys.readouterr().out
    report = json.loads((out / "mutants.json").read_text())
    status = {(m["line"], m["description"]): m["status"] for m in report["mutants"]}
    assert status == {
        (5, "`>=` -> `>`"): "survived",  # equivalent: magnitude(0) is 0 either way
        (5, "`0` -> `1`"): "survived",
        (6, "return None"): "killed",
        (7, "return None"): "survived",  # no oracle tries a negative number
    }
    assert report["functions"] == [
        {
            "path": "minilib/absolute.py",
            "function": "magnitude",
            "mutants": 4,
            "killed": 1,
            "survived": 3,
        }
    ]
    assert report["written"] == ["kb_mut_absolute_magnitude_6_return.patch"]
    patch = (out / "kb_mut_absolute_magnitude_6_return.patch").read_text()
    assert "-        return x\n+        return None\n" in patch
    assert "minilib/absolute.py  magnitude  4        1       3" in text
    assert "minilib/absolute.py:7  magnitude  return None" in text


def test_mutants_keep_the_rest_of_the_file_byte_identical():
    source = 'x = 1  # module level: not mutated\n\n\ndef f(a, b):\n    """Doc."""\n'
    source += "    if not a and b in (1, 2):  # keep\n        return True\n    return a\n"
    mutants = mutants_of("pkg/m.py", source)
    kinds = [(m.line, m.kind, m.description) for m in mutants]
    assert (6, "not", "dropped `not`") in kinds
    assert (6, "boolean", "`and` -> `or`") in kinds
    assert (6, "compare", "`in` -> `not in`") in kinds
    assert (7, "constant", "`True` -> `False`") in kinds
    assert all(line >= 6 for line, _, _ in kinds)
    compare = next(m for m in mutants if m.kind == "compare")
    assert "+    if not a and b not in (1, 2):  # keep\n" in compare.patch.decode()
    assert all(m.size == 2 for m in mutants)


@pytest.mark.slow
def test_an_out_folder_inside_known_bad_dir_or_a_symlink_is_refused(sample, capsys):
    inside = sample.path / KNOWN_BAD / "proposals"
    argv = ["known-bad", "harvest", "--repo", str(sample.path), "--out", str(inside)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"is inside known_bad_dir ({KNOWN_BAD})" in err
    link = sample.tmp / "link"
    link.symlink_to(sample.tmp)
    assert main(["known-bad", "mutants", "--repo", str(sample.path), "--out", str(link)]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert not inside.exists()


def test_a_revert_of_docstrings_comments_or_layout_is_cosmetic():
    before = b'def f(x):\n    """Doc."""\n    return x + 1  # one\n'
    assert same_code("m.py", before, b'def f(x):\n    """Other doc."""\n    return (x +\n 1)\n')
    assert same_code("m.py", before, b"def f(x):\n    return x + 1\n")
    assert not same_code("m.py", before, b"def f(x):\n    return x + 2\n")
    assert not same_code("notes.txt", b"a", b"b")


def test_help_names_the_options(capsys):
    for action, options in (
        ("harvest", ("--since REV", "--limit N", "--out DIR", "--budget S", "--item-timeout S")),
        ("mutants", ("--paths GLOB", "--budget S", "--write N", "--out DIR", "--item-timeout S")),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["known-bad", action, "--help"])
        assert exc.value.code == 0
        out = " ".join(capsys.readouterr().out.split())
        assert all(option in out for option in options), (action, out)


@pytest.mark.slow
def test_a_fix_whose_own_test_fails_on_head_too_is_not_shown_to_be_a_fix(sample):
    """Evidence is a test that fails on the revert *and passes on HEAD*: one that
    fails either way says nothing about the revert."""
    repo = sample.repo
    repo.edit("minilib/text.py", 'r"[^a-z0-9]"', 'r"[^a-z0-9]+"')
    broken = (
        "from minilib import slugify\n\n\n"
        "def test_always_fails():\n    assert slugify('a') == 'b'\n"
    )
    repo.write({"tests/test_slugify_agent.py": broken})
    since = repo.commit("Fix slugify doubling dashes, with a test that never passes")
    repo.write({"tests/test_more.py": "def test_more():\n    assert True\n"})
    repo.commit("tests: one more")
    out = sample.tmp / "proposals"
    code = run_harvest(sample.path, manifest=MANIFEST, since=f"{since}^", out=out, jobs=2)
    assert code == 0
    (result,) = json.loads((out / "report.json").read_text())["results"]
    assert (result["fate"], result["shown_by"]) == ("not shown to be a fix", [])


COUNT_DOWN = '''"""Counting down."""


def count_down(n):
    while n > 0:
        n -= 1
    return n
'''


@pytest.mark.slow
def test_a_mutant_that_makes_an_oracle_hang_is_killed_within_the_item_limit(sample, capsys):
    """Removing `n -= 1` loops forever: with check's item limit the oracle item times
    out, again alone (a kill), instead of holding a process until --timeout."""
    sample.repo.write(
        {
            "minilib/countdown.py": COUNT_DOWN,
            "tests/oracles/test_countdown_oracle.py": (
                "from minilib.countdown import count_down\n\n\n"
                "def test_count_down_from_three():\n"
                "    assert count_down(3) == 0\n"
            ),
        }
    )
    sample.repo.commit("count down, with an oracle")
    code = run_mutants(
        sample.path,
        manifest=MANIFEST,
        paths=("minilib/countdown.py",),
        write=1,
        out=sample.tmp / "proposals",
        jobs=2,
        timeout=40,
        item_timeout=3.0,
    )
    assert code == 0
    capsys.readouterr()
    report = json.loads((sample.tmp / "proposals" / "mutants.json").read_text())
    removed = [m for m in report["mutants"] if m["description"] == "removed `n -= 1`"]
    assert [m["status"] for m in removed] == ["killed"], report["mutants"]
    assert removed[0]["killed_by"] == [
        "tests/oracles/test_countdown_oracle.py::test_count_down_from_three"
    ]
