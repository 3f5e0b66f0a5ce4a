"""The freeze file: each entry's checks and messages, dates and expiry (pure: YAML in)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from andgate.trust.freeze import Freeze, FreezeProblem, FreezeSet, parse_date, parse_freezes

SOURCE = "tests/flakes/freeze.yaml"
TODAY = dt.date(2026, 12, 1)
ENTRY = {
    "id": "test_slow",
    "reason": "shared runner load",
    "first_seen": "2026-11-20",
    "expires": "2026-12-10",
    "owner": "platform",
}
FROZEN = Freeze(
    "test_slow", "shared runner load", dt.date(2026, 11, 20), dt.date(2026, 12, 10), "platform"
)


def entry_yaml(entry: dict) -> str:
    lines = [f"    {key}: {value}" for key, value in entry.items()]
    return "freezes:\n  -\n" + "\n".join(lines) + "\n"


def problems(text: str, max_days: int = 28) -> list[str]:
    return [p.message for p in parse_freezes(text, SOURCE, max_days).invalid]


def one_problem(**changes: object) -> str:
    entry = {k: v for k, v in {**ENTRY, **changes}.items() if v is not None}
    (message,) = problems(entry_yaml(entry))
    return message


# -- valid files --------------------------------------------------------------------------


def test_a_missing_or_empty_freeze_file_freezes_nothing():
    assert parse_freezes(None, SOURCE, 28) == FreezeSet(SOURCE)
    assert parse_freezes("", SOURCE, 28) == FreezeSet(SOURCE)
    assert parse_freezes("freezes:\n", SOURCE, 28) == FreezeSet(SOURCE)


def test_a_valid_entry_is_one_freeze_with_a_stripped_id():
    text = entry_yaml({**ENTRY, "id": "'  test_slow  '"})
    assert parse_freezes(text.encode(), SOURCE, 28) == FreezeSet(SOURCE, (FROZEN,), ())


def test_unquoted_dates_are_read_as_dates():
    text = entry_yaml({**ENTRY, "first_seen": "2026-11-20", "expires": "2026-12-10"})
    assert parse_freezes(text, SOURCE, 28).valid == (FROZEN,)


def test_a_freeze_may_last_exactly_max_freeze_days_and_start_and_end_on_one_day():
    assert problems(entry_yaml(ENTRY), max_days=20) == []
    assert problems(entry_yaml({**ENTRY, "expires": "2026-11-20"}), max_days=1) == []


def test_valid_and_invalid_entries_keep_their_file_order():
    text = (
        entry_yaml({**ENTRY, "id": "a"})
        + entry_yaml({**ENTRY, "id": "b", "owner": "''"}).replace("freezes:\n", "")
        + entry_yaml({**ENTRY, "id": "c"}).replace("freezes:\n", "")
    )
    parsed = parse_freezes(text, SOURCE, 28)
    assert [f.id for f in parsed.valid] == ["a", "c"]
    assert [(p.index, p.id) for p in parsed.invalid] == [(1, "b")]


def test_freezes_problems_and_freeze_sets_are_immutable():
    parsed = parse_freezes(entry_yaml(ENTRY) + "x: 1\n", SOURCE, 28)
    for value in (FROZEN, FreezeProblem(None, None, "m"), parsed):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.id = "other"  # type: ignore[misc]


# -- dates and expiry ----------------------------------------------------------------------


def test_a_freeze_expires_on_its_expiry_day():
    assert not FROZEN.is_expired(dt.date(2026, 12, 9))
    assert FROZEN.is_expired(dt.date(2026, 12, 10))
    assert FROZEN.days_left(TODAY) == 9


def test_a_freeze_set_splits_live_and_expired_freezes():
    old = Freeze("old", "r", dt.date(2026, 11, 1), dt.date(2026, 11, 5), "o")
    freezes = FreezeSet(SOURCE, (FROZEN, old))
    assert (freezes.live(TODAY), freezes.expired(TODAY)) == ((FROZEN,), (old,))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (dt.date(2026, 1, 2), dt.date(2026, 1, 2)),
        (" 2026-01-02 ", dt.date(2026, 1, 2)),
        (dt.datetime(2026, 1, 2, 3, 4), None),
        ("2026-02-30", None),
        ("20260102", None),
        ("2026-01-02T00:00", None),
        (20260102, None),
        (None, None),
    ],
)
def test_parse_date_takes_only_a_calendar_date(value, expected):
    assert parse_date(value) == expected


# -- problems ----------------------------------------------------------------------------


def test_invalid_yaml_is_one_problem_for_the_whole_file():
    parsed = parse_freezes("freezes: [\n", SOURCE, 28)
    assert parsed.source == SOURCE and parsed.valid == ()
    assert [(p.index, p.id) for p in parsed.invalid] == [(None, None)]
    assert parsed.invalid[0].message.startswith(f"{SOURCE}: invalid YAML (line 2)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1]", "must be a mapping with a 'freezes' list"),
        ("freezes: []\nfreeze: []\n", "unknown key 'freeze'; only 'freezes' is allowed"),
        ("freezes: {a: 1}\n", "'freezes' must be a list of entries"),
    ],
)
def test_a_file_of_the_wrong_shape_is_one_problem(text, message):
    assert parse_freezes(text, SOURCE, 28).invalid == (
        FreezeProblem(None, None, f"{SOURCE}: {message}"),
    )


def test_an_entry_that_is_not_a_mapping_lists_the_fields():
    assert parse_freezes("freezes: [x]\n", SOURCE, 28).invalid == (
        FreezeProblem(
            0,
            None,
            f"{SOURCE}: freezes[0] must be a mapping with id, reason, first_seen, expires, owner",
        ),
    )


def test_an_unknown_entry_key_names_the_entry_and_the_allowed_keys():
    assert one_problem(ownr="x") == (
        f"{SOURCE}: freezes[0] (id 'test_slow'): unknown key 'ownr'; "
        "allowed keys: id, reason, first_seen, expires, owner"
    )


@pytest.mark.parametrize("field", ["id", "reason", "owner"])
@pytest.mark.parametrize("value", [None, "''", "'  '", "3"])
def test_id_reason_and_owner_must_be_non_empty_strings(field, value):
    message = one_problem(**{field: value})
    assert message.endswith(f": {field} is missing or empty; add a non-empty string")


def test_an_entry_without_a_string_id_is_named_by_its_index_only():
    problem = parse_freezes(entry_yaml({**ENTRY, "id": 7}), SOURCE, 28).invalid[0]
    assert (problem.id, problem.message) == (
        None,
        f"{SOURCE}: freezes[0]: id is missing or empty; add a non-empty string",
    )


def test_two_entries_for_one_id_are_both_refused():
    text = entry_yaml(ENTRY) + entry_yaml({**ENTRY, "id": "' test_slow'"}).replace("freezes:\n", "")
    assert problems(text) == [
        f"{SOURCE}: freezes[0] (id 'test_slow'): duplicate id; "
        "each test may be frozen by one entry only",
        f"{SOURCE}: freezes[1] (id ' test_slow'): duplicate id; "
        "each test may be frozen by one entry only",
    ]


@pytest.mark.parametrize("field", ["first_seen", "expires"])
def test_a_missing_date_says_how_to_write_it(field):
    assert one_problem(**{field: None}) == (
        f"{SOURCE}: freezes[0] (id 'test_slow'): {field} is missing; add it as YYYY-MM-DD"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [("'2026-12-1'", "'2026-12-1'"), ("2026-12-10 10:00:00", "'2026-12-10 10:00:00'")],
)
def test_a_value_that_is_not_a_date_is_shown_as_written(value, shown):
    assert one_problem(expires=value) == (
        f"{SOURCE}: freezes[0] (id 'test_slow'): expires {shown} is not a date; "
        "write it as YYYY-MM-DD"
    )


def test_an_empty_first_seen_is_not_a_date():
    assert one_problem(first_seen="''").endswith(
        "first_seen '' is not a date; write it as YYYY-MM-DD"
    )


def test_an_expiry_before_first_seen_is_refused():
    assert one_problem(expires="2026-11-19") == (
        f"{SOURCE}: freezes[0] (id 'test_slow'): expires is before first_seen; fix the dates"
    )


def test_a_freeze_longer_than_max_freeze_days_is_refused():
    (message,) = problems(entry_yaml(ENTRY), max_days=19)
    assert message == (
        f"{SOURCE}: freezes[0] (id 'test_slow'): freeze lasts 20 days, over max_freeze_days (19); "
        "shorten it or fix the test"
    )


def test_an_expired_freeze_has_one_message_with_its_fix_and_freeze_facts_sort_entries():
    import datetime as dt

    from andgate.records import FreezeFacts
    from andgate.trust.freeze import freeze_facts

    text = (
        "freezes:\n"
        "  - {id: t_old, reason: r, first_seen: 2026-11-01, expires: 2026-11-10, owner: o}\n"
        "  - {id: t_new, reason: r, first_seen: 2026-11-20, expires: 2026-12-10, owner: o}\n"
        "  - {id: t_bad, reason: r, first_seen: x, expires: 2026-12-10, owner: o}\n"
    )
    freezes = parse_freezes(text, "f.yaml", 28)
    (old,) = freezes.expired(dt.date(2026, 11, 25))
    assert old.expired_message() == (
        "'t_old' expired on 2026-11-10 (owner o); fix the test, or renew the freeze with an "
        "owner's approval (andgate freeze prune, then freeze add)"
    )
    facts = freeze_facts(freezes, dt.date(2026, 11, 25), ["freeze 't_new' matches nothing"])
    assert facts == FreezeFacts(
        expired=(old.expired_message(),),
        invalid=(freezes.invalid[0].message,),
        ineffective=("freeze 't_new' matches nothing",),
    )
