"""The pure decisions about oracle skips and oracle files base cannot collect:
which skips run again on base, when a skip there is the same one, what base's
collection errors become, and what the verdict makes of them (no git, no pytest
process). tests/check/test_skips_on_base.py runs them end to end."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from andgate.check.oracle.phase import (
    normalised_reason,
    on_base_collection,
    oracle_facts,
    skips_by_code,
    skips_to_run_on_base,
    unpinned_files,
)
from andgate.plugin.item_reports import is_missing_module, missing_modules
from andgate.process.argv import selection_args
from andgate.process.results import CollectedItem, RunResult, class_facts
from andgate.records import (
    Bit,
    Decision,
    ItemFacts,
    ItemResult,
    OracleFacts,
    Outcome,
    Reason,
    Role,
    Unpinned,
    Warning_,
)
from andgate.verdict import decide, oracle_findings
from verdict_facts import CLEAN, PASSED_ORACLE

F = "tests/oracles/test_a.py"


def skipped(reason: str, when: str = "call", **extra: Any) -> dict[str, Any]:
    entry = {"setup": "passed", "call": "passed", "teardown": "passed", "skip_when": when}
    entry[when] = "skipped"
    return {**entry, "message": reason, **extra}


PASSED = {"setup": "passed", "call": "passed", "teardown": "passed"}


def run(reports: Mapping[str, Mapping[str, Any]], marks: Mapping[str, str] = {}) -> RunResult:
    items = tuple(
        CollectedItem(ItemFacts(n, F, n.rpartition("::")[2]), "oracle", "glob", marks.get(n))
        for n in reports
    )
    return RunResult("oracle", 0, 1.0, items=items, reports=reports)


def results(head: RunResult) -> tuple[ItemResult, ...]:
    return class_facts(head, Role.ORACLE).results


# -- which skips run again on base --------------------------------------------------------------


def test_only_skips_by_code_run_again_on_base():
    head = run(
        {
            f"{F}::by_code": skipped("not ready"),
            f"{F}::by_unittest_in_setup": skipped("class skipped", when="setup"),
            f"{F}::by_mark": skipped("requires Python 4", when="setup"),
            f"{F}::missing": skipped("could not import 'x'", skip_missing_module=True),
            f"{F}::passes": PASSED,
        },
        marks={f"{F}::by_mark": "requires Python 4"},
    )
    assert skips_to_run_on_base(results(head), head) == (
        f"{F}::by_code",
        f"{F}::by_unittest_in_setup",
    )


# -- when base skips the same way ---------------------------------------------------------------


def decide_skip(on_base: RunResult | None, reason: str = "not ready", **extra: Any):
    head = run({f"{F}::t": skipped(reason, **extra)})
    kept, not_applicable = skips_by_code(results(head), head, on_base)
    return [(r.outcome, r.message) for r in kept], not_applicable


def test_the_same_skip_on_base_is_not_applicable():
    assert decide_skip(run({f"{F}::t": skipped("not ready")})) == (
        [],
        (f"{F}::t skipped: not ready (skipped on base too)",),
    )


@pytest.mark.parametrize(
    ("on_base", "why"),
    [
        ({f"{F}::t": PASSED}, "not skipped on base: passed"),
        ({f"{F}::t": skipped("later")}, "on base it skipped for another reason: later"),
        ({}, "not skipped on base: missing"),
        (
            {f"{F}::t": skipped("not ready", skip_missing_module=True)},
            "on base it skipped for a missing module: not ready",
        ),
    ],
)
def test_anything_else_on_base_fails_the_item_with_pytests_reason(on_base, why):
    assert decide_skip(run(on_base)) == ([(Outcome.SKIPPED, f"not ready ({why})")], ())


def test_a_skip_that_did_not_run_again_on_base_fails():
    assert decide_skip(None) == (
        [(Outcome.SKIPPED, "not ready (base has no such oracle item)")],
        (),
    )
    broken = dataclasses.replace(run({f"{F}::t": skipped("not ready")}), error="timed out")
    assert decide_skip(broken)[1] == ()


def test_a_skip_for_a_missing_module_fails_even_when_base_skips_it_too():
    reason = "could not import 'numpy': No module named 'numpy'"
    same = run({f"{F}::t": skipped(reason, skip_missing_module=True)})
    kept, not_applicable = decide_skip(same, reason, skip_missing_module=True)
    assert not_applicable == ()
    assert kept == [
        (Outcome.SKIPPED, f"{reason} (a skip for a missing module always fails an oracle)")
    ]


# A skip raised for a standard-library C extension this Python was built without
# (six's `requires gdbm`): what the plugin records for it.
GDBM = {"skip_missing_module": True, "skip_missing_names": ["_gdbm"]}


def test_a_skip_for_a_standard_library_module_runs_again_on_base_and_others_do_not():
    head = run(
        {
            f"{F}::gdbm": skipped("requires gdbm", **GDBM),
            f"{F}::numpy": skipped(
                "no numpy", skip_missing_module=True, skip_missing_names=["numpy"]
            ),
            f"{F}::both": skipped(
                "no gdbm or numpy", skip_missing_module=True, skip_missing_names=["_gdbm", "numpy"]
            ),
            f"{F}::nameless": skipped("no", skip_missing_module=True, skip_missing_names=[""]),
        }
    )
    assert skips_to_run_on_base(results(head), head) == (f"{F}::gdbm",)


def test_a_standard_library_module_missing_on_base_too_is_a_platform_skip():
    same = run({f"{F}::t": skipped("requires gdbm", **GDBM)})
    assert decide_skip(same, "requires gdbm", **GDBM) == (
        [],
        (
            f"{F}::t skipped: requires gdbm (the standard-library module _gdbm is missing "
            "from this Python; skipped on base too)",
        ),
    )


@pytest.mark.parametrize(
    ("on_base", "why"),
    [
        ({f"{F}::t": PASSED}, "not skipped on base: passed"),
        (
            {f"{F}::t": skipped("requires gdbm")},
            "on base it skipped, not for a missing module: requires gdbm",
        ),
        (
            {
                f"{F}::t": skipped(
                    "requires gdbm", skip_missing_module=True, skip_missing_names=["_dbm"]
                )
            },
            "on base it skipped for a missing module: requires gdbm",
        ),
        (
            {f"{F}::t": skipped("requires gnu dbm", **GDBM)},
            "on base it skipped for another reason: requires gnu dbm",
        ),
    ],
)
def test_a_standard_library_module_missing_only_on_head_fails(on_base, why):
    assert decide_skip(run(on_base), "requires gdbm", **GDBM) == (
        [(Outcome.SKIPPED, f"requires gdbm ({why})")],
        (),
    )


@pytest.mark.parametrize("names", [["numpy"], ["_gdbm", "numpy"], [""], ["minilib.extra"]])
def test_a_third_party_or_project_module_fails_even_beside_a_standard_library_one(names):
    entry = {"skip_missing_module": True, "skip_missing_names": names}
    same = run({f"{F}::t": skipped("no module", **entry)})
    kept, not_applicable = decide_skip(same, "no module", **entry)
    assert not_applicable == ()
    assert kept == [
        (Outcome.SKIPPED, "no module (a skip for a missing module always fails an oracle)")
    ]


def test_paths_in_a_reason_are_compared_without_their_folders():
    one = normalised_reason("data missing: /tmp/x/wt-1/tests/data.txt (see /tmp/x/wt-1/t.py)")
    two = normalised_reason("data missing: /tmp/x/wt-7/tests/data.txt (see /tmp/x/wt-7/t.py)")
    assert one == two == "data missing: data.txt (see t.py)"
    assert normalised_reason("/a/one.txt") != normalised_reason("/a/two.txt")
    assert normalised_reason("requires Python 3.13") == "requires Python 3.13"
    assert normalised_reason("needs a/b and 1/2") == "needs a/b and 1/2"


def test_a_rerun_on_base_that_could_not_run_is_a_gate_error():
    head = run({f"{F}::t": skipped("not ready")})
    broken = dataclasses.replace(run({}), error="the oracle skips on base process timed out")
    facts = oracle_facts(head, None, approved=False, on_base=broken)
    assert facts.error == "the oracle skips on base process timed out"


# -- what base cannot collect -------------------------------------------------------------------


def test_base_collection_errors_pin_nothing_and_are_no_collection_error():
    base = dataclasses.replace(
        run({}), collection_errors=((F, "E   ModuleNotFoundError: No module named 'x'"),)
    )
    head = run({f"{F}::t": PASSED})
    facts = oracle_facts(head, base, approved=False)
    assert facts.collection_errors == ()
    assert facts.unpinned == (Unpinned(F, "ModuleNotFoundError: No module named 'x'"),)
    assert oracle_facts(head, base, approved=False, from_production={F}).unpinned[0].from_production
    approved = oracle_facts(head, base, approved=True, from_production={F})
    assert not approved.unpinned[0].from_production
    # head must still collect it: its own collection error stays COLLECTION_ERROR
    broken_head = dataclasses.replace(head, collection_errors=((F, "E   NameError: x"),))
    (line,) = oracle_facts(broken_head, base, approved=False).collection_errors
    assert line.startswith(F) and line.endswith("NameError: x")


def test_an_oracle_from_production_is_unpinned_under_its_file_folder_or_session():
    errors = [(F, "boom"), ("tests/oracles", "boom"), ("", "boom"), (f"{F}::TestX", "boom")]
    errors.append(("tests/other.py", "boom"))
    found = unpinned_files(errors, {F})
    assert [u.from_production for u in found] == [True, True, True, True, False]
    assert not unpinned_files([("tests/oracles/test_a", "boom")], {F})[0].from_production


def test_unpinned_is_a_warning_unless_head_would_decide_the_oracle_set():
    oracle = OracleFacts(results=(PASSED_ORACLE,), unpinned=(Unpinned(F, "boom"),))
    (found,) = oracle_findings(oracle)
    assert found.code is Warning_.ORACLE_UNPINNED and found.bit is None
    assert found.detail == f"{F}: base could not collect it, so it pins no oracle item: boom"
    assert decide(dataclasses.replace(CLEAN, oracle=oracle)).decision is Decision.ALLOW

    blocking = OracleFacts(results=(PASSED_ORACLE,), unpinned=(Unpinned(F, "boom", True),))
    (found,) = oracle_findings(blocking)
    assert (found.code, found.bit) == (Reason.ORACLE_UNPINNED, Bit.ORACLE)
    assert "ORACLE_FROM_PRODUCTION" in found.detail
    verdict = decide(dataclasses.replace(CLEAN, oracle=blocking))
    assert verdict.decision is Decision.BLOCK and not verdict.bits[Bit.ORACLE]


# -- the plugin: which skips are for a missing module -------------------------------------------


def _caught(action) -> pytest.ExceptionInfo[BaseException]:
    with pytest.raises(BaseException) as info:
        action()
    return info


def test_skips_from_importorskip_or_an_import_error_are_for_a_missing_module():
    def while_importing() -> None:
        try:
            import andgate_test_no_such_module  # noqa: F401
        except ImportError:
            pytest.skip("no such module")

    assert is_missing_module(_caught(lambda: pytest.importorskip("andgate_test_no_such_module")))
    assert is_missing_module(_caught(while_importing))
    assert not is_missing_module(_caught(lambda: pytest.skip("requires Python 4")))
    assert not is_missing_module(None)
    assert sys.modules.get("andgate_test_no_such_module") is None


def test_a_skip_for_a_missing_module_names_the_modules_its_import_errors_name():
    def while_importing(error: ImportError) -> Callable[[], None]:
        def action() -> None:
            try:
                raise error
            except ImportError:
                pytest.skip("requires gdbm")

        return action

    # `import dbm.gnu` on a Python built without gdbm names the C extension
    gdbm = ModuleNotFoundError("No module named '_gdbm'", name="_gdbm")
    assert missing_modules(_caught(while_importing(gdbm))) == ("_gdbm",)
    assert missing_modules(_caught(while_importing(ImportError("no gdbm")))) == ("",)
    asked = _caught(lambda: pytest.importorskip("andgate_test_no_such_module.sub"))
    assert missing_modules(asked) == ("andgate_test_no_such_module.sub",)
    assert missing_modules(_caught(lambda: pytest.skip("requires Python 4"))) is None


def test_a_rerun_selects_each_function_once_without_its_parameters():
    assert selection_args([f"{F}::t[1-2]", f"{F}::t[3-4]", f"{F}::C::m", f"{F}::u[a::b]"]) == [
        f"{F}::t",
        f"{F}::C::m",
        f"{F}::u[a::b]",
    ]


# -- the rerun on base asks only for what base collected ----------------------------------------


G = "tests/oracles/test_gettext.py"


def pin(collected: tuple[str, ...], errors: tuple[tuple[str, str], ...] = ()) -> RunResult:
    """Base's oracle collection: the ids it collected, the files it could not."""
    items = tuple(
        CollectedItem(ItemFacts(n, n.partition("::")[0], n.rpartition("::")[2]), "oracle", "glob")
        for n in collected
    )
    return RunResult("base oracle", 0, 1.0, items=items, collection_errors=errors)


def test_the_rerun_on_base_asks_only_for_ids_base_collected():
    base = pin((f"{F}::a", f"{F}::b"), ((G, "E   ImportError: no _version"),))
    asked = on_base_collection([f"{F}::a", f"{G}::t", f"{F}::gone"], base)
    assert asked == (f"{F}::a",)
    assert on_base_collection([f"{F}::a"], dataclasses.replace(base, error="timed out")) == ()
    assert on_base_collection([f"{F}::a"], None) == ()


def test_an_item_base_could_not_collect_could_not_be_compared_and_is_no_gate_error():
    head = run({f"{G}::t": skipped("no .mo files"), f"{F}::a": skipped("no .mo files")})
    base = pin((f"{F}::a",), ((G, "E   ModuleNotFoundError: No module named 'pkg._version'"),))
    on_base = run({f"{F}::a": skipped("no .mo files")})
    facts = oracle_facts(head, base, approved=False, on_base=on_base)
    assert facts.error is None
    assert facts.not_applicable == (f"{F}::a skipped: no .mo files (skipped on base too)",)
    assert [(r.nodeid, r.outcome, r.message) for r in facts.results] == [
        (
            f"{G}::t",
            Outcome.SKIPPED,
            f"no .mo files (could not compare: base could not collect {G}: "
            "ModuleNotFoundError: No module named 'pkg._version')",
        )
    ]
    # a folder or the whole session base could not collect holds the item too
    for where in ("tests/oracles", ""):
        folder = pin((), ((where, "E   boom"),))
        (kept,), _ = skips_by_code(results(head)[:1], head, None, folder)
        assert kept.message.endswith(f"base could not collect {where or 'the session'}: boom)")


def test_an_item_base_collected_in_no_file_it_failed_on_is_not_on_base():
    head = run({f"{F}::new": skipped("not ready")})
    (kept,), _ = skips_by_code(results(head), head, None, pin((f"{F}::old",)))
    assert kept.message == "not ready (base has no such oracle item)"
    broken = dataclasses.replace(pin((f"{F}::new",)), error="crashed")
    (kept,), _ = skips_by_code(results(head), head, None, broken)
    assert (
        kept.message == "not ready (could not compare: base's oracle collection did not complete)"
    )
