"""The classifier's reasons, its JSON hand-off to the plugin and the invariant readers."""

from __future__ import annotations

import dataclasses

import pytest

from andgate.plugin.classify import (
    Rules,
    accepted_invariants,
    classify_item,
    declared_invariants,
    has_accepted_invariant,
    normalize_invariant,
)
from andgate.records import ItemFacts, TrustClass

PATH = "tests/test_a.py"
ITEM = ItemFacts(f"{PATH}::test_f", PATH, "test_f", frozenset({"slow", "db"}))
ONLY = frozenset({PATH})


def test_item_facts_json_is_the_plugin_format_and_round_trips():
    data = ITEM.to_json()
    assert data == {
        "nodeid": "tests/test_a.py::test_f",
        "path": PATH,
        "name": "test_f",
        "markers": ["db", "slow"],
    }
    assert ItemFacts.from_json(data) == ITEM


def test_item_facts_are_slotted():
    """A check holds several per collected item: no per-instance __dict__."""
    assert "__slots__" in vars(ItemFacts)
    assert not hasattr(ITEM, "__dict__")


def test_rules_json_lists_every_field_sorted_and_round_trips():
    rules = Rules(oracle_files=frozenset({"b.py", "a.py"}), live_freezes=("y", "x"))
    data = rules.to_json()
    assert data["oracle_files"] == ["a.py", "b.py"]
    assert data["live_freezes"] == ["y", "x"]
    assert data["flake_markers"] == []
    assert Rules.from_json(data) == rules


def test_rules_json_sorts_a_file_set_whatever_its_iteration_order():
    names = [f"{c}.py" for c in "zyxwvutsrqponm"]  # 14! orders; one sorted
    assert Rules(oracle_files=frozenset(names)).to_json()["oracle_files"] == sorted(names)


def test_rules_json_without_live_freezes_means_none():
    assert Rules.from_json({"oracle_files": ["a.py"]}) == Rules(oracle_files=frozenset({"a.py"}))


def test_an_item_no_rule_names_is_untrusted_saying_so():
    assert classify_item(ITEM, Rules()) == (TrustClass.UNTRUSTED, "no trust rule matches")


def test_an_oracle_file_item_is_oracle_saying_why():
    assert classify_item(ITEM, Rules(oracle_files=ONLY)) == (
        TrustClass.ORACLE,
        "file matches an oracle glob",
    )


def test_one_shared_marker_is_enough_for_an_oracle_item():
    rules = Rules(oracle_files=ONLY, oracle_markers=frozenset({"db", "oracle"}))
    assert classify_item(ITEM, rules)[0] is TrustClass.ORACLE


def test_a_property_file_with_an_accepted_invariant_is_property_saying_why():
    assert classify_item(ITEM, Rules(property_glob_files=ONLY, property_files=ONLY)) == (
        TrustClass.PROPERTY,
        "property file with an accepted invariant",
    )


def test_a_property_item_without_a_property_marker_is_untrusted_saying_why():
    rules = Rules(
        property_glob_files=ONLY, property_files=ONLY, property_markers=frozenset({"prop"})
    )
    assert classify_item(ITEM, rules) == (
        TrustClass.UNTRUSTED,
        "property file, but the item has no property marker",
    )


def test_a_property_item_with_a_property_marker_is_property():
    rules = Rules(property_glob_files=ONLY, property_files=ONLY, property_markers=frozenset({"db"}))
    assert classify_item(ITEM, rules)[0] is TrustClass.PROPERTY


def test_an_unmarked_oracle_item_falls_through_to_property():
    rules = Rules(
        oracle_files=ONLY,
        oracle_markers=frozenset({"oracle"}),
        property_glob_files=ONLY,
        property_files=ONLY,
    )
    assert classify_item(ITEM, rules)[0] is TrustClass.PROPERTY


def test_a_property_file_item_falls_through_to_a_live_freeze():
    rules = Rules(property_glob_files=ONLY, flake_files=ONLY, live_freezes=("other", "test_a"))
    assert classify_item(ITEM, rules) == (TrustClass.FROZEN_FLAKE, "live freeze 'test_a'")


def test_a_flake_file_item_without_a_freeze_or_a_flake_marker_keeps_the_earlier_reason():
    rules = Rules(oracle_files=ONLY, oracle_markers=frozenset({"o"}), flake_files=ONLY)
    assert classify_item(ITEM, rules) == (
        TrustClass.UNTRUSTED,
        "oracle file, but the item has no oracle marker",
    )


def test_normalize_drops_one_trailing_period_and_the_space_before_it():
    assert normalize_invariant("sum is kept .") == "sum is kept"
    assert normalize_invariant("x  y") == "x y"
    assert normalize_invariant("kept") == "kept"


def test_accepted_invariants_skip_empty_bullets_and_other_lines():
    text = "# Accepted\n-   \n  - a b.\nplain\n- c\n"
    assert accepted_invariants(text) == frozenset({"a b", "c"})


def test_declared_invariants_keep_order_and_skip_empty_ones():
    source = "# INVARIANT: b\nx = 1  # INVARIANT: no\n#INVARIANT:\n  # INVARIANT:  a.\n"
    assert declared_invariants(source) == ("b", "a")


def test_one_accepted_invariant_among_several_declared_is_enough():
    source = "# INVARIANT: unknown\n# INVARIANT: kept\n"
    assert has_accepted_invariant(source, ["kept"])
    assert not has_accepted_invariant(source, ["other"])


def test_the_accepted_invariants_may_come_from_any_iterable_read_once():
    source = "# INVARIANT: unknown\n# INVARIANT: kept\n"
    assert has_accepted_invariant(source, (text for text in ["kept"]))


@pytest.mark.parametrize("value", [ITEM, Rules()], ids=type)
def test_items_and_rules_are_immutable_values(value):
    field = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, None)
