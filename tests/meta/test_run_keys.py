"""Runs and units are typed keys, never names parsed back, and each test phase hands
its runs back as a frozen result.

A run is a `RunKey` (its class, its unit, its process as fields) and a unit carries
its kind and index, so no module of the check recovers them by splitting a string
such as "oracle@2.1" or "untrusted/1": their text is for file names, labels and the
bundle, written only. A phase's tasks write into its own `PhaseContext` (`for_phase`),
the phase returns them read-only (`PhaseRuns`), and only the pipeline records them
into the check's state: no phase reads another's runs from it."""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path
from types import MappingProxyType

import pytest

import andgate
from andgate.check.context import PhaseContext
from andgate.check.oracle.phase import OracleOutcome
from andgate.check.property.phase import PropertyOutcome
from andgate.check.state import Captured, CheckState, PhaseRuns, RunKey, RunName
from andgate.check.units import Unit
from andgate.check.untrusted import UntrustedOutcome
from andgate.process.results import RunResult

CHECK = Path(andgate.__file__).parent / "check"
# What a run's or a unit's name would be cut on ("oracle@2", "untrusted/1").
SEPARATORS = frozenset({"@", "/"})
RUN_SEPARATORS = frozenset({"@", "."})  # a run's unit, a run's process
CUTS = frozenset({"partition", "rpartition", "split", "rsplit"})
PREFIXES = frozenset({"startswith", "endswith", "removeprefix", "removesuffix"})
# Not a run's or a unit's name: `--shard I/N` as typed, and the progress files that
# `process.run.run_pytest` names after a request's label.
ALLOWED = frozenset({("units.py", "parse"), ("context.py", "_of_class")})
# The check's modules that hand runs and units around.
MODULES = (
    "state.py",
    "context.py",
    "units.py",
    "work.py",
    "matrix.py",
    "bundle.py",
    "pipeline.py",
    "untrusted.py",
    "oracle/phase.py",
    "property/phase.py",
    "discrimination/phase.py",
    "inventory/phase.py",
    "evidence/phase.py",
    "evidence/runs.py",
    "evidence/sides.py",
)


def name_parsing(source: str, module: str) -> list[str]:
    """Each call that cuts a string on a unit or run separator, or matches a prefix
    built from a name and a separator (an f-string), outside the functions allowed to."""
    found = []
    for function in _functions(ast.parse(source)):
        if (module, function.name) in ALLOWED:
            continue
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            method, args = node.func.attr, node.args
            cut = method in CUTS and any(
                isinstance(a, ast.Constant) and a.value in SEPARATORS for a in args
            )
            built = method in PREFIXES and any(
                _built_name(e) for a in args for e in (a.elts if isinstance(a, ast.Tuple) else [a])
            )
            if cut or built:
                found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    return found


def _built_name(node: ast.expr) -> bool:
    """An f-string ending in a run separator: `f"{name}."`, `f"{kind}@"` (a path's
    `f"{folder}/"` is a path)."""
    return isinstance(node, ast.JoinedStr) and any(
        isinstance(v, ast.Constant) and str(v.value)[-1:] in RUN_SEPARATORS for v in node.values
    )


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def test_no_module_of_the_check_parses_a_run_or_unit_name_back() -> None:
    found = [
        hit
        for module in MODULES
        for hit in name_parsing((CHECK / module).read_text(encoding="utf-8"), module)
    ]
    assert found == [], "compare RunKey's or Unit's fields instead of cutting their names"


def test_the_guard_sees_a_name_cut_apart_or_matched_by_prefix() -> None:
    parsing = """
def kind_of(name):
    return name.partition("@")[0]

def unit_kind(unit):
    kind, _, index = unit.name.partition("/")

def parts(runs, name):
    return [n for n in runs if n.startswith(f"{name}.")]

def units(kind, name):
    return name.startswith((f"{kind}.", f"{kind}@"))
"""
    assert len(name_parsing(parsing, "x.py")) == 4
    assert name_parsing("def f(nodeid):\n    return nodeid.partition('::')\n", "x.py") == []


def test_the_state_keys_its_runs_by_run_key() -> None:
    hints = typing.get_type_hints(CheckState)
    assert hints["runs"] == dict[RunKey, RunResult]
    assert hints["units_ran"] == dict[str, RunKey]
    assert typing.get_type_hints(Captured)["runs"] == dict[str, RunKey]


def test_a_run_keys_text_is_the_name_its_files_have_always_had() -> None:
    """The logs' and JUnit files' names, in the artifacts and the bundles, are unchanged."""
    assert str(RunKey(RunName.ORACLE)) == "oracle"
    assert str(RunKey(RunName.BASE_ORACLE)) == "base_oracle"
    assert str(RunKey(RunName.UNTRUSTED, unit=2)) == "untrusted@2"
    assert str(RunKey(RunName.ORACLE, process=1)) == "oracle.1"
    assert str(RunKey(RunName.PROPERTY, unit=0, process=3)) == "property@0.3"
    assert RunKey(RunName.PROPERTY, unit=0, process=3).whole() == RunKey(RunName.PROPERTY, 0)


def test_a_units_name_is_made_from_its_kind_and_index() -> None:
    assert Unit("oracle", 10, index=0).name == "oracle/0"
    assert Unit("known-bad", 10, index=2).name == "known-bad/2"
    assert Unit("base-oracle", 10).name == "base-oracle"


# The phases: each reads the runs it made (its context's) and what the pipeline hands it.
PHASES = (
    "context.py",
    "untrusted.py",
    "oracle/phase.py",
    "property/phase.py",
    "discrimination/phase.py",
    "inventory/phase.py",
    "evidence/phase.py",
    "evidence/runs.py",
    "evidence/sides.py",
)
# What the pipeline records from the phases' results (`CheckState.record`, `replays`).
RECORDED = frozenset({"runs", "units_ran", "replays"})


def reads_of_the_record(source: str, module: str) -> list[str]:
    """Each `state.runs`, `ctx.state.units_ran`, ...: a phase reaching into what the
    pipeline recorded from the phases before it."""
    return [
        f"{module}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr in RECORDED
        and (
            (isinstance(node.value, ast.Name) and node.value.id == "state")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "state")
        )
    ]


def test_no_phase_reads_the_runs_the_pipeline_recorded() -> None:
    found = [
        hit
        for module in PHASES
        for hit in reads_of_the_record((CHECK / module).read_text(encoding="utf-8"), module)
    ]
    assert found == [], "take a phase's runs from its own context or as an argument"


def test_the_guard_sees_a_phase_reading_the_state() -> None:
    source = "def f(ctx, state):\n    return ctx.state.runs, state.units_ran, ctx.runs\n"
    assert len(reads_of_the_record(source, "x.py")) == 2


def test_the_phases_results_are_frozen_and_read_only() -> None:
    for record in (PhaseRuns, OracleOutcome, PropertyOutcome, UntrustedOutcome):
        assert dataclasses.is_dataclass(record) and record.__dataclass_params__.frozen, record
    runs = {RunKey(RunName.ORACLE): RunResult("oracle", 0, 1.0)}
    held = PhaseRuns.of(runs, {"oracle/0": RunKey(RunName.ORACLE)})
    runs.clear()  # the phase's own map goes on; what it handed back does not change
    assert isinstance(held.runs, MappingProxyType) and isinstance(held.units, MappingProxyType)
    assert held.get(RunName.ORACLE) == RunResult("oracle", 0, 1.0)


def _context(tmp_path: Path) -> PhaseContext:
    return PhaseContext(
        plan=None, config=None, pool=None, scratch=tmp_path, state=CheckState(), jobs=1,
        timeout=1.0, cache_dir=None, approved=False, work=None,
    )  # fmt: skip


def test_each_phase_starts_with_no_runs_of_its_own(tmp_path: Path) -> None:
    shared = _context(tmp_path)
    first = shared.for_phase()
    first.runs[RunKey(RunName.ORACLE)] = RunResult("oracle", 0, 1.0)
    first.units_ran["oracle/0"] = RunKey(RunName.ORACLE)
    second = shared.for_phase()
    assert second.runs == {} and second.units_ran == {} and shared.runs == {}
    assert first.results().units == {"oracle/0": RunKey(RunName.ORACLE)}
    assert shared.state.runs == {}  # only the pipeline records a phase's results


def test_a_phase_that_fails_still_leaves_what_it_ran_to_the_pipeline(tmp_path: Path) -> None:
    """As before phases returned their runs: a shard interrupted in its untrusted phase
    still bundles the units it finished."""
    from andgate.check.pipeline import _phase

    ctx = _context(tmp_path)

    def interrupted(own: PhaseContext) -> None:
        assert own.runs == {} and own is not ctx
        own.runs[RunKey(RunName.UNTRUSTED, unit=0)] = RunResult("untrusted part 1/2", 0, 1.0)
        own.units_ran["untrusted/0"] = RunKey(RunName.UNTRUSTED, unit=0)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _phase(ctx, interrupted)
    assert ctx.state.units_ran == {"untrusted/0": RunKey(RunName.UNTRUSTED, unit=0)}
    assert list(ctx.state.runs) == [RunKey(RunName.UNTRUSTED, unit=0)]
    done = _phase(ctx, lambda own: own.results())  # a phase that ends: its result only
    assert done == PhaseRuns() and len(ctx.state.runs) == 1
