"""Real projects V (issue 43): what a new user hit on a flat-layout project (toolz).

Every test runs on `tests/flat.py`'s flatlib: the package at the root, its tests inside
it, `testpaths = ["flatlib"]`, adopted with what `andgate init` writes and suggests. Each
wrong verdict the issue reports comes first, beside its control (the honest or plain
form, decided as before).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from andgate.commands.classify import run_classify
from andgate.commands.cli import main
from andgate.commands.dispute import run_dispute_add
from andgate.commands.doctor import run_doctor
from andgate.commands.refresh import run_refresh
from andgate.commands.sample import AGENT, SampleRepo
from conftest import Sample
from flat import HOME, KB_NAME, KNOWN_BAD_DIR, MANIFEST, TAKE_LINE, build_flat

pytestmark = pytest.mark.slow  # every test here builds repositories and runs checks
TODAY = dt.date(2026, 11, 25)


@pytest.fixture
def flat(tmp_path: Path) -> Sample:
    """flatlib adopted with init's folder glob for its tests (`flatlib/tests/**/*.py`)."""
    built = build_flat(tmp_path / "flat")
    return Sample(built.repo, built.base, tmp_path)


# -- item 4: a test file the change adds under a folder oracle glob -----------------------

NEW_TEST = f"{HOME}/test_merge_more.py"
NEW_TESTS = """\
from flatlib import merge


def test_merge_three():
    assert merge({"a": 1}, {"b": 2}, {"a": 3}) == {"a": 3, "b": 2}


def test_merge_none():
    assert merge() == {}
"""


def adds_a_test_file(text: str = NEW_TESTS):  # type: ignore[no-untyped-def]
    def apply(repo: SampleRepo) -> None:
        repo.edit("flatlib/dicttoolz.py", '"""One dictionary', '"""A new dictionary')
        repo.write({NEW_TEST: text})

    return apply


def test_a_test_file_added_under_a_folder_oracle_glob_is_the_changes_own_and_runs(flat):
    """It was ORACLE_AUTHORSHIP, and its tests ran nowhere while the untrusted class
    "passed": now it is untrusted, runs in the untrusted process, and a failure there
    blocks as any untrusted failure does."""
    wrong = NEW_TESTS.replace('{"a": 3, "b": 2}', '{"a": 1, "b": 2}')
    run = flat.gate(flat.change(adds_a_test_file(wrong)))
    assert run.codes == ["UNTRUSTED_FAILED"], run.payload["reasons"]
    assert run.details("UNTRUSTED_FAILED")[0].startswith(f"{NEW_TEST}::test_merge_three failed")
    items = {i["nodeid"]: i for i in run.artifact("trust_inventory.json")["items"]}
    assert items[f"{NEW_TEST}::test_merge_none"]["class"] == "untrusted"
    assert items[f"{NEW_TEST}::test_merge_none"]["outcome"] == "passed"
    why = "added by the change under an oracle glob: untrusted until an owner approves it"
    assert items[f"{NEW_TEST}::test_merge_none"]["why"] == why

    run = flat.gate(flat.change(adds_a_test_file()))
    assert (run.decision, run.codes) == ("allow", []), run.payload["reasons"]
    assert run.payload["counts"]["untrusted"] == 2
    summary = run.artifact("summary.md")
    added = f"so run as the change's own (untrusted) tests: `{NEW_TEST}`"
    assert added in summary
    assert "run in no class process" not in summary


def test_an_edit_of_an_oracle_file_under_the_folder_glob_stays_authorship(flat):
    """The control: base's oracle files are the owner's, whatever the glob's shape."""

    def edits_an_oracle(repo: SampleRepo) -> None:
        repo.edit(f"{HOME}/test_dicttoolz.py", ' == {"a": "1"}', "")

    run = flat.gate(flat.change(edits_an_oracle))
    assert run.codes == ["ORACLE_AUTHORSHIP"], run.payload["reasons"]
    assert run.details("ORACLE_AUTHORSHIP")[0].startswith(f"{HOME}/test_dicttoolz.py changed")

    def renames_an_oracle(repo: SampleRepo) -> None:
        repo.run("mv", f"{HOME}/test_dicttoolz.py", f"{HOME}/test_dicts.py")

    run = flat.gate(flat.change(renames_an_oracle))
    assert "ORACLE_AUTHORSHIP" in run.codes, run.payload["reasons"]
    assert any(d.startswith(f"{HOME}/test_dicttoolz.py") for d in run.details("ORACLE_AUTHORSHIP"))

    def adds_a_helper(repo: SampleRepo) -> None:  # no test module: it would shape the oracles
        repo.write({f"{HOME}/helpers.py": "TAKE = 2\n"})

    run = flat.gate(flat.change(adds_a_helper))
    assert run.codes == ["ORACLE_AUTHORSHIP"], run.payload["reasons"]
    assert run.details("ORACLE_AUTHORSHIP")[0].startswith(f"{HOME}/helpers.py changed")


def test_an_owners_approval_makes_the_added_file_an_oracle(flat):
    run = flat.gate(flat.change(adds_a_test_file()), approved_by=("alice",))
    assert (run.decision, run.codes) == ("allow", []), run.payload["reasons"]
    items = {i["nodeid"]: i["class"] for i in run.artifact("trust_inventory.json")["items"]}
    assert items[f"{NEW_TEST}::test_merge_three"] == "oracle"
    assert run.payload["counts"]["untrusted"] == 0


# -- item 3: a stale known-bad fixture refreshed in the change that needs it ---------------

FIXTURE = f"{KNOWN_BAD_DIR}/{KB_NAME}.patch"


def annotates_take(repo: SampleRepo) -> None:
    """An honest refactor near the fixture's bug: the hunk's context no longer matches
    (`git apply` refuses it), but git can merge the bug into the new code."""
    repo.edit("flatlib/itertoolz.py", "def take(n, seq):", "def take(n: int, seq):")


def guards_take(repo: SampleRepo) -> None:
    """An honest refactor right above the bug: no merge, the bug's line is still there."""
    repo.edit(
        "flatlib/itertoolz.py",
        '    """The first n items of seq."""\n',
        '    """The first n items of seq (none for n <= 0)."""\n'
        "    if n <= 0:\n        return []\n",
    )


def refresh(flat: Sample, *names: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run_refresh(flat.path, list(names), manifest=MANIFEST, jobs=2, timeout=300)
    return code, out.getvalue()


def test_a_refreshed_fixture_replays_from_head_once_an_owner_approves_head(flat):
    """The refactor blocks as KNOWN_BAD_STALE (the fixture no longer applies); `known-bad
    refresh` re-derives it; unapproved, base's stale fixture still replays (and the edit
    is authorship); once an owner approves head, head's refreshed fixture replays."""
    refactor = flat.change(annotates_take)
    run = flat.gate(refactor)
    assert run.codes == ["KNOWN_BAD_STALE"], run.payload["reasons"]

    code, out = refresh(flat)
    assert code == 0, out
    assert out.splitlines()[0].startswith("andgate known-bad refresh: the working tree (HEAD ")
    assert (
        f"{KB_NAME}  refreshed  three-way merge; caught by {HOME}/test_itertoolz.py::test_take"
        in out
    )
    patch = (flat.path / FIXTURE).read_text(encoding="utf-8")
    assert "+    return list(itertools.islice(seq, n - 1))" in patch and "n: int" in patch
    flat.repo.commit("guard take; refresh its known-bad fixture", who=AGENT)
    head = flat.repo.run("rev-parse", "HEAD")

    run = flat.gate(head)
    assert sorted(run.codes) == ["KNOWN_BAD_STALE", "ORACLE_AUTHORSHIP"], run.payload["reasons"]
    assert run.artifact("known_bad.json")["fixtures_from"] == flat.base

    run = flat.gate(head, approved_by=("alice",))
    assert (run.decision, run.codes) == ("allow", []), run.payload["reasons"]
    known_bad = run.artifact("known_bad.json")
    assert known_bad["fixtures_from"] == head
    assert [(f["name"], f["bites"]) for f in known_bad["fixtures"]] == [(KB_NAME, True)]
    assert f"Head's fixtures (`{head[:12]}`): an owner approved head." in run.artifact("summary.md")

    # The control: approving the refactor without refreshing changes nothing.
    run = flat.gate(refactor, approved_by=("alice",))
    assert run.codes == ["KNOWN_BAD_STALE"], run.payload["reasons"]


def test_refresh_re_locates_the_hunk_and_names_what_it_cannot_re_derive(flat, capsys):
    """A guard added right above the bug, or the function moved below another: no
    merge, but the removed line is still there, once. A refactor that rewrites the line
    itself: one line naming the fixture and the fix, and nothing written."""
    flat.change(guards_take)
    code, out = refresh(flat)
    assert code == 0, out
    assert "refreshed  hunks re-located; caught by" in out, out
    flat.repo.run("checkout", "--", ".")

    def moves_take(repo: SampleRepo) -> None:
        text = (repo.path / "flatlib/itertoolz.py").read_text(encoding="utf-8")
        take, rest = text.split("\n\n\ndef partition_all", 1)
        head, _, body = take.partition("def take")
        moved = f"{head}def partition_all{rest.rstrip()}\n\n\ndef take{body}\n"
        repo.write(
            {"flatlib/itertoolz.py": moved.replace('"""The first n', '"""Up to the first n')}
        )

    flat.change(moves_take)
    code, out = refresh(flat)
    assert code == 0, out
    assert "refreshed  hunks re-located; caught by" in out, out
    flat.repo.run("checkout", "--", ".")

    def rewrites_take(repo: SampleRepo) -> None:
        repo.edit(
            "flatlib/itertoolz.py", TAKE_LINE, "    return [x for x, _ in zip(seq, range(n))]"
        )

    flat.change(rewrites_take)
    before = (flat.path / FIXTURE).read_bytes()
    code, out = refresh(flat, KB_NAME)
    assert code == 1, out
    (line,) = [line for line in out.splitlines() if "CANNOT" in line]
    assert line.split()[:2] == [KB_NAME, "CANNOT"]
    assert "are no longer in the code" in line
    assert f"write {FIXTURE} again for the current code" in line
    assert "andgate known-bad mutants --write 3" in line
    assert (flat.path / FIXTURE).read_bytes() == before
    assert main(["known-bad", "refresh", "kb_nope", "--repo", str(flat.path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"andgate: known-bad refresh: kb_nope: no such fixture under {KNOWN_BAD_DIR}; "
        f"name one of: {KB_NAME}"
    ]


# -- item 5: init respects testpaths; doctor and classify say "not collected" ----------------


def run_command(function, *args, **kwargs) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = function(*args, **kwargs)
    return code, out.getvalue()


def test_init_puts_the_property_folder_where_pytest_collects(flat):
    """Under testpaths = ["flatlib"], init's property folder is flatlib/tests/properties:
    the accepted property is collected, and the benchmark scripts are not proposed."""
    built = build_flat(flat.tmp / "again")
    assert "pytest collects only testpaths = [flatlib] in pyproject.toml" in built.init_output
    assert "  bench/test_take.py (a benchmark script)" in built.init_output
    text = (built.repo.path / MANIFEST).read_text(encoding="utf-8")
    assert 'globs: ["flatlib/tests/properties/**/*.py"]' in text
    assert "bench/" not in text.split("classes:")[1].split("property:")[0]  # not an oracle
    code, out = run_command(run_classify, flat.path, manifest=MANIFEST, today=TODAY, as_json=True)
    counts = json.loads(out)["counts"]
    assert (code, counts["property"], counts["oracle"]) == (0, 3, 6), out


def test_doctor_and_classify_say_a_property_folder_outside_testpaths_is_not_collected(flat):
    """Where init used to put it (tests/properties): pytest never collects it, and the
    empty property class was blamed on the invariant text."""
    text = (flat.path / MANIFEST).read_text(encoding="utf-8")
    flat.repo.write({MANIFEST: text.replace(f"{HOME}/properties", "tests/properties")})
    flat.repo.run("mv", f"{HOME}/properties", "tests/properties")
    outside = "tests/properties/test_partition_property.py"
    why = f"{outside}: not collected: outside testpaths = [flatlib] in pyproject.toml"

    code, out = run_command(run_doctor, flat.path, manifest=MANIFEST, today=TODAY, jobs=2)
    assert code == 1
    assert f"NOT_COLLECTED: {why}; fix: move it under a testpaths folder" in out, out
    assert f"NO_PROPERTY: the property class is empty ({outside} is not collected" in out
    assert "accepted invariant" not in out

    code, out = run_command(run_classify, flat.path, manifest=MANIFEST, today=TODAY)
    assert f"NO_PROPERTY: the property class is empty ({outside} is not collected" in out
    assert "trusted test files pytest never collects" in out and outside in out


# -- item 8: doctor --rev ------------------------------------------------------------------


def test_doctor_takes_rev_as_its_first_line_suggests(flat):
    _, out = run_command(run_doctor, flat.path, manifest=MANIFEST, today=TODAY, jobs=2)
    assert "--rev REV for a commit" in out.splitlines()[0]
    flat.repo.write({f"{HOME}/properties/INVARIANTS.md": "# nothing accepted\n"})  # uncommitted
    _, out = run_command(
        main, ["doctor", "--repo", str(flat.path), "--rev", "HEAD", "--today", TODAY.isoformat()]
    )
    first, *rest = out.splitlines()
    assert first == f"andgate doctor: --rev HEAD ({flat.base[:12]}), as committed"
    assert not any(line.split(". ", 1)[-1].startswith("NO_PROPERTY") for line in rest), out


# -- item 6: the agent instruction file `init --agents` writes, in the adopting change ---------


def test_the_adopting_change_may_add_the_agent_block_init_wrote(tmp_path):
    """`init --agents AGENTS.md` wrote a file that blocked its own adoption
    (TRUST_ROOT_CHANGED); the file as init writes it is part of adopting. Controls: an
    agents file with more than the block, and a production edit, still block."""
    built = build_flat(tmp_path / "flat", agents=True)
    flat = Sample(built.repo, built.base, tmp_path)
    assert "  created  AGENTS.md (the andgate block for coding agents)" in built.init_output
    run = flat.gate(built.base, base=built.upstream)
    assert (run.decision, run.codes) == ("allow", []), run.payload["reasons"]
    assert [w["code"] for w in run.payload["warnings"]] == ["ADOPTING"]

    def agents_and_more(repo: SampleRepo) -> None:
        repo.write({"AGENTS.md": (repo.path / "AGENTS.md").read_text() + "\nAlso: be quick.\n"})

    run = flat.gate(flat.change(agents_and_more), base=built.upstream)
    assert run.codes == ["TRUST_ROOT_CHANGED"], run.payload["reasons"]
    assert run.details("TRUST_ROOT_CHANGED")[0].startswith("AGENTS.md is production code")

    def edits_code(repo: SampleRepo) -> None:
        repo.edit("flatlib/dicttoolz.py", '"""One dictionary', '"""A dictionary')

    run = flat.gate(flat.change(edits_code), base=built.upstream)
    assert run.codes == ["TRUST_ROOT_CHANGED"], run.payload["reasons"]
    assert run.details("TRUST_ROOT_CHANGED")[0].startswith("flatlib/dicttoolz.py is production")


# -- item 7: the base a check picks, named on its first line -----------------------------


def check_cli(flat: Sample, capsys, *args: str) -> tuple[int, list[str], dict]:  # type: ignore[no-untyped-def, type-arg]
    artifacts = flat.tmp / "cli-artifacts"
    argv = ["check", "--repo", str(flat.path), "--artifacts", str(artifacts), "--jobs", "2"]
    argv += ["--no-discrimination", "--today", TODAY.isoformat(), "--quiet", *args]
    code = main(argv)
    out = capsys.readouterr().out.splitlines()
    return code, out, json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))


def test_the_default_base_is_named_with_the_local_branch_that_is_ahead(flat, capsys):
    """The owner adopted on the local main and has not pushed: origin/main is behind it.
    The default base is still the upstream's (contract section 3), but no longer chosen
    silently: the first line names it, and the local main that is ahead, with the
    --base that gates against it. Control: the upstream up to date, no note."""
    upstream = flat.repo.run("rev-parse", f"{flat.base}^")  # the project before andgate
    flat.repo.run("update-ref", "refs/remotes/origin/main", upstream)
    flat.repo.run("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    flat.change(adds_a_test_file())

    code, out, verdict = check_cli(flat, capsys)
    assert out[0] == (
        f"andgate check: base {upstream[:12]} (merge-base of HEAD with origin/main; "
        f"your main is ahead of it: --base main gates against main), "
        f"head {verdict['head'][:12]} (HEAD)"
    )
    assert (code, verdict["base"]) == (1, upstream)  # an adoption with code in it

    code, out, verdict = check_cli(flat, capsys, "--base", "main")
    assert out[0].startswith(f"andgate check: base {flat.base[:12]} (--base main), head ")
    assert (code, verdict["verdict"]) == (0, "allow"), verdict["reasons"]

    flat.repo.run("update-ref", "refs/remotes/origin/main", flat.base)  # pushed
    code, out, verdict = check_cli(flat, capsys)
    assert out[0].startswith(
        f"andgate check: base {flat.base[:12]} (merge-base of HEAD with origin/main), head "
    )
    assert (code, verdict["verdict"]) == (0, "allow"), verdict["reasons"]


# -- item 8: a change that only disputes an oracle ----------------------------------------

TAKE_ORACLE = f"{HOME}/test_itertoolz.py::test_take"
TAKE_REASON = "The task says take(n, seq) keeps the last n items."


def test_a_change_that_only_disputes_an_oracle_is_oracle_disputed(flat, capsys):
    """The agent finds the oracle contradicts its task, runs `andgate dispute` and stops,
    as AGENTS.md says: the change changes no production code, the disputed item passes,
    and that was an allow (DISPUTE_MOOT). Controls: a dispute beside code that makes the
    item fail is ORACLE_DISPUTED; beside code that keeps it passing, moot."""

    def disputes_and_stops(repo: SampleRepo) -> None:
        assert run_dispute_add(repo.path, TAKE_ORACLE, TAKE_REASON, manifest=MANIFEST) == 0

    run = flat.gate(flat.change(disputes_and_stops))
    assert run.codes == ["ORACLE_DISPUTED"], run.payload["reasons"]
    (detail,) = run.details("ORACLE_DISPUTED")
    assert detail.startswith(f"{TAKE_ORACLE} passes, and the change changes no production code")
    assert TAKE_REASON in detail
    (dispute,) = run.payload["disputes"]
    assert dispute["status"] == "disputed"
    assert "DISPUTE_MOOT" not in [w["code"] for w in run.payload["warnings"]]

    counting = f"{HOME}/test_itertoolz.py::test_frequencies"

    def disputes_and_breaks(repo: SampleRepo) -> None:
        repo.edit("flatlib/itertoolz.py", "counts.get(item, 0) + 1", "counts.get(item, 0) + 2")
        assert (
            run_dispute_add(repo.path, counting, "The task counts twice.", manifest=MANIFEST) == 0
        )

    run = flat.gate(flat.change(disputes_and_breaks))
    assert run.codes == ["ORACLE_DISPUTED"], run.payload["reasons"]
    assert run.details("ORACLE_DISPUTED")[0].startswith(f"{counting} failed")

    def disputes_beside_a_fix(repo: SampleRepo) -> None:
        repo.edit("flatlib/dicttoolz.py", '"""One dictionary', '"""A dictionary')
        disputes_and_stops(repo)

    run = flat.gate(flat.change(disputes_beside_a_fix))
    assert (run.decision, run.codes) == ("allow", []), run.payload["reasons"]
    assert [w["code"] for w in run.payload["warnings"]] == ["DISPUTE_MOOT"]


# -- item 8: progress counters are the class's items ---------------------------------------


def test_each_phase_counts_its_class_items_as_the_summary_does(flat, capsys):
    """The oracle phase's line counted the known-bad replays and base's collection too,
    the untrusted phase's the discrimination runs: now each counts its class's items."""
    flat.change(adds_a_test_file())
    artifacts = flat.tmp / "progress-artifacts"
    argv = ["check", "--repo", str(flat.path), "--base", flat.base, "--jobs", "2"]
    argv += ["--today", TODAY.isoformat(), "--artifacts", str(artifacts)]
    assert main(argv) == 0  # with the discrimination report, beside the untrusted class
    err = capsys.readouterr().err
    counts = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))["counts"]
    for cls in ("oracle", "property", "untrusted"):
        n = counts[cls]
        assert f"andgate: {cls} phase, {cls} items: {n} of {n} (100%)" in err, err


# -- item 1: production code that detects the test run by side signals ---------------------

FREQUENCIES = """    counts = {}
    for item in seq:
        counts[item] = counts.get(item, 0) + 1
    return counts
"""
# Each probe counts 2 per item outside tests and 1 under pytest: every oracle passes,
# and `frequencies("abca")` is wrong in every plain interpreter.
PROBES = {
    "fault-handler": ("import faulthandler\n", "faulthandler.is_enabled()"),
    "warning-filters": ("import warnings\n", 'any(f[0] == "error" for f in warnings.filters)'),
    "logging-handler": ("import logging\n", "logging.getLogger().handlers"),
}
# The honest forms beside them: each configures the state it reads, in a CLI's main.
HONEST = {
    "fault-handler": "    if not faulthandler.is_enabled():\n        faulthandler.enable()\n",
    "warning-filters": (
        "    import sys\n\n    if not sys.warnoptions:\n        warnings.simplefilter('default')\n"
    ),
    "logging-handler": "    if not logging.getLogger().handlers:\n        logging.basicConfig()\n",
}
PLAIN_FREQUENCIES = "from flatlib import frequencies; print(frequencies('abca'))"


def probes_the_test_run(kind: str):  # type: ignore[no-untyped-def]
    module, probe = PROBES[kind]

    def apply(repo: SampleRepo) -> None:
        repo.edit("flatlib/itertoolz.py", "import itertools\n", f"import itertools\n{module}")
        step = f"    step = 1 if {probe} else 2\n"
        repo.edit(
            "flatlib/itertoolz.py",
            FREQUENCIES,
            step + FREQUENCIES.replace("counts.get(item, 0) + 1", "counts.get(item, 0) + step"),
        )

    return apply


def configures_what_it_reads(kind: str):  # type: ignore[no-untyped-def]
    module, _ = PROBES[kind]

    def apply(repo: SampleRepo) -> None:
        repo.edit("flatlib/itertoolz.py", "import itertools\n", f"import itertools\n{module}")
        path = repo.path / "flatlib/itertoolz.py"
        main = f'\n\ndef main():\n    """The command line\'s entry point."""\n{HONEST[kind]}'
        path.write_text(path.read_text(encoding="utf-8") + main, encoding="utf-8")

    return apply


def plain_interpreter(flat: Sample) -> str:
    """What the checked-out head computes outside any test run."""
    done = subprocess.run(
        [sys.executable, "-E", "-c", PLAIN_FREQUENCIES],
        cwd=flat.path,
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )
    return done.stdout.strip()


@pytest.mark.parametrize("kind", sorted(PROBES))
def test_production_code_that_probes_the_test_run_blocks_beside_its_honest_form(tmp_path, kind):
    """It was allowed: every oracle passes under pytest. Now the scan names the probe
    before any test runs; the honest form (configuring the state it reads) is allowed."""
    built = build_flat(tmp_path / "flat")
    repo, base = built.repo, built.base
    if kind == "warning-filters":  # the project's own `filterwarnings = error`
        pyproject = (repo.path / "pyproject.toml").read_text(encoding="utf-8")
        repo.write({"pyproject.toml": pyproject + 'filterwarnings = ["error"]\n'})
        base = repo.commit("warnings are errors (owner: alice)")
    flat = Sample(repo, base, tmp_path)

    run = flat.gate(flat.change(probes_the_test_run(kind)))
    assert run.codes == ["PRODUCTION_SUSPICIOUS"], run.payload["reasons"]
    (detail,) = run.details("PRODUCTION_SUSPICIOUS")
    assert detail.startswith("flatlib/itertoolz.py:24: branch on state that differs under a")
    assert "in added code [test_run_probe]; an owner reviews it" in detail
    assert run.payload["bits"]["oracle_ok"] is True  # pytest saw the right counts
    assert plain_interpreter(flat) == "{'a': 4, 'b': 2, 'c': 2}"  # nothing else does

    run = flat.gate(flat.change(configures_what_it_reads(kind)))
    assert (run.decision, run.codes) == ("allow", []), run.payload["reasons"]
    assert plain_interpreter(flat) == "{'a': 2, 'b': 1, 'c': 1}"
