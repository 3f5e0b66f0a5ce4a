"""Units of work and bundles, directly: the split over machines is complete,
disjoint and the same on every machine; a bundle reads back what was written
and refuses anything else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from andgate.check.bundle import (
    Bundle,
    BundleKey,
    Recorded,
    combined,
    parse,
    render,
    replay_from_json,
    replay_to_json,
    run_from_json,
    run_to_json,
)
from andgate.check.discrimination.phase import merge_discrimination
from andgate.check.units import Split, Unit, assign, class_units
from andgate.check.work import Work
from andgate.errors import BundleError
from andgate.plugin.shard import MIN_BYTES_PER_SHARD, Shard, owns, shards
from andgate.process.results import CollectedItem, RunResult
from andgate.records import DiscriminationFacts, ItemFacts, ReplayFacts

sizes = st.dictionaries(
    st.text("abc/_.", min_size=1, max_size=12),
    st.integers(0, 4 * MIN_BYTES_PER_SHARD),
    max_size=30,
)


@given(sizes, st.integers(1, 5), st.integers(1, 3), st.text(min_size=1, max_size=20))
def test_a_file_belongs_to_one_unit_and_one_process_within_it(files, machines, jobs, other):
    units = class_units("untrusted", files, machines)
    for path in [*files, other]:
        owners = []
        for unit in units:
            for part in shards(files, jobs, within=unit.shard):
                if part.owns(path):
                    owners.append((unit.name, part.index))
        assert len(owners) == 1, (path, owners)


@given(st.lists(st.integers(0, 10**6), max_size=20), st.integers(1, 6))
def test_every_unit_goes_to_one_machine_the_same_on_every_machine(weights, count):
    units = [Unit("u", w, index=i) for i, w in enumerate(weights)]
    first = assign(units, count)
    assert assign(list(reversed(units)), count) == first
    assert set(first) == {u.name for u in units}
    assert all(0 <= m < count for m in first.values())


def test_assignment_balances_the_heaviest_first():
    units = [Unit("a", 10), Unit("b", 6), Unit("c", 5), Unit("d", 1)]
    assert assign(units, 2) == {"a": 0, "b": 1, "c": 1, "d": 0}


def test_a_nested_shard_owns_only_what_its_outer_shard_owns():
    outer = Shard(1, 2, {"x.py": 0, "y.py": 1, "z.py": 1})
    inner = Shard(0, 1, {}, outer)
    assert [p for p in ("x.py", "y.py", "z.py") if inner.owns(p)] == ["y.py", "z.py"]
    assert [p for p in ("x.py", "y.py", "z.py") if owns(inner.to_json(), p)] == ["y.py", "z.py"]


def test_a_class_below_the_split_size_is_one_unit():
    assert [u.name for u in class_units("oracle", {"a.py": 100, "b.py": 100}, 5)] == ["oracle/0"]
    assert class_units("oracle", {"a.py": 100}, 5)[0].shard is None


@pytest.mark.parametrize(
    ("text", "want"), [("1/1", Split(0, 1)), ("2/3", Split(1, 3)), (" 3 / 3 ", Split(2, 3))]
)
def test_shard_option_reads_one_based(text, want):
    assert Split.parse(text) == want
    assert str(want) == f"{want.index + 1}/{want.count}"


@pytest.mark.parametrize("text", ["0/3", "4/3", "1", "a/b", "1/0", "-1/2", ""])
def test_shard_option_refuses_what_is_not_a_part(text):
    with pytest.raises(ValueError, match="--shard"):
        Split.parse(text)


def test_work_runs_only_its_machines_units():
    units = [Unit("oracle", 50, index=0), Unit("untrusted", 40, index=0), Unit("flake", 5)]
    mine = [Work.of(units, Split(i, 2)).mine_names() for i in range(2)]
    assert sorted(mine[0] + mine[1]) == sorted(u.name for u in units)
    assert not set(mine[0]) & set(mine[1])
    assert Work.of(units, None).mine_names() == [u.name for u in units]
    recorded = Work.of(units, Split(0, 2), Recorded(runs={"flake": _run()}))
    assert recorded.mine_names() == ["flake"]  # combining: what the bundles hold


def test_merged_discrimination_is_the_union_of_the_machines():
    a = DiscriminationFacts(items=(("t.py::b", ("kb",)),), against=("kb", "m1"), required=True)
    b = DiscriminationFacts(
        items=(("s.py::a", ()),), against=("kb",), incomplete=True, skipped=("m1",), budget=2.0
    )
    merged = merge_discrimination([b, a], required=True)
    assert merged.items == (("s.py::a", ()), ("t.py::b", ("kb",)))
    assert merged.against == ("kb", "m1")
    assert merged.incomplete and merged.required
    assert merged.skipped == ("m1",) and merged.budget == 2.0
    assert merge_discrimination([], required=False) == DiscriminationFacts()


# -- bundles ------------------------------------------------------------------------------


def _run() -> RunResult:
    facts = ItemFacts("tests/t.py::test_a", "tests/t.py", "test_a", frozenset({"mark"}))
    return RunResult(
        label="untrusted part 1/2",
        exit_code=1,
        seconds=1.5,
        items=(CollectedItem(facts, "untrusted", "default", "skip why", "abc"),),
        reports={"tests/t.py::test_a": {"outcome": "failed", "attempts": [["call", "boom"]]}},
        seeds={"tests/t.py::test_a": (1, "x")},
        collection_errors=(("tests/u.py", "E   SyntaxError"),),
        error=None,
    )


def _bundle(index: int = 0, count: int = 1, **key: object) -> Bundle:
    fields = {
        "base": "b" * 40,
        "head": "h" * 40,
        "manifest_digest": "m",
        "plan_digest": "p",
        "units": ("untrusted/0", "known-bad/0"),
        "options": {"today": "2026-12-01"},
        **key,
    }
    return Bundle(
        index=index,
        count=count,
        key=BundleKey(**fields),  # type: ignore[arg-type]
        ran=("untrusted/0", "known-bad/0") if count == 1 else (),
        recorded=Recorded(
            runs={"untrusted/0": _run()} if count == 1 else {},
            replays={"known-bad/0": ReplayFacts("kb", True, ("t::x",), seconds=2.0)}
            if count == 1
            else {},
            files={"untrusted.junit": b"<testsuites/>\xff"},
            discrimination=(
                DiscriminationFacts(
                    items=(("t::x", ()),), against=("kb",), skipped=("m",), budget=1.5
                ),
            ),
        ),
    )


def test_what_a_trusted_run_or_replay_loaded_reads_back_as_written():
    """A shard's tampered runs void their class in `combine` as in one check."""
    run = RunResult("oracle 1", 0, 1.0, tampered=("tests/a.py: the oracle 1 process ...",))
    assert run_from_json(json.loads(json.dumps(run_to_json(run)))).tampered == run.tampered
    replay = ReplayFacts("kb", applied=True, failed=("t::x",), tampered=("tests/a.py: ...",))
    back = replay_from_json(json.loads(json.dumps(replay_to_json(replay))))
    assert back == replay


def test_a_run_reads_back_as_written():
    run = _run()
    back = run_from_json(json.loads(json.dumps(run_to_json(run))))
    assert back.items == run.items
    assert back.collection_errors == run.collection_errors
    assert back.seeds == run.seeds
    assert back.outcome("tests/t.py::test_a") is run.outcome("tests/t.py::test_a")
    assert (back.label, back.exit_code, back.seconds, back.error) == (
        "untrusted part 1/2",
        1,
        1.5,
        None,
    )


def test_a_bundle_reads_back_as_written(tmp_path):
    path = tmp_path / "bundle.json"
    path.write_bytes(render(_bundle()))
    key, count, recorded = combined([tmp_path])
    assert count == 1 and key == _bundle().key
    assert recorded.files == {"untrusted.junit": b"<testsuites/>\xff"}
    assert recorded.replays["known-bad/0"] == ReplayFacts("kb", True, ("t::x",), seconds=2.0)
    assert recorded.runs["untrusted/0"].items == _run().items
    assert recorded.discrimination == _bundle().recorded.discrimination


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda b: b.update(schema="x"), "not an andgate bundle"),
        (lambda b: b["runs"]["untrusted/0"].update(error="x"), "edited"),
        (lambda b: b.update(andgate="0.0.1"), "edited"),
    ],
)
def test_a_bundle_edited_by_hand_is_refused(edit, message):
    body = json.loads(render(_bundle()))
    edit(body)
    with pytest.raises(BundleError, match=message):
        parse(Path("b.json"), body)


def test_a_bundle_of_another_andgate_is_refused():
    from andgate.check.bundle import _digest

    body = json.loads(render(_bundle()))
    body["andgate"] = "0.0.1"
    body["sha256"] = _digest(body)
    with pytest.raises(BundleError, match="same andgate"):
        parse(Path("b.json"), body)


def test_a_malformed_but_sealed_bundle_is_refused_in_one_line():
    from andgate.check.bundle import _digest

    body = json.loads(render(_bundle()))
    body["runs"]["untrusted/0"]["items"] = "nope"
    body["sha256"] = _digest(body)
    with pytest.raises(BundleError, match="malformed"):
        parse(Path("b.json"), body)


def _write(folder: Path, bundle: Bundle) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bundle.json").write_bytes(render(bundle))
    return folder


def test_bundles_of_different_options_do_not_combine(tmp_path):
    a = _write(tmp_path / "a", _bundle(0, 2))
    b = _write(tmp_path / "b", _bundle(1, 2, options={"today": "2026-12-02"}))
    with pytest.raises(BundleError, match="options differs"):
        combined([a, b])


def test_not_json_or_absent_is_one_line(tmp_path):
    (tmp_path / "bundle.json").write_text("{")
    with pytest.raises(BundleError, match="not JSON"):
        combined([tmp_path])
    with pytest.raises(BundleError, match="no shard bundle"):
        combined([tmp_path / "nowhere"])
    with pytest.raises(BundleError, match="no bundle given"):
        combined([])


@pytest.mark.parametrize(("user_xdist", "processes"), [(False, 2), (True, 1)])
def test_a_project_that_runs_xdist_gets_one_process_per_unit(tmp_path, user_xdist, processes):
    """Its own workers use the cores; splitting again would run jobs x workers."""
    from andgate.check.context import PhaseContext
    from andgate.check.state import CheckState, RunName
    from andgate.plugin.classify import Rules
    from andgate.process.requests import RunRequest

    ctx = PhaseContext(
        plan=None,  # type: ignore[arg-type]
        config=None,  # type: ignore[arg-type]
        pool=None,  # type: ignore[arg-type]
        scratch=tmp_path,
        state=CheckState(),
        jobs=2,
        timeout=1.0,
        cache_dir=None,
        approved=False,
        work=Work.of([Unit("untrusted", 1, index=0)], None),
        user_xdist=user_xdist,
    )
    sizes = {f"tests/test_{i}.py": 4 * MIN_BYTES_PER_SHARD for i in range(4)}
    request = RunRequest("untrusted", "untrusted", Rules())
    assert len(ctx.class_tasks(RunName.UNTRUSTED, request, "head", sizes)) == processes


def test_a_result_for_a_unit_the_bundle_did_not_run_is_refused(tmp_path):
    from andgate.check.bundle import _digest

    body = json.loads(render(_bundle()))
    body["ran"].remove("untrusted/0")  # its result stays: it would override another's
    body["sha256"] = _digest(body)
    (tmp_path / "bundle.json").write_text(json.dumps(body))
    with pytest.raises(BundleError, match="did not run"):
        combined([tmp_path])
