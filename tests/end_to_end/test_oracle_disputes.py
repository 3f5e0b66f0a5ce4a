"""Oracle disputes end to end (contract section 4): an honest change that leaves a
contradicting oracle failing says so in the disputes file; the gate still blocks, with
ORACLE_DISPUTED and the change's reason, and never lets a dispute lift anything."""

from __future__ import annotations

import pytest

from andgate.commands.sample import SampleRepo
from stories import honest_fix

pytestmark = pytest.mark.slow  # every test here runs whole checks

DISPUTED = "tests/oracles/test_text_oracle.py::test_slugify_words"
DISPUTES_FILE = ".andgate/disputes.yaml"
REASON = "The task (SPEC-12) says slugify joins words with underscores: hello_world."
UNDERSCORE_TEST = '''\
"""Agent-written test (untrusted)."""

from minilib import slugify


def test_slugify_joins_with_underscores():
    assert slugify("Hello World") == "hello_world"
'''


def underscore_slugify(repo: SampleRepo) -> None:
    """The task says underscores; the oracle test_slugify_words says dashes."""
    repo.edit("minilib/text.py", '"-", text.lower()).strip("-")', '"_", text.lower()).strip("_")')
    repo.write({"tests/test_slugify_agent.py": UNDERSCORE_TEST})


def disputes_yaml(*entries: tuple[str, str]) -> str:
    lines = ["disputes:"]
    for nodeid, reason in entries:
        lines += [f'  - nodeid: "{nodeid}"', f'    reason: "{reason}"']
    return "\n".join(lines) + "\n"


def disputing(*entries: tuple[str, str], then=underscore_slugify):  # type: ignore[no-untyped-def]
    def apply(repo: SampleRepo) -> None:
        then(repo)
        repo.write({DISPUTES_FILE: disputes_yaml(*entries)})

    return apply


def test_a_disputed_failing_oracle_is_oracle_disputed_not_oracle_failed(sample):
    run = sample.gate(sample.change(disputing((DISPUTED, REASON))))
    assert run.decision == "block"
    assert run.codes[0] == "ORACLE_DISPUTED"  # shown first among the reasons
    assert not any(DISPUTED in d for d in run.details("ORACLE_FAILED")), run.payload["reasons"]
    (detail,) = run.details("ORACLE_DISPUTED")
    assert detail.startswith(f"{DISPUTED} failed: ")  # annotations find the test's line
    assert REASON in detail
    assert run.payload["bits"]["oracle_ok"] is False
    assert run.payload["bits"]["authorship_ok"] is True  # the disputes file is no trust root
    assert "TRUST_ROOT_CHANGED" not in run.codes and "ORACLE_AUTHORSHIP" not in run.codes
    (dispute,) = run.payload["disputes"]
    assert dispute["nodeid"] == DISPUTED and dispute["reason"] == REASON
    assert dispute["status"] == "disputed" and "hello_world" in dispute["failure"]
    summary = run.artifact("summary.md")
    assert summary.index("## Disputed oracle tests") < summary.index("## Why it blocks")
    assert "def test_slugify_words():" in summary  # its source at base
    assert "no trust-root file changed" in summary  # never a mixed change
    assert "What the owner can do" in summary
    assert "Disputed oracle tests" in run.artifact("report.html")


def test_the_same_change_without_a_dispute_is_oracle_failed(sample):
    run = sample.gate(sample.change(underscore_slugify))
    assert run.decision == "block"
    assert any(d.startswith(DISPUTED) for d in run.details("ORACLE_FAILED"))
    assert "ORACLE_DISPUTED" not in run.codes
    assert run.payload["disputes"] == []


def test_a_dispute_of_a_passing_or_untrusted_item_is_moot_and_blocks_nothing(sample):
    passing = "tests/oracles/test_text_oracle.py::test_chunk_even"
    untrusted = "tests/test_misc.py::test_clamp_inside_range"
    change = disputing((passing, "it is wrong"), (untrusted, "so is this"), then=honest_fix)
    run = sample.gate(sample.change(change))
    assert run.decision == "allow", run.payload["reasons"]
    moot = [w["detail"] for w in run.payload["warnings"] if w["code"] == "DISPUTE_MOOT"]
    assert len(moot) == 2
    assert moot[0].startswith(f"{passing} passes")
    assert moot[1].startswith(f"{untrusted} is not an oracle item collected at base")
    statuses = [d["status"] for d in run.payload["disputes"]]
    assert statuses == [
        "moot: the oracle item passes",
        "moot: not an oracle item collected at base",
    ]


def test_a_dispute_never_excuses_an_edit_of_the_disputed_oracle(sample):
    def edit_too(repo: SampleRepo) -> None:
        underscore_slugify(repo)
        repo.edit("tests/oracles/test_text_oracle.py", '== "hello-world"', '== "hello_world"')

    run = sample.gate(sample.change(disputing((DISPUTED, REASON), then=edit_too)))
    assert run.decision == "block"
    assert "ORACLE_AUTHORSHIP" in run.codes


def test_a_malformed_disputes_file_blocks_with_one_line(sample):
    def malformed(repo: SampleRepo) -> None:
        honest_fix(repo)
        repo.write({DISPUTES_FILE: f'disputes:\n  - nodeid: "{DISPUTED}"\n    reson: "typo"\n'})

    run = sample.gate(sample.change(malformed))
    assert run.decision == "block"
    assert run.verdict.exit_code == 1  # the gate ran: a block, not "could not run"
    (detail,) = run.details("ORACLE_DISPUTED")
    assert "\n" not in detail
    assert detail.startswith(f"{DISPUTES_FILE} (at ")
    assert f"entry 1 ({DISPUTED}): unknown key 'reson'; did you mean 'reason'?" in detail
    assert run.payload["bits"]["oracle_ok"] is False


# -- andgate dispute ------------------------------------------------------------------------


def test_the_dispute_command_writes_what_check_reads(sample, capsys):
    from andgate.commands.dispute import run_dispute_add, run_dispute_list

    def agent(repo: SampleRepo) -> None:
        underscore_slugify(repo)
        code = run_dispute_add(
            repo.path, DISPUTED, REASON, base=sample.base, manifest="tests/trust_manifest.yaml"
        )
        assert code == 0, capsys.readouterr()

    run = sample.gate(sample.change(agent))
    assert run.codes[0] == "ORACLE_DISPUTED" and REASON in run.details("ORACLE_DISPUTED")[0]
    out = capsys.readouterr().out
    assert f"disputed the oracle item {DISPUTED}" in out
    assert (
        run_dispute_list(sample.path, base=sample.base, manifest="tests/trust_manifest.yaml") == 0
    )
    assert DISPUTED in capsys.readouterr().out


@pytest.mark.parametrize(
    ("nodeid", "says"),
    [
        ("tests/oracles/test_text_oracle.py", "names 4 oracle items"),
        ("tests/test_misc.py::test_clamp_inside_range", "is in the untrusted class"),
        ("tests/oracles/test_text_oracle.py::test_slugify_word", "is not a test collected"),
    ],
)
def test_the_dispute_command_refuses_anything_but_one_oracle_item(sample, capsys, nodeid, says):
    from andgate.commands.dispute import run_dispute_add

    code = run_dispute_add(sample.path, nodeid, REASON, manifest="tests/trust_manifest.yaml")
    assert code == 1
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err
    assert not (sample.path / DISPUTES_FILE).exists()


def test_init_offers_the_agent_block_and_writes_it_with_agents(make_repo, capsys):
    from andgate.commands.init import run_init

    repo = make_repo({"README.md": "x\n"})
    assert run_init(repo.path) == 0
    assert "andgate init --agents AGENTS.md" in capsys.readouterr().out
    assert not (repo.path / "AGENTS.md").exists()
    assert run_init(repo.path, agents="AGENTS.md") == 0
    assert "created  AGENTS.md" in capsys.readouterr().out
    assert "andgate dispute" in (repo.path / "AGENTS.md").read_text()


def test_the_demo_shows_an_honest_agent_disputing_an_oracle(capsys, monkeypatch, tmp_path):
    import tempfile

    from andgate.commands.demo import CHANGES, run_demo

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the demo's repository goes here

    (change,) = [c for c in CHANGES if c.reasons == ("ORACLE_DISPUTED",)]
    assert change.absent == ("ORACLE_FAILED",)
    assert run_demo(changes=(change,)) == 0, capsys.readouterr().out
    assert "block [ORACLE_DISPUTED]" in capsys.readouterr().out
