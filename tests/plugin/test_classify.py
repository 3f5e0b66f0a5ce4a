"""The classifier: the contract's order, marker rule, invariants and freeze matching."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from andgate.plugin.classify import (
    Rules,
    accepted_invariants,
    classify_item,
    declared_invariants,
    freeze_matches,
    has_accepted_invariant,
    normalize_invariant,
)
from andgate.records import ItemFacts, TrustClass

ITEM = ItemFacts(
    "tests/x/test_a.py::TestK::test_f[1]", "tests/x/test_a.py", "test_f", frozenset({"slow"})
)


def rules(**kw) -> Rules:
    defaults = {
        k: frozenset()
        for k in (
            "oracle_files",
            "oracle_markers",
            "property_glob_files",
            "property_files",
            "property_markers",
            "flake_files",
            "flake_markers",
        )
    }
    defaults.update({k: frozenset(v) if k != "live_freezes" else tuple(v) for k, v in kw.items()})
    return Rules(**defaults)


def test_oracle_by_glob_without_markers():
    assert classify_item(ITEM, rules(oracle_files={ITEM.path}))[0] is TrustClass.ORACLE


def test_oracle_needs_one_of_the_markers_when_markers_are_set():
    cls, why = classify_item(ITEM, rules(oracle_files={ITEM.path}, oracle_markers={"oracle"}))
    assert cls is TrustClass.UNTRUSTED
    assert why == "oracle file, but the item has no oracle marker"
    marked = ItemFacts(ITEM.nodeid, ITEM.path, ITEM.name, frozenset({"oracle"}))
    assert (
        classify_item(marked, rules(oracle_files={ITEM.path}, oracle_markers={"oracle"}))[0]
        is TrustClass.ORACLE
    )


def test_property_needs_an_accepted_invariant():
    cls, why = classify_item(ITEM, rules(property_glob_files={ITEM.path}))
    assert (cls, why) == (TrustClass.UNTRUSTED, "property file has no accepted invariant")
    cls, _ = classify_item(ITEM, rules(property_glob_files={ITEM.path}, property_files={ITEM.path}))
    assert cls is TrustClass.PROPERTY


def test_oracle_wins_over_property_and_freeze():
    r = rules(
        oracle_files={ITEM.path},
        property_glob_files={ITEM.path},
        property_files={ITEM.path},
        flake_files={ITEM.path},
        live_freezes=["test_f"],
    )
    assert classify_item(ITEM, r)[0] is TrustClass.ORACLE


def test_freeze_matches_node_id_path_stem_and_function_name():
    for freeze_id in (ITEM.nodeid, ITEM.path, "test_a", "test_f"):
        assert freeze_matches(freeze_id, ITEM), freeze_id
    for freeze_id in ("test_f[1]", "tests/x", "TestK", "test_a.py"):
        assert not freeze_matches(freeze_id, ITEM), freeze_id


def test_freeze_needs_the_flake_glob():
    assert classify_item(ITEM, rules(live_freezes=["test_f"]))[0] is TrustClass.UNTRUSTED
    cls, why = classify_item(ITEM, rules(flake_files={ITEM.path}, live_freezes=["test_f"]))
    assert (cls, why) == (TrustClass.FROZEN_FLAKE, "live freeze 'test_f'")


def test_a_flake_marker_alone_never_freezes():
    cls, why = classify_item(ITEM, rules(flake_files={ITEM.path}, flake_markers={"slow"}))
    assert (cls, why) == (TrustClass.UNTRUSTED, "has a flake marker but no live freeze entry")


def test_invariant_texts_compare_after_whitespace_and_one_trailing_period():
    assert normalize_invariant("  a   b\tc.  ") == "a b c"
    assert normalize_invariant("a b..") == "a b."
    accepted = accepted_invariants("# title\n\n- Sum is  preserved.\n* not a bullet\n-nospace\n")
    assert accepted == frozenset({"Sum is preserved"})
    assert declared_invariants("x = 1\n  #  INVARIANT:   Sum is preserved\n") == (
        "Sum is preserved",
    )
    assert has_accepted_invariant("# INVARIANT: Sum is   preserved.", accepted)
    assert not has_accepted_invariant("# INVARIANT: sum is preserved", accepted)  # case matters
    assert not has_accepted_invariant("# INVARIANT:", accepted)


def test_rules_round_trip_through_json():
    r = rules(oracle_files={"a.py"}, oracle_markers={"o"}, live_freezes=["x", "y"])
    assert Rules.from_json(r.to_json()) == r


paths = st.sampled_from(["tests/a/test_1.py", "tests/test_2.py", "pkg/test_3.py"])
markers = st.frozensets(st.sampled_from(["oracle", "property", "flake", "other"]), max_size=3)
items = st.builds(
    ItemFacts,
    nodeid=st.sampled_from(["n1", "n2"]),
    path=paths,
    name=st.sampled_from(["test_x", "test_y"]),
    markers=markers,
)
file_sets = st.frozensets(paths, max_size=3)
rule_sets = st.builds(
    Rules,
    oracle_files=file_sets,
    oracle_markers=st.frozensets(st.just("oracle"), max_size=1),
    property_glob_files=file_sets,
    property_files=file_sets,
    property_markers=st.frozensets(st.just("property"), max_size=1),
    flake_files=file_sets,
    flake_markers=st.frozensets(st.just("flake"), max_size=1),
    live_freezes=st.lists(st.sampled_from(["test_x", "n1", "test_2", "other"]), max_size=2).map(
        tuple
    ),
)


def expected_class(item: ItemFacts, r: Rules) -> TrustClass:
    """The contract's section 1, written independently of classify_item."""

    def marker_ok(wanted: frozenset[str]) -> bool:
        return not wanted or bool(item.markers & wanted)

    if item.path in r.oracle_files and marker_ok(r.oracle_markers):
        return TrustClass.ORACLE
    if (
        item.path in r.property_glob_files
        and marker_ok(r.property_markers)
        and item.path in r.property_files
    ):
        return TrustClass.PROPERTY
    ids = {item.nodeid, item.path, item.path.rsplit("/", 1)[-1][:-3], item.name}
    if item.path in r.flake_files and ids & set(r.live_freezes):
        return TrustClass.FROZEN_FLAKE
    return TrustClass.UNTRUSTED


@given(items, rule_sets)
def test_classifier_agrees_with_the_contract(item, r):
    assert classify_item(item, r)[0] is expected_class(item, r)


@given(items, rule_sets)
def test_a_marker_alone_never_makes_an_item_trusted(item, r):
    """Stripping the files from the rules leaves only markers: always untrusted."""
    bare = Rules(
        oracle_markers=r.oracle_markers,
        property_markers=r.property_markers,
        flake_markers=r.flake_markers,
        live_freezes=r.live_freezes,
    )
    assert classify_item(item, bare)[0] is TrustClass.UNTRUSTED
