"""`andgate classify`: HEAD's trust inventory alone, with why items are not trusted.

Runs on the sample project (real git, a real collect-only pytest process in a
temporary worktree). Exit codes: 0 ok, 2 expired freeze, 3 no oracle item,
4 invalid manifest or freeze file.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from andgate.commands.classify import run_classify
from andgate.commands.cli import main
from andgate.commands.sample import SAMPLE_TODAY
from harness import FREEZE

TODAY = dt.date.fromisoformat(SAMPLE_TODAY)
MANIFEST = "tests/trust_manifest.yaml"
UNACCEPTED_PROPERTY = """\
import pytest

# INVARIANT: nobody accepted this one
@pytest.mark.parametrize("seed", [1])
def test_unaccepted(seed):
    assert seed
"""


def classify(sample, today: dt.date = TODAY, as_json: bool = False, rev: str | None = None) -> int:
    return run_classify(sample.path, manifest=MANIFEST, today=today, as_json=as_json, rev=rev)


def test_prints_a_table_per_class_from_a_commit_with_rev(sample, capsys, fingerprint):
    """With --rev, a dirty working tree (a broken manifest, a deleted test) changes
    nothing: classify reads the commit, in a temporary worktree, and leaves the tree
    as it was."""
    sample.repo.write({MANIFEST: "version: 2\n"})
    sample.repo.delete("tests/test_misc.py")
    before = fingerprint(sample.path)
    assert classify(sample, rev="HEAD") == 0
    out = capsys.readouterr().out
    assert out.startswith(f"andgate classify: --rev HEAD ({sample.base[:12]}), as committed\n")
    assert f"config {MANIFEST} from that tree" in out
    assert "  oracle             8      2\n" in out
    assert "  property           3      1\n" in out
    assert "  frozen_flake       1      1\n" in out
    assert "  untrusted          1      1\n" in out
    assert "tests/oracles/test_text_oracle.py  4" in out
    assert "tests/test_timing.py::test_mean_is_fast  live freeze" in out
    assert "15 days left" in out
    assert "tests/test_misc.py  1  not trusted: no trust rule matches" in out
    assert out.endswith("result: ok\n")
    assert fingerprint(sample.path) == before
    assert sample.repo.run("worktree", "list").count("\n") == 0


def test_judges_the_working_tree_with_its_uncommitted_edits(sample, capsys, fingerprint):
    """Without --rev: the working tree as it is (a deleted test, a new untracked one,
    an edited manifest), said on the first line; the user's files and index stay."""
    sample.repo.delete("tests/test_misc.py")
    sample.repo.write({"tests/test_new.py": "def test_new():\n    pass\n"})
    sample.repo.edit(MANIFEST, "require_property_class: true", "require_property_class: false")
    before = fingerprint(sample.path)
    index = (sample.path / ".git" / "index").read_bytes()
    assert classify(sample) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(f"andgate classify: the working tree (HEAD {sample.base[:12]}")
    assert "uncommitted edits included" in first
    assert "tests/test_misc.py" not in out
    assert "tests/test_new.py  1  not trusted: no trust rule matches" in out
    assert fingerprint(sample.path) == before
    assert (sample.path / ".git" / "index").read_bytes() == index


def test_json_inventory_and_exit_2_for_an_expired_freeze(sample, capsys):
    assert classify(sample, today=dt.date(2026, 12, 10), as_json=True) == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["schema"] == "andgate.inventory/1"
    assert payload["head"] == sample.base
    assert payload["counts"] == {"oracle": 8, "property": 3, "frozen_flake": 0, "untrusted": 2}
    timing = [i for i in payload["items"] if i["file"] == "tests/test_timing.py"]
    assert timing == [
        {
            "nodeid": "tests/test_timing.py::test_mean_is_fast",
            "file": "tests/test_timing.py",
            "class": "untrusted",
            "why": "no trust rule matches",
        }
    ]
    (expired,) = payload["freezes"]["expired"]
    assert expired.startswith("'tests/test_timing.py::test_mean_is_fast' expired on 2026-12-10")
    assert payload["exit_code"] == 2


def test_exit_3_when_no_oracle_item_is_collected(sample, capsys):
    sample.repo.edit(MANIFEST, '"tests/oracles/**/*.py"', '"tests/golden/**/*.py"')
    sample.repo.commit("oracle globs match nothing")
    assert main(["classify", "--repo", str(sample.path), "--today", SAMPLE_TODAY]) == 3
    out = capsys.readouterr().out
    assert "oracle: none" in out
    assert "result: no oracle item collected (exit 3)" in out
    assert "tests/oracles/test_math_oracle.py  4  not trusted: no trust rule matches" in out


@pytest.mark.parametrize("as_json", [False, True])
def test_exit_4_for_an_invalid_manifest_naming_file_and_key(sample, capsys, as_json):
    sample.repo.edit(MANIFEST, "  oracle:\n", "  oracel:\n")
    sample.repo.commit("typo")
    assert classify(sample, as_json=as_json) == 4
    captured = capsys.readouterr()
    assert f"{MANIFEST} (at " in captured.err
    assert "unknown key 'oracel' under classes; did you mean 'oracle'?" in captured.err
    if as_json:
        assert json.loads(captured.out)["exit_code"] == 4


def test_exit_4_for_an_invalid_freeze_with_ineffective_and_untrusted_reasons(sample, capsys):
    """One run shows every finding: an invalid entry, a freeze that matches only
    oracle items, and a property file whose invariant nobody accepted."""
    bad = (
        '  - id: "test_mean"\n    reason: "r"\n    first_seen: "2026-11-20"\n'
        '    expires: "2026-12-01"\n    owner: "o"\n'
        '  - id: "test_clamp_inside_range"\n    reason: "r"\n    first_seen: "2026-11-20"\n'
        '    expires: "2027-01-30"\n    owner: "o"\n'
    )
    sample.repo.write(
        {
            "tests/flakes/freeze.yaml": FREEZE + bad,
            "tests/properties/test_unaccepted.py": UNACCEPTED_PROPERTY,
        }
    )
    sample.repo.commit("freeze and property problems")
    assert classify(sample) == 4
    out = capsys.readouterr().out
    assert "invalid freeze entries (FREEZE_INVALID):" in out
    assert "freezes[2] (id 'test_clamp_inside_range'): freeze lasts 71 days" in out
    assert "ineffective freezes (FREEZE_INEFFECTIVE):" in out
    assert "freeze 'test_mean' matches only oracle items; it freezes nothing" in out
    assert (
        "tests/properties/test_unaccepted.py  1  not trusted: property file has no "
        "accepted invariant"
    ) in out
    assert "result: the freeze file is invalid (exit 4)" in out


def test_help_and_errors_outside_a_repository(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["classify", "--help"])
    assert exc.value.code == 0
    assert "4 invalid manifest or freeze file" in capsys.readouterr().out.replace("\n", " ")
    assert main(["classify", "--repo", str(tmp_path)]) == 5  # could not run, not "expired"
    assert "not a git repository" in capsys.readouterr().err
