"""The approval evidence's pure parts: which oracle items a change edits, what the
edited tests import and name, which functions are mutated in which order, and which
of base's failures head's edit hides (`check/evidence/`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from andgate.check.cache import KillerCache
from andgate.check.discrimination.mutate import mutants_of
from andgate.check.evidence.edited import (
    EditedFile,
    conftest_reach,
    edited_files,
    edited_functions,
    helper_reach,
)
from andgate.check.evidence.hidden import BaseOnHead, edited_items, hidden_failures
from andgate.check.evidence.imports import Target, import_targets, imported_files
from andgate.check.evidence.mutations import (
    caught_by_unedited,
    mutant_limit,
    remembered_first,
    slowest,
)
from andgate.check.evidence.targets import (
    Function,
    choose_functions,
    mutants_for,
    names_read_by,
    one_line,
    spread,
    touched_lines,
)
from andgate.git import Change
from andgate.process.results import RunResult
from andgate.records import Outcome

ORACLE = b"""\
import pytest
from pkg import area, initials


def helper(x):
    return area(x, x)


def test_initials():
    assert initials("Ada B Lovelace") == "A.L."


@pytest.mark.parametrize("side", [1, 2])
def test_square(side):
    assert helper(side) == side * side


class TestArea:
    def test_zero(self):
        assert area(0, 3) == 0
"""


def edit(text: bytes, old: str, new: str) -> bytes:
    assert text.count(old.encode()) == 1, old
    return text.replace(old.encode(), new.encode())


# -- which oracle items a change edits --------------------------------------------------


def test_a_changed_assert_edits_its_test_only():
    after = edit(ORACLE, '== "A.L."', 'in "A.L."')
    assert edited_functions(ORACLE, after) == {"test_initials"}


def test_a_changed_parametrisation_and_a_changed_method_are_edits():
    after = edit(ORACLE, "[1, 2]", "[1]")
    after = edit(after, "area(0, 3) == 0", "area(0, 3) >= 0")
    assert edited_functions(ORACLE, after) == {"test_square", "TestArea.test_zero"}


def test_a_deleted_test_is_an_edit():
    after = edit(
        ORACLE, 'def test_initials():\n    assert initials("Ada B Lovelace") == "A.L."\n', ""
    )
    assert edited_functions(ORACLE, after) == {"test_initials"}


def test_adding_tests_with_new_imports_and_helpers_edits_nothing():
    after = ORACLE.replace(b"import pytest\n", b"import pytest\nimport math\n")
    after += (
        b"\n\ndef _twice(x):\n    return 2 * x\n\n\ndef test_new():\n    assert _twice(1) == 2\n"
    )
    assert edited_functions(ORACLE, after) == frozenset()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("return area(x, x)", "return x * x"),  # a helper the tests call changed
        ("import pytest\n", "import pytest\nTOLERANCE = 1\n"),  # a new module-level statement
        ("from pkg import area, initials", "from pkg import initials\nfrom fake import area"),
        ("def helper(x):\n    return area(x, x)\n\n\n", ""),
    ],
    ids=["helper", "statement", "rebinding-import", "removed-helper"],
)
def test_any_other_change_to_the_module_edits_every_item(old, new):
    assert edited_functions(ORACLE, edit(ORACLE, old, new)) is None


def test_a_removed_module_statement_edits_every_item_a_removed_test_class_its_tests():
    assert edited_functions(ORACLE + b"\nLIMIT = 3\n", ORACLE) is None
    without = edit(ORACLE, "class TestArea:\n    def test_zero(self):\n", "def _gone(self):\n")
    assert edited_functions(ORACLE, without) == {"TestArea.test_zero"}


def test_a_new_function_shadowing_a_builtin_edits_every_item():
    assert edited_functions(ORACLE, ORACLE + b"\n\ndef len(x):\n    return 0\n") is None


def test_a_side_that_does_not_parse_edits_every_item():
    assert edited_functions(ORACLE, b"def (:\n") is None


def change(status: str, old: str | None, new: str | None) -> Change:
    return Change(status, old, new, "100644", "100644")


def test_edited_files_by_status_conftest_and_helper():
    modified = change("M", "tests/o/test_a.py", "tests/o/test_a.py")
    added_only = change("M", "tests/o/test_b.py", "tests/o/test_b.py")
    deleted = change("D", "tests/o/test_c.py", None)
    renamed = change("R", "tests/o/test_d.py", "tests/o/test_e.py")
    conftest = change("M", "tests/deep/conftest.py", "tests/deep/conftest.py")
    base = {
        "tests/o/test_a.py",
        "tests/o/test_b.py",
        "tests/o/test_c.py",
        "tests/o/test_d.py",
        "tests/deep/test_f.py",
        "tests/o/test_g.py",
    }
    sides = {
        modified: (ORACLE, edit(ORACLE, '== "A.L."', 'in "A.L."')),
        added_only: (ORACLE, ORACLE + b"\n\ndef test_more():\n    pass\n"),
        renamed: (ORACLE, ORACLE),
    }
    changes = [modified, added_only, deleted, renamed, conftest]
    reach = conftest_reach(changes)
    found = edited_files(changes, base, sides, reach)
    assert found == (
        EditedFile("tests/deep/test_f.py", "tests/deep/test_f.py", None),
        EditedFile("tests/o/test_a.py", "tests/o/test_a.py", frozenset({"test_initials"})),
        EditedFile("tests/o/test_c.py", None, None),
    )
    # a rename that keeps every test is no edit; under a conftest the change adds,
    # every oracle file is edited
    assert "tests/o/test_d.py" not in [e.path for e in found]
    added = conftest_reach([change("A", None, "tests/o/conftest.py")])
    assert [(e.path, e.head_path) for e in edited_files([renamed], base, sides, added)] == [
        ("tests/o/test_a.py", "tests/o/test_a.py"),
        ("tests/o/test_b.py", "tests/o/test_b.py"),
        ("tests/o/test_c.py", "tests/o/test_c.py"),
        ("tests/o/test_d.py", "tests/o/test_e.py"),
        ("tests/o/test_g.py", "tests/o/test_g.py"),
    ]


def test_a_root_conftest_reaches_every_file():
    reach = conftest_reach([change("A", None, "conftest.py")])
    assert reach("tests/o/test_a.py") and reach("pkg/tests/test_x.py")
    assert not conftest_reach([change("M", "pkg/conftest.py", "pkg/conftest.py")])("tests/x.py")


def test_an_oracle_file_importing_a_changed_helper_is_reached():
    sources = {
        "tests/o/test_a.py": b"from tests.support import close\n",
        "tests/o/test_b.py": b"from . import checks\n",
        "tests/o/test_c.py": b"import json\n",
    }
    paths = {"tests/support.py", "tests/o/checks.py", *sources}
    reach = helper_reach(sources, {"tests/support.py", "tests/o/checks.py"}, paths)
    assert [p for p in sorted(sources) if reach(p)] == ["tests/o/test_a.py", "tests/o/test_b.py"]


def test_edited_items_come_from_base_collection_or_the_function_names():
    edited = [EditedFile("t/test_a.py", "t/test_a.py", frozenset({"test_x", "TestY.test_z"}))]
    assert EditedFile("t/test_a.py", None).holds("t/test_a.py::test_anything[1]")
    assert edited[0].holds("t/test_a.py::TestY::test_z")
    assert not edited[0].holds("t/test_a.py::test_other")
    assert edited_items(edited, None) == ("t/test_a.py::TestY::test_z", "t/test_a.py::test_x")


# -- what the edited tests import and name ---------------------------------------------------


def test_import_targets_absolute_relative_and_from():
    tree = ast.parse(
        "import pkg.sub.mod\nfrom pkg import f\nfrom . import helpers\nfrom ..shared import x\n"
    )
    found = import_targets("tests/oracles/test_a.py", tree)
    assert Target("pkg/sub/mod") in found and Target("pkg/sub") in found
    assert Target("pkg") in found and Target("pkg/f") in found
    assert Target("tests/oracles/helpers", anchored=True) in found
    assert Target("tests/shared", anchored=True) in found
    assert Target("tests/shared/x", anchored=True) in found


def test_a_module_is_found_in_any_layout_and_a_package_brings_its_modules():
    paths = {
        "src/pkg/__init__.py",
        "src/pkg/text.py",
        "src/pkg/sub/deep.py",
        "toolz/itertoolz.py",
        "other/text.py",
    }
    tree = ast.parse("from pkg import chunk\nfrom toolz.itertoolz import groupby\n")
    assert imported_files("tests/test_x.py", tree, paths) == [
        "src/pkg/__init__.py",
        "src/pkg/text.py",
        "toolz/itertoolz.py",
    ]
    assert Target("text", anchored=True).files(paths) == []
    assert Target("text").files(paths) == ["other/text.py", "src/pkg/text.py"]


def test_names_read_by_the_edited_tests_their_helpers_and_fixtures():
    tree = ast.parse(ORACLE)
    assert names_read_by(tree, frozenset({"test_initials"})) == {"initials"}
    assert names_read_by(tree, frozenset({"test_square"})) == {
        "area",
        "pytest",
        "mark",
        "parametrize",
    }
    fixture = ast.parse(
        "import pytest\nfrom pkg import make, area\n\n\n@pytest.fixture\ndef shape():\n"
        "    return make(3)\n\n\ndef test_a(shape):\n    chunk = 2\n"
        "    assert shape.area() == chunk\n"
    )
    # the fixture it takes and what that calls; a local variable is no production name
    assert names_read_by(fixture, None) == {"make", "area", "pytest", "fixture"}


# -- which functions are mutated, in which order --------------------------------------------

PRODUCTION = """\
class Shape:
    def __init__(self, side):
        self.side = side

    def __eq__(self, other):
        return self.side == other.side

    def unused(self):
        return self.side > 0


def area(a, b):
    return _positive(a) * b


def _positive(x):
    return x if x > 0 else 0


def initials(name):
    return "".join(w[0] + "." for w in name.split() if len(w) > 1)


def untested(x):
    return x + 1 > 2
"""


def test_named_functions_then_one_call_deeper_then_touched_ones():
    chosen = choose_functions(
        {"pkg/shapes.py": PRODUCTION},
        imported={"pkg/shapes.py"},
        names={"area", "initials", "Shape"},
        touched={"pkg/shapes.py": {25}},  # inside `untested`
    )
    assert [(f.name, f.exercised, bool(f.touched)) for f in chosen] == [
        ("Shape.__init__", 0, False),
        ("Shape.__eq__", 0, False),
        ("area", 0, False),
        ("initials", 0, False),
        ("_positive", 1, False),
        ("untested", None, True),
    ]
    both = choose_functions(
        {"pkg/shapes.py": PRODUCTION}, {"pkg/shapes.py"}, {"initials"}, {"pkg/shapes.py": {21}}
    )
    assert [f.name for f in both] == ["initials"] and both[0].touched == {21}


def test_a_special_method_is_named_by_its_class_only():
    production = {"pkg/shapes.py": PRODUCTION}
    assert choose_functions(production, {"pkg/shapes.py"}, {"__eq__", "side"}, {}) == []


def test_mutants_come_round_robin_with_touched_lines_first():
    functions = [
        Function("pkg/shapes.py", "untested", 24, None, frozenset({25})),
        Function("pkg/shapes.py", "_positive", 16, 1),
    ]
    mutants = mutants_for(functions, {"pkg/shapes.py": PRODUCTION}, per_function=3)
    assert [m.function for m in mutants] == [
        "untested",
        "_positive",
        "untested",
        "_positive",
        "untested",
        "_positive",
    ]
    assert all(m.line == 25 for m in mutants if m.function == "untested")
    assert len(mutants_for(functions, {"pkg/shapes.py": PRODUCTION}, total=2)) == 2


def test_spread_keeps_the_order_and_covers_the_whole():
    every = mutants_of("pkg/shapes.py", PRODUCTION)
    chosen = spread(every, 3)
    assert len(chosen) == 3 and chosen[0] is every[0]
    assert [every.index(m) for m in chosen] == sorted(every.index(m) for m in chosen)
    assert spread(every[:2], 5) == every[:2] and spread(every, 0) == []


def test_a_mutation_is_one_line_around_what_changed():
    mutant = next(
        m
        for m in mutants_of("pkg/shapes.py", PRODUCTION, only={"initials"})
        if m.description == "`>` -> `>=`"
    )
    assert one_line(mutant) == "`…name.split() if len(w) > 1)` -> `…name.split() if len(w) >= 1)`"
    short = mutants_of("pkg/shapes.py", PRODUCTION, only={"untested"})[-1]
    assert one_line(short) == "`return x + 1 > 2` -> `return x + 1 > 3`"


def test_touched_lines_are_heads_added_and_edited_lines():
    assert touched_lines(b"a\nb\nc\n", b"a\nB\nc\nd\n") == {2, 4}
    assert touched_lines(None, b"x\ny\n") == {1, 2}
    assert touched_lines(b"a\nb\n", b"a\n") == set()


def test_what_was_evidence_last_time_runs_first(tmp_path: Path):
    mutants = mutants_of("pkg/shapes.py", PRODUCTION, only={"untested", "_positive"})[:4]
    cache = KillerCache(tmp_path)
    cache.put(mutants[1].patch, "head", ["t.py::test_h"])  # head caught it: last
    cache.put(mutants[2].patch, "base", ["t.py::test_b"])  # base caught, head not: first
    cache.put(mutants[3].patch, "base", ["t.py::test_b"])
    cache.put(mutants[3].patch, "head", ["t.py::test_h"])
    ordered = remembered_first(mutants, cache, "base", "head")
    assert ordered == [mutants[2], mutants[0], mutants[1], mutants[3]]
    assert remembered_first(mutants, KillerCache(None), "base", "head") == mutants


# -- which failures the edit hides -------------------------------------------------------------


def test_a_failure_head_passes_or_deletes_is_hidden_one_it_shows_is_not():
    base = BaseOnHead(
        outcomes={
            "t/test_a.py::test_passes_on_head": Outcome.FAILED,
            "t/test_a.py::test_fails_on_head": Outcome.FAILED,
            "t/test_a.py::test_gone": Outcome.ERROR,
            "t/test_a.py::test_fine": Outcome.PASSED,
            "t/test_b.py::test_file_gone": Outcome.FAILED,
        },
        messages={"t/test_a.py::test_passes_on_head": "E  assert 4.0 == 4.5\nAssertionError"},
        broken={"t/test_c.py": "ImportError: cannot import name 'x'"},
    )
    head = {
        "t/test_a.py::test_passes_on_head": Outcome.PASSED,
        "t/test_a.py::test_fails_on_head": Outcome.FAILED,
        "t/test_c.py::test_y": Outcome.PASSED,
    }
    found = hidden_failures(base, head, head_failed=False, deleted={"t/test_b.py"})
    assert [(h.nodeid, h.on_head) for h in found] == [
        ("t/test_a.py::test_gone", "deleted"),
        ("t/test_a.py::test_passes_on_head", "passes"),
        ("t/test_b.py::test_file_gone", "deleted"),
        ("t/test_c.py", "deleted"),
    ]
    assert found[1].failure == "failed: AssertionError"
    assert found[3].failure == "collection error: ImportError: cannot import name 'x'"
    # head's edited oracle shows a failure of its own: a missing item may be it
    shown = hidden_failures(base, head, head_failed=True, deleted={"t/test_b.py"})
    assert [h.nodeid for h in shown] == [
        "t/test_a.py::test_passes_on_head",
        "t/test_b.py::test_file_gone",
    ]


def test_a_mutant_an_unedited_test_kills_is_caught_on_head_too():
    edited = [
        EditedFile("t/test_a.py", "t/test_a.py", frozenset({"test_loosened"})),
        EditedFile("t/test_b.py", "t/test_b.py", None),  # its module changed: every item
    ]
    assert caught_by_unedited(["t/test_a.py::test_untouched[2]"], edited)
    assert not caught_by_unedited(["t/test_a.py::test_loosened"], edited)
    assert not caught_by_unedited(["t/test_b.py::test_untouched"], edited)
    assert not caught_by_unedited(["collection error in t/test_a.py"], edited)
    assert caught_by_unedited(["t/test_a.py::test_loosened", "t/test_a.py::test_other"], edited)


def test_an_item_under_a_mutant_has_ten_times_its_own_time_within_the_checks_limit():
    assert mutant_limit(60.0, 0.001) == 2.0  # the floor: a mutant that loops forever
    assert mutant_limit(60.0, 2.0) == 20.0
    assert mutant_limit(60.0, 30.0) == 60.0 and mutant_limit(None, 30.0) == 300.0
    run = RunResult(
        "evidence base",
        0,
        1.0,
        reports={
            "t/a.py::x": {"seconds": 0.5},
            "t/a.py::hung": {"seconds": 60.0, "timeout": 60.0},
            "t/b.py::y": {"seconds": 1.5},
        },
    )
    assert slowest([run], {"t/a.py"}) == 0.5  # a timeout is no measure of the item
    assert slowest([run], None) == 1.5 and slowest([], None) == 0.0
