"""`andgate check` end to end on the sample project: one test per reason code.

Each test makes an agent change on top of the sample's base commit and runs the
whole gate (real git, real pytest processes). The honest change must allow;
every other change must block with the reason the contract names.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from andgate.commands.cli import main
from andgate.commands.sample import SampleRepo
from stories import honest_fix


def test_honest_change_allows_with_every_bit(honest_run):
    run = honest_run
    assert run.decision == "allow", run.payload["reasons"]
    assert run.payload["reasons"] == []
    assert run.payload["warnings"] == []  # its agent test discriminates (a mutant kills it)
    assert all(run.payload["bits"].values())
    assert run.verdict.exit_code == 0
    assert run.payload["counts"] == {"oracle": 8, "property": 3, "frozen_flake": 1, "untrusted": 2}


def test_artifacts_are_complete_and_self_ignoring(honest_run):
    run = honest_run
    names = {p.name for p in run.artifacts.iterdir()}
    assert {
        "trust_inventory.json",
        "oracle.xml",
        "property.xml",
        "untrusted.xml",
        "flake.xml",
        "property_seeds.json",
        "known_bad.json",
        "verdict.json",
        "summary.md",
        ".gitignore",
    } <= names
    assert run.payload["schema"] == "andgate.verdict/1"
    assert run.payload["base"] == run.base
    assert run.payload["today"] == "2026-11-25"
    inventory = run.artifact("trust_inventory.json")["items"]
    frozen = [i for i in inventory if i["class"] == "frozen_flake"]
    assert frozen == [
        {
            "nodeid": "tests/test_timing.py::test_mean_is_fast",
            "file": "tests/test_timing.py",
            "class": "frozen_flake",
            "why": "live freeze 'tests/test_timing.py::test_mean_is_fast'",
            "outcome": "failed",
        }
    ]
    known_bad = run.artifact("known_bad.json")["fixtures"]
    assert [(f["name"], f["applied"], f["bites"]) for f in known_bad] == [
        ("kb_chunk_drops_tail", True, True),
        ("kb_clamp_ignores_lo", True, True),
    ]
    seeds = run.artifact("property_seeds.json")
    assert seeds["files"]["tests/properties/test_chunk_property.py"] == {
        f"tests/properties/test_chunk_property.py::test_chunk_roundtrip[{s}]": [s]
        for s in (1, 2, 3)
    }
    assert "<testcase" in run.artifact("oracle.xml")
    summary = run.artifact("summary.md")
    assert summary.startswith("# andgate: ✅ ALLOW")


def test_user_working_tree_and_index_stay_byte_identical(sample, fingerprint):
    head = sample.change(honest_fix)
    (sample.path / "minilib" / "text.py").write_text("# uncommitted edit\n")
    (sample.path / "scratch.txt").write_text("untracked\n")
    before = fingerprint(sample.path)
    index_before = (sample.path / ".git" / "index").read_bytes()
    status_before = sample.repo.run("status", "--porcelain")
    refs_before = sample.repo.run("for-each-ref")
    run = sample.gate(head, artifacts=sample.path / "artifacts")
    assert fingerprint(sample.path) == before
    assert (sample.path / ".git" / "index").read_bytes() == index_before
    assert sample.repo.run("status", "--porcelain") == status_before
    assert sample.repo.run("worktree", "list").count("\n") == 0
    assert sample.repo.run("for-each-ref") == refs_before
    assert sample.repo.run("stash", "list") == ""
    assert run.decision == "allow"
    assert [w["code"] for w in run.payload["warnings"]] == ["UNCOMMITTED_CHANGES"]


def test_tautological_agent_tests_do_not_hide_a_failing_oracle(sample):
    def cheat(repo: SampleRepo) -> None:
        repo.edit("minilib/text.py", "return [items[i : i + n]", "return [items[i : i + n][:1]")
        repo.write(
            {
                "tests/test_chunk_agent.py": "from minilib import chunk\n\n"
                "def test_type():\n    assert isinstance(chunk([1], 1), list)\n"
            }
        )

    run = sample.gate(sample.change(cheat))
    assert run.decision == "block"
    assert "ORACLE_FAILED" in run.codes
    assert any(
        "test_text_oracle.py::test_chunk_even failed" in d for d in run.details("ORACLE_FAILED")
    )
    assert run.payload["bits"]["oracle_ok"] is False
    assert "ORACLE_AUTHORSHIP" not in run.codes


def test_oracle_edited_with_production_code_is_oracle_authorship(sample):
    def cheat(repo: SampleRepo) -> None:
        repo.edit("minilib/mathx.py", "max(lo, min(x, hi))", "min(x, hi)")
        repo.edit(
            "tests/oracles/test_math_oracle.py", "def test_mean():", "def test_mean():  # tweaked"
        )

    run = sample.gate(sample.change(cheat))
    assert "ORACLE_AUTHORSHIP" in run.codes
    detail = run.details("ORACLE_AUTHORSHIP")[0]
    assert detail.startswith("tests/oracles/test_math_oracle.py changed")
    assert "mixed change" in detail
    # base's version of the oracle still runs against head's production code
    assert "ORACLE_FAILED" in run.codes


def test_owner_approval_lifts_authorship_but_not_neutralization(sample):
    """An oracle assertion weakened and an oracle item deleted (renamed away), in a
    trust-root-only change: base's oracle file still runs; the owner's approval
    lifts the authorship and the deletion, never the neutralized fixture."""

    def weaken_and_delete(repo: SampleRepo) -> None:
        repo.edit(
            "tests/oracles/test_text_oracle.py",
            "assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]",
            "assert chunk([1, 2, 3, 4, 5], 2)",
        )
        repo.edit(
            "tests/oracles/test_text_oracle.py", "def test_slugify_words():", "def _disabled():"
        )

    head = sample.change(weaken_and_delete)
    unapproved = sample.gate(head)
    assert "ORACLE_AUTHORSHIP" in unapproved.codes
    assert "trust-root-only change" in unapproved.details("ORACLE_AUTHORSHIP")[0]
    assert unapproved.payload["bits"]["oracle_ok"] is True  # base's oracle file still runs
    approved = sample.gate(head, approved_by=("alice",))
    assert approved.codes == ["ORACLE_NEUTRALIZED"]  # the approved deletion is no failure
    assert approved.details("ORACLE_NEUTRALIZED") == [
        "kb_chunk_drops_tail left every oracle item passing"
    ]
    assert approved.payload["bits"]["known_bad_ok"] is False


# Decided without a pytest process, so tested there: a conftest.py alone and
# pyproject.toml's tables (tests/trust/test_paths_and_authorship.py), fixture bytes
# against the lock (tests/commands/test_lock.py), a manifest edit with a non-owner's
# approval, fail_closed_untrusted off and no known-bad fixture
# (tests/check/test_gate_before_tests.py). The conftest, pyproject and lock reasons end
# to end: tests/end_to_end/test_gaming.py's rows.


def test_property_failure(sample):
    head = sample.change(
        lambda r: r.edit("minilib/text.py", "items = list(seq)", "items = list(seq)[:7]")
    )
    run = sample.gate(head)
    assert "PROPERTY_FAILED" in run.codes
    assert run.payload["bits"]["property_ok"] is False


def test_empty_seeds_is_no_seeds(sample):
    def cheat(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.edit("tests/properties/test_chunk_property.py", "SEEDS = [1, 2, 3]", "SEEDS = []")

    run = sample.gate(sample.change(cheat))
    assert "NO_SEEDS" in run.codes
    assert run.details("NO_SEEDS") == [
        "tests/properties/test_chunk_property.py ran no item with a recorded seed"
    ]
    assert "ORACLE_AUTHORSHIP" not in run.codes and "TRUST_ROOT_CHANGED" not in run.codes


def test_property_without_accepted_invariant_is_untrusted(sample):
    head = sample.change(
        lambda r: r.edit(
            "tests/properties/test_chunk_property.py",
            "# INVARIANT: chunk(seq, n)",
            "# INVARIANT: chunk(seq, m)",
        )
    )
    run = sample.gate(head)
    assert run.codes == ["NO_PROPERTY"]
    items = run.artifact("trust_inventory.json")["items"]
    reasons = {i["why"] for i in items if i["file"].startswith("tests/properties/")}
    assert reasons == {"property file has no accepted invariant"}


def test_freeze_invalid_blocks_and_one_that_matches_only_an_oracle_is_ineffective(sample):
    sample.repo.edit("tests/flakes/freeze.yaml", 'expires: "2026-12-10"', 'expires: "2027-12-10"')
    with (sample.path / "tests/flakes/freeze.yaml").open("a") as freezes:
        freezes.write(
            "  - id: test_mean\n    reason: r\n    first_seen: 2026-11-20\n"
            "    expires: 2026-12-01\n    owner: o\n"
        )
    sample.base = sample.repo.commit("too long a freeze, and a freeze of an oracle")
    run = sample.gate(sample.change(honest_fix))
    assert "FREEZE_INVALID" in run.codes
    [invalid] = run.details("FREEZE_INVALID")
    assert "tests/test_timing.py::test_mean_is_fast" in invalid
    assert "over max_freeze_days (28)" in invalid
    assert {
        "code": "FREEZE_INEFFECTIVE",
        "detail": "freeze 'test_mean' matches only oracle items; it freezes nothing",
    } in run.payload["warnings"]


# jobs do not change the verdict (2, the default, is every other test's)
@pytest.mark.parametrize("jobs", [1, 3])
def test_untrusted_failure_blocks_without_blaming_oracles(sample, jobs):
    head = sample.change(
        lambda r: r.write(
            {"tests/test_agent.py": ("def test_wrong_belief():\n    assert 1 + 1 == 3\n")}
        )
    )
    run = sample.gate(head, jobs=jobs)
    assert run.codes == ["UNTRUSTED_FAILED"]
    assert run.details("UNTRUSTED_FAILED")[0].startswith(
        "tests/test_agent.py::test_wrong_belief failed"
    )


def test_collection_error_blocks(sample):
    head = sample.change(lambda r: r.write({"tests/test_broken.py": "import nonexistent_mod\n"}))
    run = sample.gate(head)
    assert "COLLECTION_ERROR" in run.codes
    assert "tests/test_broken.py" in run.details("COLLECTION_ERROR")[0]


def test_parametrisation_read_from_production_code_is_pinned_by_base(sample):
    sample.repo.write(
        {
            "minilib/cases.py": "SLUG_CASES = [('A b', 'a-b'), ('X', 'x')]\n",
            "tests/oracles/test_slug_cases.py": (
                "import pytest\nfrom minilib import slugify\n"
                "from minilib.cases import SLUG_CASES\n\n"
                "@pytest.mark.parametrize('text, slug', SLUG_CASES)\n"
                "def test_slug(text, slug):\n    assert slugify(text) == slug\n"
            ),
        }
    )
    sample.base = sample.repo.commit("oracle reading production cases")
    head = sample.change(lambda r: r.edit("minilib/cases.py", ", ('X', 'x')", ""))
    run = sample.gate(head)
    assert run.codes == ["ORACLE_FAILED"]
    assert run.details("ORACLE_FAILED") == [
        "tests/oracles/test_slug_cases.py::test_slug[X-x] missing on head"
    ]


@pytest.mark.both_known_bad
def test_known_bad_stale_when_fixture_no_longer_applies(sample):
    head = sample.change(
        lambda r: r.edit(
            "minilib/mathx.py", "return max(lo, min(x, hi))", "return min(max(x, lo), hi)"
        )
    )
    run = sample.gate(head)
    assert run.codes == ["KNOWN_BAD_STALE"]
    assert run.details("KNOWN_BAD_STALE")[0].startswith("kb_clamp_ignores_lo does not apply")


def test_known_bad_not_required_skips_replay(sample):
    sample.repo.edit(
        "tests/trust_manifest.yaml",
        "oracle_must_fail_known_bad: true",
        "oracle_must_fail_known_bad: false",
    )
    sample.repo.delete("tests/oracles/known_bad/kb_chunk_drops_tail.patch")  # its only one
    sample.base = sample.repo.commit("no replay")
    run = sample.gate(sample.change(honest_fix))
    assert run.decision == "allow"
    assert run.artifact("known_bad.json")["fixtures"] == []


def test_no_oracle_and_no_property(sample):
    sample.repo.edit(
        "tests/trust_manifest.yaml",
        'globs: ["tests/oracles/**/*.py"]',
        'globs: ["nowhere/**/*.py"]',
    )
    sample.repo.edit(
        "tests/trust_manifest.yaml", 'globs: ["tests/properties/**/*.py"]', "globs: []"
    )
    sample.base = sample.repo.commit("empty classes")
    run = sample.gate(sample.change(honest_fix))
    assert {"NO_ORACLE", "NO_PROPERTY"} <= set(run.codes)


def test_manifest_invalid_is_exit_2_and_still_writes_artifacts(sample):
    sample.repo.edit("tests/trust_manifest.yaml", "  oracle:\n", "  oracel:\n")
    sample.base = sample.repo.commit("typo")
    run = sample.gate(sample.change(honest_fix))
    assert run.codes == ["MANIFEST_INVALID"]
    assert run.details("MANIFEST_INVALID") == [
        f"tests/trust_manifest.yaml (at {sample.base[:12]}): unknown key 'oracel' under "
        "classes; did you mean 'oracle'?"
    ]
    assert run.verdict.exit_code == 2
    assert not any(run.payload["bits"].values())
    assert (run.artifacts / "summary.md").exists()


def test_unknown_base_is_gate_error(sample):
    run = sample.gate(base="no-such-ref")
    assert run.codes == ["GATE_ERROR"]
    assert "--base 'no-such-ref' is not a commit" in run.details("GATE_ERROR")[0]
    assert run.verdict.exit_code == 2


def test_timeout_is_gate_error_naming_the_class(sample):
    head = sample.change(
        lambda r: r.write(
            {
                "tests/test_hang.py": (
                    "import threading\n\ndef test_hangs():\n    threading.Event().wait()\n"
                )
            }
        )
    )
    run = sample.gate(head, timeout=4)
    assert "GATE_ERROR" in run.codes
    assert any(
        "untrusted pytest process ran past the 4s timeout" in d for d in run.details("GATE_ERROR")
    )


def test_hypothesis_seed_is_derived_from_base_and_recorded(hypothesis_plugin, sample):
    def add_hypothesis_property(repo: SampleRepo) -> None:
        repo.write(
            {
                "tests/properties/test_mean_hyp.py": (
                    "from hypothesis import given, strategies as st\nfrom minilib import mean\n\n"
                    "# INVARIANT: " + "chunk(seq, n) returns pieces of exactly n items except a "
                    "shorter last piece, and joining them gives seq back\n"
                    "@given(st.lists(st.integers(-5, 5), min_size=1))\n"
                    "def test_mean_bounded(xs):\n    assert min(xs) <= mean(xs) <= max(xs)\n"
                )
            }
        )

    run = sample.gate(sample.change(add_hypothesis_property))
    seed = int(sample.base[:8], 16)
    seeds = run.artifact("property_seeds.json")
    assert seeds["hypothesis_seed"] == seed
    assert seeds["files"]["tests/properties/test_mean_hyp.py"] == {
        "tests/properties/test_mean_hyp.py::test_mean_bounded": [f"hypothesis:{seed}"]
    }
    assert run.decision == "allow", run.payload["reasons"]


def test_an_expired_freeze_blocks_on_the_terminal_with_exit_1(sample, capsys, monkeypatch):
    """Through the CLI with its defaults (the discrimination report on)."""
    head = sample.change(honest_fix)
    monkeypatch.chdir(sample.path)
    artifacts = sample.tmp / "cli-artifacts"
    argv = ["check", "--base", sample.base, "--head", head, "--today", "2026-12-10"]
    code = main([*argv, "--artifacts", str(artifacts)])
    out = capsys.readouterr().out
    assert code == 1, out
    first, rest = out.split("\n", 1)
    assert first == f"andgate check: base {sample.base[:12]} (--base), head {head[:12]}"
    assert rest.startswith("andgate: BLOCK\n  FREEZE_EXPIRED: ")
    payload = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
    expired = [r["detail"] for r in payload["reasons"] if r["code"] == "FREEZE_EXPIRED"]
    assert expired[0].startswith("'tests/test_timing.py::test_mean_is_fast' expired on 2026-12-10")
    # an expired freeze freezes nothing: the flaky test is untrusted again
    assert "UNTRUSTED_FAILED" in {r["code"] for r in payload["reasons"]}
    assert payload["discrimination"]["items"], payload["discrimination"]


def test_approval_from_environment_and_json_on_stdout(sample, capsys, monkeypatch):
    head = sample.change(lambda r: r.write({"tests/conftest.py": "# reviewed\n"}))
    monkeypatch.chdir(sample.path)
    monkeypatch.setenv("ANDGATE_APPROVED_BY", "bob, alice")
    code = main(
        [
            "check",
            "--base",
            sample.base,
            "--head",
            head,
            "--json",
            "--today",
            "2026-11-25",
            "--artifacts",
            str(sample.tmp / "env-artifacts"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    payload = json.loads(out)
    assert payload["verdict"] == "allow" and payload["reasons"] == []
    assert [(a["login"], a["source"]) for a in payload["approvals"]] == [("alice", "env")]


def test_python_dash_m_andgate_is_the_cli():
    proc = subprocess.run(
        [sys.executable, "-m", "andgate", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and "check" in proc.stdout


def test_an_internal_crash_is_gate_error_with_artifacts_and_traceback(sample, monkeypatch):
    import andgate.check.pipeline

    def explode(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(andgate.check.plan.phase, "make_plan", explode)
    run = sample.gate(sample.change(honest_fix))
    assert run.codes == ["GATE_ERROR"]
    assert run.details("GATE_ERROR") == ["internal error: ZeroDivisionError: boom"]
    assert run.verdict.exit_code == 2
    assert "ZeroDivisionError" in (run.artifacts / "logs" / "gate_error.log").read_text()
    assert sample.repo.run("worktree", "list").count("\n") == 0


def test_an_error_outside_the_gate_is_one_line_and_exit_2(sample, capsys, monkeypatch):
    import andgate.check.pipeline
    import andgate.check.plan.phase

    def explode(*args, **kwargs):
        raise RuntimeError("reporter broke\nsecond line")

    def gate_error(*args, **kwargs):
        raise andgate.check.pipeline.AndgateError("no pytest process needed")

    monkeypatch.setattr(andgate.check.pipeline, "write_artifacts", explode)
    # the verdict is not the point
    monkeypatch.setattr(andgate.check.plan.phase, "make_plan", gate_error)
    monkeypatch.chdir(sample.path)
    head = sample.change(honest_fix)
    code = main(["check", "--base", sample.base, "--head", head, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == "andgate: internal error: RuntimeError: reporter broke\n"


def test_a_check_reads_its_blobs_through_one_long_lived_cat_file(sample, monkeypatch):
    """About fifteen reads of the manifest, the pytest configuration and the changed
    files, none of them a git process of its own."""
    from andgate import git as git_module

    one_shot, started = [], []
    real_run, real_init = git_module.Git.run, git_module.CatFile.__init__

    def run(self, *args, **kwargs):
        if "cat-file" in args:
            one_shot.append(args)
        return real_run(self, *args, **kwargs)

    def init(self, git, option):
        started.append(option)
        real_init(self, git, option)

    monkeypatch.setattr(git_module.Git, "run", run)
    monkeypatch.setattr(git_module.CatFile, "__init__", init)
    run_ = sample.gate(sample.change(honest_fix))
    assert run_.decision == "allow"
    assert one_shot == []
    assert sorted(started) == ["--batch", "--batch-check"]
