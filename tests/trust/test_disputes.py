"""Oracle disputes, piece by piece: the file's schema, the pure verdict, the reports and
the authorship sort (no pytest process; the end-to-end tests are in test_oracle_disputes.py)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from andgate.commands import cli
from andgate.errors import ManifestError
from andgate.git import Change
from andgate.records import (
    Bit,
    ChangeFacts,
    ClassFacts,
    Dispute,
    DisputeFacts,
    DisputeStatus,
    Facts,
    FreezeFacts,
    ItemResult,
    KnownBadFacts,
    LockFacts,
    OracleFacts,
    Outcome,
    PropertyFacts,
    Reason,
    ReplayFacts,
    Warning_,
)
from andgate.report import console
from andgate.report.actions import annotations
from andgate.report.context import ReportContext, verdict_payload
from andgate.report.html import build_report, render
from andgate.report.summary import SummaryMarkdown
from andgate.trust.authorship import sort_changes
from andgate.trust.disputes import (
    DisputeEntry,
    DisputesFileError,
    judged,
    parse_disputes,
    test_source,
    with_entry,
)
from andgate.trust.manifest import parse_manifest
from andgate.verdict import decide, escaped
from harness import MANIFEST

DISPUTES_PATH = ".andgate/disputes.yaml"
SOURCE = f"{DISPUTES_PATH} (at abc)"
DISPUTED = "tests/oracles/test_o.py::test_words"
PASSING = "tests/oracles/test_o.py::test_even"
FAILED = ItemResult(DISPUTED, Outcome.FAILED, "AssertionError: assert 'a_b' == 'a-b'")
REASON = "The task says underscores."


# -- the file's schema ---------------------------------------------------------------------


def test_a_valid_file_gives_its_entries_in_order():
    text = f'disputes:\n  - nodeid: "{DISPUTED}"\n    reason: |\n      line one\n      two\n'
    assert parse_disputes(text, SOURCE) == (DisputeEntry(DISPUTED, "line one\ntwo"),)


@pytest.mark.parametrize("text", [None, "", "# only a comment\n", "disputes:\n", "disputes: []\n"])
def test_no_file_or_an_empty_one_disputes_nothing(text):
    assert parse_disputes(text, SOURCE) == ()


ENTRY = f'  - nodeid: "{DISPUTED}"\n    reason: "r"\n'


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- a\n", "must be a mapping with a 'disputes' list"),
        ("dispute: []\n", "unknown key 'dispute'; did you mean 'disputes'?"),
        ("disputes: {a: b}\n", "'disputes' must be a list of entries"),
        ("disputes:\n  - just a string\n", "entry 1: not a mapping; each entry is a mapping"),
        (f"disputes:\n{ENTRY}  - nodeid: x\n    reson: r\n", "entry 2 (x): unknown key 'reson'; "),
        (f'disputes:\n  - nodeid: "{DISPUTED}"\n', f"entry 1 ({DISPUTED}): reason is missing"),
        ('disputes:\n  - nodeid: " "\n    reason: r\n', "entry 1: nodeid is missing or empty"),
        ("disputes:\n  - nodeid: 3\n    reason: r\n", "entry 1: nodeid is missing or empty"),
        (f"disputes:\n{ENTRY}{ENTRY}", f"entry 2 ({DISPUTED}): disputed twice"),
        ('disputes:\n  - nodeid: "a\\nb"\n    reason: r\n', "nodeid holds a line break"),
        ('disputes:\n  - nodeid: a\n    reason: "\\e[31m"\n', "reason holds a control character"),
        ('disputes:\n  - nodeid: a\n    reason: "\\u202e"\n', "reason holds a control character"),
        (f"disputes:\n  - nodeid: a\n    reason: {'x' * 2001}\n", "reason has 2001 characters"),
        ("disputes: [\n", "invalid YAML"),
        ("a: &x 1\nb: *x\n", "aliases"),
        ("disputes: !!python/object:os.system {}\n", "invalid YAML"),
    ],
)
def test_a_malformed_file_is_one_line_naming_file_entry_and_fix(text, says):
    with pytest.raises(DisputesFileError) as caught:
        parse_disputes(text, SOURCE)
    message = str(caught.value)
    assert message.startswith(f"{SOURCE}: ") and "\n" not in message
    assert says in message


def test_the_command_writes_what_the_parser_reads_back():
    odd = DisputeEntry('tests/o.py::test_x["a: b", #1]', 'quotes " and \\ and: colons # é')
    first = DisputeEntry(DISPUTED, REASON)
    text = with_entry((first,), odd)
    assert parse_disputes(text, SOURCE) == (first, odd)
    assert text.startswith("# Oracle disputes")


# -- the verdict ---------------------------------------------------------------------------


def facts(oracle: OracleFacts, disputes: DisputeFacts | None, **more: object) -> Facts:
    fields: dict[str, object] = {
        "changes": ChangeFacts(production_paths=("minilib/text.py",)),
        "lock": LockFacts(),
        "oracle": oracle,
        "known_bad": KnownBadFacts((ReplayFacts("kb", True, (PASSING,)),)),
        "property": PropertyFacts(
            results=(ItemResult("tests/p.py::test_p", Outcome.PASSED),),
            files={"tests/p.py": ("tests/p.py::test_p",)},
            seeds={"tests/p.py::test_p": (1,)},
        ),
        "freezes": FreezeFacts(),
        "untrusted": ClassFacts(),
        "disputes": disputes,
    }
    fields.update(more)
    return Facts(**fields)  # type: ignore[arg-type]


ORACLE = OracleFacts(results=(ItemResult(PASSING, Outcome.PASSED), FAILED))


def disputes(*entries: Dispute, problem: str | None = None) -> DisputeFacts:
    return DisputeFacts(".andgate/disputes.yaml", entries, problem)


def test_a_disputed_failing_oracle_item_is_oracle_disputed_with_the_reason():
    verdict = decide(facts(ORACLE, disputes(Dispute(DISPUTED, REASON, True))))
    assert [r.code for r in verdict.reasons] == [Reason.ORACLE_DISPUTED]
    (reason,) = verdict.reasons
    assert reason.bit is Bit.ORACLE and not verdict.bits[Bit.ORACLE] and not verdict.allowed
    assert reason.detail == (
        f'{DISPUTED} failed: {FAILED.message}; the change disputes this oracle: "{REASON}"'
    )
    assert verdict.exit_code == 1
    (outcome,) = verdict.disputes
    assert outcome.status is DisputeStatus.DISPUTED and outcome.failure.startswith(DISPUTED)


def test_without_a_dispute_the_same_item_is_oracle_failed():
    verdict = decide(facts(ORACLE, None))
    assert [r.code for r in verdict.reasons] == [Reason.ORACLE_FAILED]
    assert verdict.disputes == ()


def test_disputed_reasons_come_first():
    changes = ChangeFacts(oracle_paths=("tests/oracles/test_x.py",))
    verdict = decide(facts(ORACLE, disputes(Dispute(DISPUTED, REASON, True)), changes=changes))
    assert [r.code for r in verdict.reasons] == [Reason.ORACLE_DISPUTED, Reason.ORACLE_AUTHORSHIP]


def test_an_oracle_item_missing_on_head_can_be_disputed_too():
    oracle = OracleFacts(results=(ItemResult(PASSING, Outcome.PASSED),), pinned_missing=(DISPUTED,))
    verdict = decide(facts(oracle, disputes(Dispute(DISPUTED, REASON, True))))
    assert [r.code for r in verdict.reasons] == [Reason.ORACLE_DISPUTED]
    assert verdict.reasons[0].detail.startswith(f"{DISPUTED} missing on head; ")
    (outcome,) = verdict.disputes
    assert outcome.status is DisputeStatus.DISPUTED
    assert outcome.failure == f"{DISPUTED} missing on head"


@pytest.mark.parametrize(
    ("dispute", "status", "moot"),
    [
        (Dispute(PASSING, REASON, True), DisputeStatus.PASSES, f"{PASSING} passes"),
        (
            Dispute("tests/test_u.py::test_u", REASON, False, "did you mean x?"),
            DisputeStatus.NOT_ORACLE,
            "tests/test_u.py::test_u is not an oracle item collected at base (did you mean x?)",
        ),
        (
            Dispute("tests/oracles/test_o.py::test_py4", REASON, True),
            DisputeStatus.NOT_RUN,
            "tests/oracles/test_o.py::test_py4 did not run on head (not applicable here)",
        ),
    ],
)
def test_a_dispute_of_a_passing_or_non_oracle_item_is_moot_and_blocks_nothing(
    dispute, status, moot
):
    oracle = OracleFacts(results=(ItemResult(PASSING, Outcome.PASSED),))
    verdict = decide(facts(oracle, disputes(dispute)))
    assert verdict.allowed
    (warning,) = verdict.warnings
    assert warning.code is Warning_.DISPUTE_MOOT and warning.detail.startswith(moot)
    assert "remove its entry from .andgate/disputes.yaml" in warning.detail
    assert verdict.disputes[0].status is status


@pytest.mark.parametrize(
    ("oracle", "at_base", "status"),
    [
        (OracleFacts(results=(ItemResult(DISPUTED, Outcome.PASSED),)), True, "PASSES"),
        (ORACLE, False, "NOT_ORACLE"),
        (ORACLE, None, "NOT_JUDGED"),
        (None, True, "NOT_JUDGED"),
        (OracleFacts(error="timed out"), True, "NOT_JUDGED"),
        (OracleFacts(), True, "NOT_RUN"),
    ],
)
def test_only_a_disputed_failure_records_a_failure_detail(oracle, at_base, status):
    verdict = decide(facts(oracle, disputes(Dispute(DISPUTED, REASON, at_base))))
    (outcome,) = verdict.disputes
    assert outcome.status is DisputeStatus[status] and outcome.failure == ""


def test_a_moot_dispute_without_a_file_path_or_a_hint_says_no_more():
    moot = DisputeFacts("", (Dispute(PASSING, REASON, True), Dispute("t.py::u", "r", False)), None)
    oracle = OracleFacts(results=(ItemResult(PASSING, Outcome.PASSED),))
    verdict = decide(facts(oracle, moot))
    assert [w.detail for w in verdict.warnings] == [
        f"{PASSING} passes, so its dispute blocks nothing",
        "t.py::u is not an oracle item collected at base: a dispute names exactly one "
        "oracle item's node id (no globs, files, classes or prefixes)",
    ]


def test_a_dispute_is_not_judged_when_the_oracle_process_ended_early():
    oracle = OracleFacts(results=(ItemResult(PASSING, Outcome.PASSED),), error="timed out")
    verdict = decide(facts(oracle, disputes(Dispute(DISPUTED, REASON, True))))
    assert verdict.disputes[0].status is DisputeStatus.NOT_JUDGED
    assert [r.code for r in verdict.reasons] == [Reason.GATE_ERROR] and not verdict.warnings


@pytest.mark.parametrize("at_base", [False, None])
def test_a_failing_item_that_is_no_oracle_item_at_base_stays_oracle_failed(at_base):
    verdict = decide(facts(ORACLE, disputes(Dispute(DISPUTED, REASON, at_base))))
    assert [r.code for r in verdict.reasons] == [Reason.ORACLE_FAILED]


def test_a_malformed_disputes_file_blocks_as_oracle_disputed_not_could_not_run():
    problem = f"{SOURCE}: entry 1: reason is missing or empty; each entry ..."
    oracle = OracleFacts(results=(ItemResult(PASSING, Outcome.PASSED),))
    verdict = decide(facts(oracle, disputes(problem=problem)))
    assert [(r.code, r.detail) for r in verdict.reasons] == [(Reason.ORACLE_DISPUTED, problem)]
    assert not verdict.bits[Bit.ORACLE] and verdict.exit_code == 1


@pytest.mark.parametrize(
    "oracle",
    [
        ORACLE,
        OracleFacts(results=(ItemResult(PASSING, Outcome.PASSED),)),
        OracleFacts(results=(FAILED,), pinned_missing=(PASSING,)),
        OracleFacts(error="timed out"),
        None,
    ],
)
@pytest.mark.parametrize("at_base", [True, False, None])
def test_a_dispute_changes_no_bit_and_lifts_no_reason(oracle, at_base):
    """Disputes only rename a failure (same bit) or warn: the decision and every bit are
    those of the same facts without the disputes file."""
    entries = disputes(Dispute(DISPUTED, REASON, at_base), Dispute(PASSING, "x", at_base))
    without, with_ = decide(facts(oracle, None)), decide(facts(oracle, entries))
    assert with_.decision == without.decision and with_.bits == without.bits
    assert len(with_.reasons) == len(without.reasons)


def test_judged_marks_exact_oracle_items_and_hints_at_the_rest():
    base = {DISPUTED, "tests/oracles/test_o.py::test_p[1]", "tests/oracles/test_o.py::test_p[2]"}
    read = disputes(
        Dispute(DISPUTED, "r"),
        Dispute("tests/oracles/test_o.py::test_p", "r"),
        Dispute("tests/oracles/test_o.py::test_word", "r"),
        Dispute("tests/oracles", "r"),
    )
    marked = judged(read, base).disputes
    assert [d.oracle_at_base for d in marked] == [True, False, False, False]
    assert marked[1].hint == "it names 2 oracle items, e.g. tests/oracles/test_o.py::test_p[1]"
    assert marked[2].hint == f"did you mean {DISPUTED}?"
    assert marked[3].hint.startswith("it names 3 oracle items")
    assert judged(read, None) == read  # base's collection did not complete: not judged


# -- showing the change's words inertly -------------------------------------------------------

HOSTILE = (
    "```\n</pre><script>alert(1)</script> [click](https://x.example) **bold**\n"
    "::error::forged\n````"
)


def test_escaped_makes_one_inert_line():
    assert escaped("a\n\tb  c") == "a b c"
    assert escaped("x\x1b[31my\u202ez") == "x\\u001b[31my\\u202ez"
    assert escaped("y" * 600).endswith("…") and len(escaped("y" * 600)) == 500
    assert escaped("y" * 500) == "y" * 500  # exactly the limit: kept whole
    assert escaped("\U0001f600\ufeff\U000e0001") == "\U0001f600\\ufeff\\U000e0001"
    assert escaped("\uffff") == "\\uffff" and escaped("\U0010ffff") == "\\U0010ffff"


def hostile_context() -> ReportContext:
    from andgate.trust.disputes import SourceAtBase

    entries = disputes(Dispute(DISPUTED, HOSTILE, True))
    verdict = decide(facts(ORACLE, entries))
    source = SourceAtBase("tests/oracles/test_o.py", 7, "def test_words():\n    assert 1")
    return ReportContext(
        verdict=verdict,
        base="b" * 40,
        head="h" * 40,
        today=dt.date(2026, 11, 25),
        dispute_sources={DISPUTED: source},
        disputes_file=".andgate/disputes.yaml",
    )


def test_summary_shows_disputes_first_with_the_reason_in_a_block_it_cannot_close():
    text = SummaryMarkdown().render(hostile_context()).decode()
    assert text.index("## Disputed oracle tests (1)") < text.index("## Why it blocks")
    assert "Source at base (`tests/oracles/test_o.py`, line 7):" in text
    assert "`````text\n" + HOSTILE + "\n`````" in text  # a fence longer than the reason's
    assert "What the owner can do" in text
    (line,) = [x for x in text.splitlines() if x.startswith("- **ORACLE_DISPUTED**")]
    assert line.startswith("- **ORACLE_DISPUTED**: ````` ") and line.endswith(" `````")


@pytest.mark.parametrize("actions", [False, True])
def test_the_terminal_shows_the_reason_after_the_verdict_line_never_as_a_command(
    actions, capsys, monkeypatch, tmp_path
):
    monkeypatch.setenv("GITHUB_ACTIONS", "true" if actions else "false")
    console.print_verdict(hostile_context().verdict, tmp_path)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "andgate: BLOCK"
    shown = [line for line in lines if "forged" in line]
    assert len(shown) == 1 and shown[0].startswith("  ORACLE_DISPUTED: ")
    if actions:  # and the runner ignores commands around it
        assert lines[1].startswith("::stop-commands::") and lines[-3].startswith("::andgate-")


def test_report_html_escapes_the_reason_and_shows_the_dispute_first():
    ctx = hostile_context()
    page = render(build_report(ctx)).decode()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert page.index("Disputed oracle tests") < page.index("<h2>Checks</h2>")
    assert "ORACLE_DISPUTED: " in page.split("</header>")[0]  # the banner's first reason


def test_verdict_json_lists_each_dispute():
    payload = json.loads(json.dumps(verdict_payload(hostile_context())))
    (entry,) = payload["disputes"]
    assert entry == {
        "nodeid": DISPUTED,
        "reason": HOSTILE,
        "status": "disputed",
        "failure": f"{DISPUTED} failed: {FAILED.message}",
    }


def test_annotations_put_the_dispute_first_on_one_line():
    reasons = [
        {"code": "ORACLE_FAILED", "detail": f"{PASSING} failed"},
        {"code": "ORACLE_DISPUTED", "detail": f"{DISPUTED} failed; {escaped(HOSTILE)}"},
    ]
    first, second = annotations(reasons, {DISPUTED: ("tests/oracles/test_o.py", 7)})
    assert first.startswith(
        "::error file=tests/oracles/test_o.py,line=7,title=andgate ORACLE_DISPUTED::"
    )
    assert "\n" not in first and "%0A" not in first and second.startswith("::error title=")


# -- the test's source at base ---------------------------------------------------------------

MODULE = b"""\
import pytest


@pytest.mark.parametrize("x", [1, 2])
def test_p(x):
    assert x


class TestWords:
    def test_words(self):
        assert 1
"""


def test_test_source_finds_functions_methods_and_parametrised_ids():
    decorated = '@pytest.mark.parametrize("x", [1, 2])\ndef test_p(x):\n    assert x'
    assert test_source(MODULE, "t.py::test_p[1]") == (4, decorated)
    line, text = test_source(MODULE, "t.py::TestWords::test_words")  # type: ignore[misc]
    assert line == 10 and text == "    def test_words(self):\n        assert 1"
    assert test_source(MODULE, "t.py::test_gone") is None
    assert test_source(b"def (:", "t.py::test_p") is None


# -- authorship and the manifest ---------------------------------------------------------------


@pytest.mark.parametrize("production_globs", ["[]", '["**"]'])
def test_the_disputes_file_is_neither_production_nor_trust_root(production_globs):
    manifest = parse_manifest(
        MANIFEST + f"production_globs: {production_globs}\n", "tests/trust_manifest.yaml"
    )
    changes = [
        Change("M", "minilib/text.py", "minilib/text.py", "100644", "100644"),
        Change("A", None, ".andgate/disputes.yaml", "000000", "100644"),
    ]
    sorted_ = sort_changes(
        changes, manifest, is_oracle_file=lambda p: False, config_differs=lambda p: False,
        approved_by=(),
    )  # fmt: skip
    assert sorted_.test_paths == (".andgate/disputes.yaml",)
    assert sorted_.production_paths == ("minilib/text.py",)
    assert sorted_.case == "no trust-root file changed"


@pytest.mark.parametrize(
    "path", ["tests/oracles/locks.sha256", "tests/oracles/fixtures/d.yaml", "conftest.py"]
)
def test_the_disputes_file_may_not_be_a_trust_file(path):
    with pytest.raises(ManifestError, match=r"disputes_file .* names a trust file"):
        parse_manifest(MANIFEST + f"disputes_file: {path}\n", "tests/trust_manifest.yaml")


# -- the command line -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["dispute"], "give NODEID and --reason TEXT"),
        (["dispute", DISPUTED], "give NODEID and --reason TEXT"),
        (["dispute", "--list", DISPUTED], "--list takes no NODEID"),
        (["dispute", DISPUTED, "--reason", " "], "--reason is empty"),
        (["dispute", DISPUTED, "--reason", "a\x1b[2Jb"], "holds a control character"),
        (["dispute", DISPUTED, "--reason", "x" * 2001], "--reason has 2001 characters"),
    ],
)
def test_dispute_arguments_are_checked_in_one_line(argv, says, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no repository needed to refuse bad input
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


# -- the block for the agent instruction file ----------------------------------------------------


def test_the_agent_block_is_created_appended_once_and_never_through_a_symlink(tmp_path):
    from andgate.commands.agents import MARKER, add_agent_block
    from andgate.errors import AndgateError

    manifest = "tests/trust_manifest.yaml"
    assert "created" in add_agent_block(tmp_path, "AGENTS.md", manifest)
    text = (tmp_path / "AGENTS.md").read_text()
    assert text.startswith(MARKER) and "andgate dispute NODEID --reason" in text
    assert "never" in text.lower() and manifest in text
    (tmp_path / "CLAUDE.md").write_text("# House rules\n\nBe nice.\n")
    assert "appended to" in add_agent_block(tmp_path, "CLAUDE.md", manifest)
    assert "kept" in add_agent_block(tmp_path, "CLAUDE.md", manifest)
    appended = (tmp_path / "CLAUDE.md").read_text()
    assert appended.startswith("# House rules\n\nBe nice.\n\n" + MARKER)
    assert appended.count(MARKER) == 1
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "docs").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(AndgateError, match="symbolic link"):
        add_agent_block(tmp_path, "docs/AGENTS.md", manifest)
    assert not (tmp_path / "elsewhere" / "AGENTS.md").exists()


# -- reading the file from head ------------------------------------------------------------------


def test_read_disputes_reads_head_and_refuses_a_symlink(tmp_path):
    import os

    from andgate.commands.sample import init_repo
    from andgate.trust.disputes import read_disputes

    repo = init_repo(tmp_path / "r")
    repo.write({"tests/oracles/test_o.py": "def test_words():\n    assert 1\n"})
    base = repo.commit("base")
    repo.write({DISPUTES_PATH: f'disputes:\n  - nodeid: "{DISPUTED}"\n    reason: "{REASON}"\n'})
    head = repo.commit("disputes")
    read = read_disputes(repo.git, base, head, DISPUTES_PATH)
    assert read.facts.disputes == (Dispute(DISPUTED, REASON),) and read.facts.problem is None
    assert read.sources[DISPUTED].line == 1 and "def test_words" in read.sources[DISPUTED].text
    assert read_disputes(repo.git, base, base, DISPUTES_PATH).facts.disputes == ()
    repo.delete(DISPUTES_PATH)
    os.symlink("../tests/oracles/test_o.py", repo.path / DISPUTES_PATH)
    linked = repo.commit("a symlink")
    problem = read_disputes(repo.git, base, linked, DISPUTES_PATH).facts.problem
    assert problem == (
        f"{DISPUTES_PATH} (at {linked[:12]}): not a regular file; commit the disputes as a file"
    )


# -- the property: a dispute never lifts anything ---------------------------------------------

NODEIDS = [f"tests/oracles/test_o.py::test_{i}" for i in range(4)]


@given(
    outcomes=st.lists(st.sampled_from(list(Outcome)), min_size=4, max_size=4),
    missing=st.sets(st.sampled_from(NODEIDS)),
    entries=st.lists(
        st.tuples(
            st.sampled_from([*NODEIDS, "tests/test_u.py::test_u"]),
            st.sampled_from([True, False, None]),
        ),
        unique_by=lambda e: e[0],
    ),
    problem=st.booleans(),
)
def test_disputes_only_rename_oracle_failures_or_block_more(outcomes, missing, entries, problem):
    results = tuple(
        ItemResult(n, o) for n, o in zip(NODEIDS, outcomes, strict=True) if n not in missing
    )
    oracle = OracleFacts(results=results, pinned_missing=tuple(sorted(missing)))
    entries_ = tuple(Dispute(n, REASON, at_base) for n, at_base in entries)
    with_ = decide(facts(oracle, disputes(*entries_, problem="bad file" if problem else None)))
    without = decide(facts(oracle, None))
    if problem:  # a malformed file can only add a block
        assert not with_.allowed and not with_.bits[Bit.ORACLE]
        return
    assert with_.decision == without.decision and with_.bits == without.bits
    oracle_codes = {Reason.ORACLE_FAILED, Reason.ORACLE_DISPUTED}
    assert sum(r.code in oracle_codes for r in with_.reasons) == sum(
        r.code is Reason.ORACLE_FAILED for r in without.reasons
    )
    renamed = {r.detail.split()[0] for r in with_.reasons if r.code is Reason.ORACLE_DISPUTED}
    assert renamed <= {n for n, at_base in entries if at_base}
