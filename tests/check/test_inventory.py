"""inventory.py directly: which items the inventory holds, and which files held an
oracle item (what oracle markers decide oracle-class files by)."""

from __future__ import annotations

from andgate.check.inventory.items import build_inventory, oracle_holders
from andgate.process.results import CollectedItem, RunResult
from andgate.records import ItemFacts


def _item(nodeid: str, cls: str) -> CollectedItem:
    path, _, name = nodeid.partition("::")
    return CollectedItem(ItemFacts(nodeid, path, name), cls, "why")


def _run(label: str, *items: CollectedItem, outcome: str = "passed") -> RunResult:
    phases = {"setup": "passed", "call": outcome, "teardown": "passed"}
    reports = {i.facts.nodeid: phases for i in items}
    return RunResult(label, 0, 0.1, items=items, reports=reports)


def test_oracle_holders_are_the_files_of_oracle_items_on_head_and_on_base():
    head_oracle = _run(
        "oracle", _item("tests/a.py::t", "oracle"), _item("tests/u.py::t", "untrusted")
    )
    inventory = build_inventory(None, head_oracle, None, None)
    base = _run(
        "base-oracle", _item("tests/gone.py::t", "oracle"), _item("tests/p.py::t", "property")
    )
    assert oracle_holders(inventory, base) == {"tests/a.py", "tests/gone.py"}
    assert oracle_holders(inventory, None) == {"tests/a.py"}


def test_the_inventory_takes_each_class_from_its_own_run():
    untrusted = _run("untrusted", _item("t/u.py::t", "untrusted"), _item("t/o.py::t", "oracle"))
    oracle = _run("oracle", _item("t/o.py::t", "oracle"), outcome="failed")
    records = {r.facts.nodeid: r for r in build_inventory(untrusted, oracle, None, None)}
    assert (records["t/u.py::t"].cls, records["t/u.py::t"].outcome) == ("untrusted", "passed")
    # The untrusted run collects the oracle item too; its outcome is the oracle run's.
    assert (records["t/o.py::t"].cls, records["t/o.py::t"].outcome) == ("oracle", "failed")
