"""`andgate freeze list | add | prune`, and the editor that keeps the file's comments.

The editor is tested by properties over generated freeze files (indent styles,
comments between and inside entries, CRLF, flow-empty lists, dashes alone on
their line): the edited text parses to exactly the intended entries and keeps
every comment line that is not inside a removed entry. The commands run on the
sample project; `add` collects HEAD's tests in a temporary worktree.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from andgate.commands.cli import main
from andgate.commands.freeze import NewFreeze, run_freeze_add, run_freeze_list
from andgate.commands.sample import SAMPLE_TODAY
from andgate.errors import FreezeEditError
from andgate.trust.freeze import Freeze, parse_freezes
from andgate.trust.freeze_edit import (
    add_entry,
    remove_entries,
    split_lines,
    yaml_string,
)
from harness import FREEZE

NEW = {
    "id": "tests/test_x.py::test_new",
    "reason": "flaky: shared runner",
    "first_seen": "2026-11-25",
    "expires": "2026-12-05",
    "owner": "bob",
}


def freezes(text: str) -> tuple[Freeze, ...]:
    parsed = parse_freezes(text, "freeze.yaml", 28)
    assert parsed.invalid == (), parsed.invalid
    return parsed.valid


def as_freeze(entry: dict[str, str]) -> Freeze:
    return Freeze(
        entry["id"],
        entry["reason"],
        dt.date.fromisoformat(entry["first_seen"]),
        dt.date.fromisoformat(entry["expires"]),
        entry["owner"],
    )


def comment_lines(text: str) -> list[str]:
    return [line.strip() for line in split_lines(text) if line.strip().startswith("#")]


# -- generated files ----------------------------------------------------------------------

safe_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85"
    ),
    min_size=1,
    max_size=20,
).filter(lambda s: s.strip() == s and s.strip())
comments = st.lists(st.from_regex(r"# [a-z ]{0,12}", fullmatch=True), max_size=2)


@st.composite
def entries(draw: st.DrawFn) -> list[dict[str, str]]:
    ids = draw(st.lists(safe_text, max_size=4, unique=True))
    out = []
    for freeze_id in ids:
        start = dt.date(2026, 1, 1) + dt.timedelta(days=draw(st.integers(0, 300)))
        out.append(
            {
                "id": freeze_id,
                "reason": draw(safe_text),
                "first_seen": start.isoformat(),
                "expires": (start + dt.timedelta(days=draw(st.integers(0, 28)))).isoformat(),
                "owner": draw(safe_text),
            }
        )
    return out


@st.composite
def freeze_files(draw: st.DrawFn) -> tuple[str, list[dict[str, str]]]:
    """A freeze file in one of the layouts people write, and its entries."""
    items = draw(entries())
    dash = draw(st.sampled_from([0, 2, 4]))
    dash_alone = draw(st.booleans())
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [*draw(comments)]
    if not items and draw(st.booleans()):
        lines.append("freezes: []" + draw(st.sampled_from(["", "  # none yet"])))
    else:
        lines.append("freezes:" + draw(st.sampled_from(["", "  # quarantine"])))
    for item in items:
        lines += [" " * dash + c for c in draw(comments)]
        for number, key in enumerate(item):
            plain_date = key in ("first_seen", "expires") and draw(st.booleans())
            value = item[key] if plain_date else yaml_string(item[key])
            if number == 0 and dash_alone:
                lines.append(" " * dash + "-")
            if number == 0 and not dash_alone:
                lines.append(" " * dash + f"- {key}: {value}")
            else:
                lines.append(" " * (dash + 2) + f"{key}: {value}")
            if draw(st.integers(0, 5)) == 0:
                lines.append(" " * (dash + 2) + "# about " + key)
    lines += draw(comments)
    text = newline.join(lines) + (newline if draw(st.booleans()) else "")
    return text, items


@settings(max_examples=60, deadline=None)
@given(freeze_files())
def test_add_appends_one_entry_and_keeps_every_comment(case):
    text, items = case
    edited = add_entry(text, NEW, "freeze.yaml")
    assert freezes(edited) == (*map(as_freeze, items), as_freeze(NEW))
    assert comment_lines(edited) == comment_lines(text)


@settings(max_examples=60, deadline=None)
@given(freeze_files(), st.data())
def test_remove_drops_exactly_the_chosen_entries(case, data):
    text, items = case
    drop = data.draw(st.sets(st.integers(0, max(len(items) - 1, 0))) if items else st.just(set()))
    edited = remove_entries(text, drop, "freeze.yaml")
    kept = [as_freeze(e) for i, e in enumerate(items) if i not in drop]
    assert freezes(edited) == tuple(kept)
    own = {f"# about {key}" for key in NEW}
    assert [c for c in comment_lines(edited) if c not in own] == [
        c for c in comment_lines(text) if c not in own
    ]


# -- the layouts the contract names ---------------------------------------------------------


def test_add_to_a_flow_empty_list_keeps_its_comment():
    edited = add_entry("# header\nfreezes: []  # none yet\n", NEW, "f.yaml")
    assert edited.splitlines()[:3] == [
        "# header",
        "freezes: # none yet",
        '  - id: "tests/test_x.py::test_new"',
    ]
    assert freezes(edited) == (as_freeze(NEW),)


@pytest.mark.parametrize("text", ["", "# only a comment\n", "freezes:\n", "freezes: ~\n"])
def test_add_to_an_empty_file(text):
    edited = add_entry(text, NEW, "f.yaml")
    assert freezes(edited) == (as_freeze(NEW),)
    assert edited.startswith(text.replace(" ~", ""))


def test_add_after_a_block_scalar_reason():
    text = (
        "freezes:\n"
        "- id: a\n"
        "  reason: |\n"
        "    line one\n"
        "    line two\n"
        "  first_seen: 2026-11-01\n"
        "  expires: 2026-11-10\n"
        "  owner: x\n"
        "\n"
        "# trailing comment stays last\n"
    )
    edited = add_entry(text, NEW, "f.yaml")
    assert edited.endswith("\n# trailing comment stays last\n")
    assert [f.id for f in freezes(edited)] == ["a", NEW["id"]]
    assert '- id: "tests/test_x.py::test_new"\n  reason:' in edited


def test_add_after_a_block_scalar_that_ends_the_list():
    text = (
        "freezes:\n"
        "  - id: a\n"
        "    first_seen: 2026-11-01\n"
        "    expires: 2026-11-10\n"
        "    owner: x\n"
        "    reason: >\n"
        "      folded\n"
        "      text\n"
        "\n"
        "\n"
        "# trailing comment stays last\n"
    )
    edited = add_entry(text, NEW, "f.yaml")
    assert edited == text.replace(
        "      text\n",
        "      text\n" + "".join(add_entry("freezes:\n", NEW, "f").splitlines(True)[1:]),
    )
    assert [f.id for f in freezes(edited)] == ["a", NEW["id"]]


def test_values_with_quotes_and_unicode_stay_one_line():
    entry = dict(NEW, reason='says "flaky"\u2028 on \\ ü runners: yes # no comment')
    edited = add_entry("freezes: []\n", entry, "f.yaml")
    assert freezes(edited)[0].reason == entry["reason"]
    assert len(split_lines(edited)) == 6


def test_removing_every_entry_leaves_an_explicit_empty_list():
    text = (
        "freezes:  # q\n  - id: a\n    reason: r\n    first_seen: 2026-01-01\n"
        "    expires: 2026-01-02\n    owner: o\n# end\n"
    )
    assert remove_entries(text, {0}, "f.yaml") == "freezes: []  # q\n# end\n"


def test_a_byte_order_mark_survives():
    text = "\ufefffreezes: []\n"
    edited = add_entry(text, NEW, "f.yaml")
    assert edited.startswith("\ufefffreezes:")
    assert freezes(edited.removeprefix("\ufeff")) == (as_freeze(NEW),)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("freezes: [{id: a}]\n", "not a block list"),
        ("{freezes: []}\n", "block mapping"),
        ("- a\n", "block mapping"),
        ("other: 1\n", "no 'freezes' key"),
        ("freezes: [\n", "invalid YAML"),
    ],
)
def test_layouts_it_does_not_rewrite_are_refused_with_the_fix(text, fragment):
    with pytest.raises(FreezeEditError, match=fragment):
        add_entry(text, NEW, "f.yaml")


def test_remove_refuses_a_flow_list():
    with pytest.raises(FreezeEditError, match="by hand"):
        remove_entries("freezes: [{id: a}]\n", {0}, "f.yaml")


# -- the commands -------------------------------------------------------------------------

TODAY = dt.date.fromisoformat(SAMPLE_TODAY)
FREEZE_FILE = "tests/flakes/freeze.yaml"
COMMENTED = (
    "# Quarantine (owner: platform-tests)\n"
    + FREEZE.replace("freezes:\n", "freezes:\n  # the timing budget is runner-bound\n")
    + "# keep this line last\n"
)


def add(repo: Path, freeze_id: str, days: int | None = 7, **kw: object) -> int:
    new = NewFreeze(freeze_id, "flaky on shared runners", "bob", days)
    return run_freeze_add(repo, new, manifest="tests/trust_manifest.yaml", today=TODAY, **kw)


def freeze_text(sample) -> str:
    return (sample.path / FREEZE_FILE).read_text(encoding="utf-8")


def test_list_shows_days_left_and_marks_expired(sample, capsys):
    assert run_freeze_list(sample.path, manifest="tests/trust_manifest.yaml", today=TODAY) == 0
    out = capsys.readouterr().out
    assert "tests/test_timing.py::test_mean_is_fast" in out
    assert "2026-12-10  15 " in out
    later = dt.date(2026, 12, 12)
    assert run_freeze_list(sample.path, manifest="tests/trust_manifest.yaml", today=later) == 0
    assert "EXPIRED 2 days ago" in capsys.readouterr().out


def test_list_reports_invalid_entries_and_exits_2(sample, capsys):
    sample.repo.write({FREEZE_FILE: FREEZE.replace('"2026-12-10"', "2027-13-40")})
    assert main(["freeze", "list", "--repo", str(sample.path), "--today", SAMPLE_TODAY]) == 2
    out = capsys.readouterr().out
    assert "INVALID" in out
    assert "tests/flakes/freeze.yaml: freezes[0]" in out and "expires" in out


def test_list_without_a_freeze_file(sample, capsys):
    sample.repo.delete(FREEZE_FILE)
    assert main(["freeze", "list", "--repo", str(sample.path)]) == 0
    assert "nothing is frozen" in capsys.readouterr().out


def test_add_appends_after_the_last_entry_keeping_comments(sample, capsys):
    sample.repo.write({FREEZE_FILE: COMMENTED})
    assert add(sample.path, "test_clamp_inside_range") == 0
    text = freeze_text(sample)
    assert text.startswith(COMMENTED.removesuffix("# keep this line last\n"))
    assert text.endswith(
        '  - id: "test_clamp_inside_range"\n'
        '    reason: "flaky on shared runners"\n'
        '    first_seen: "2026-11-25"\n'
        '    expires: "2026-12-02"\n'
        '    owner: "bob"\n'
        "# keep this line last\n"
    )
    assert [f.id for f in freezes(text)] == [
        "tests/test_timing.py::test_mean_is_fast",
        "test_clamp_inside_range",
    ]
    out = capsys.readouterr().out
    assert "tests/test_misc.py::test_clamp_inside_range" in out


def test_add_creates_a_missing_file_with_max_days_by_default(sample):
    sample.repo.delete(FREEZE_FILE)
    assert add(sample.path, "tests/test_misc.py", days=None) == 0
    (freeze,) = freezes(freeze_text(sample))
    assert (freeze.first_seen, freeze.expires) == (TODAY, TODAY + dt.timedelta(days=28))
    assert freeze_text(sample).startswith("# Frozen flaky tests")


@pytest.mark.parametrize(
    "freeze_id, fragment",
    [
        ("test_mean", "matches the oracle item tests/oracles/test_math_oracle.py::test_mean"),
        ("test_chunk_roundtrip", "matches the property item"),
        ("no_such_test", "matches no test collected in the working tree"),
    ],
)
def test_add_refuses_ids_that_would_not_freeze_an_untrusted_test(
    sample, capsys, freeze_id, fragment
):
    before = freeze_text(sample)
    assert add(sample.path, freeze_id) == 2
    assert fragment in capsys.readouterr().err
    assert freeze_text(sample) == before


def test_add_refuses_a_test_outside_the_frozen_flake_globs(sample, capsys):
    sample.repo.edit(
        "tests/trust_manifest.yaml", 'globs: ["tests/**/*.py"]', 'globs: ["none/*.py"]'
    )
    assert add(sample.path, "test_clamp_inside_range") == 2
    assert "no classes.frozen_flake.globs pattern" in capsys.readouterr().err


def test_add_refuses_bad_input_before_collecting(sample, capsys):
    before = freeze_text(sample)
    assert add(sample.path, "test_clamp_inside_range", days=29) == 2
    assert "--days 29 is over max_freeze_days (28) in tests/trust_manifest.yaml" in (
        capsys.readouterr().err
    )
    assert add(sample.path, "tests/test_timing.py::test_mean_is_fast") == 2
    assert "already has a freeze entry" in capsys.readouterr().err
    new = NewFreeze("test_x", "  ", "bob", 3)
    assert run_freeze_add(sample.path, new, manifest="tests/trust_manifest.yaml", today=TODAY) == 2
    assert "--reason is empty" in capsys.readouterr().err
    assert freeze_text(sample) == before
    sample.repo.write({FREEZE_FILE: "freezes: [\n"})
    assert add(sample.path, "test_x") == 2
    assert "tests/flakes/freeze.yaml: invalid YAML" in capsys.readouterr().err
    assert freeze_text(sample) == "freezes: [\n"


def test_add_through_the_cli_rejects_days_below_one(sample, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["freeze", "add", "x", "--reason", "r", "--owner", "o", "--days", "0"])
    assert exc.value.code == 2
    assert "must be a whole number >= 1" in capsys.readouterr().err


def test_prune_removes_expired_entries_and_says_which(sample, capsys):
    live = (
        '  - id: "tests/test_misc.py"\n    reason: "r"\n    first_seen: "2026-12-01"\n'
        '    expires: "2026-12-20"\n    owner: "o"\n'
    )
    sample.repo.write(
        {FREEZE_FILE: COMMENTED.replace("# keep this line last\n", live + "# keep\n")}
    )
    later = ["--today", "2026-12-10", "--repo", str(sample.path)]
    assert main(["freeze", "prune", *later]) == 0
    out = capsys.readouterr().out
    assert "removed 1 expired freeze" in out and "tests/test_timing.py::test_mean_is_fast" in out
    text = freeze_text(sample)
    assert text == (
        "# Quarantine (owner: platform-tests)\nfreezes:\n  # the timing budget is "
        "runner-bound\n" + live + "# keep\n"
    )
    assert main(["freeze", "prune", *later]) == 0
    assert "no expired freeze" in capsys.readouterr().out
    assert freeze_text(sample) == text


def test_freeze_commands_need_a_valid_manifest(sample, capsys):
    sample.repo.edit("tests/trust_manifest.yaml", "max_freeze_days: 28", "max_freeze_dayz: 28")
    assert main(["freeze", "list", "--repo", str(sample.path)]) == 2
    err = capsys.readouterr().err
    assert "tests/trust_manifest.yaml: unknown key 'max_freeze_dayz'" in err
    assert "did you mean 'max_freeze_days'?" in err


@pytest.mark.parametrize("action", ["list", "add", "prune"])
def test_help(capsys, action):
    with pytest.raises(SystemExit) as exc:
        main(["freeze", action, "--help"])
    assert exc.value.code == 0
    assert f"usage: andgate freeze {action}" in capsys.readouterr().out
