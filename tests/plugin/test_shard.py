"""Sharding a class by file: complete, disjoint, balanced, and invisible in the verdict."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from andgate.commands.sample import SampleRepo
from andgate.plugin.shard import (
    MIN_BYTES_PER_SHARD,
    STARTUP_BYTES,
    balance,
    collect_only_weight,
    shard_count,
    shard_of,
    shards,
)
from andgate.report.artifacts import merge_junit

sizes = st.dictionaries(
    st.text("abc/_.", min_size=1, max_size=12), st.integers(0, 50_000), max_size=30
)


@given(sizes, st.integers(1, 4), st.text(min_size=1, max_size=20))
def test_every_file_belongs_to_exactly_one_shard(files, jobs, other):
    parts = shards(files, jobs)
    for path in [*files, other]:
        assert sum(s.owns(path) for s in parts) == 1


@given(sizes, st.integers(1, 4), st.integers(0, 200_000))
def test_no_shard_is_left_without_a_file(files, jobs, preload):
    """A preload heavier than the files (the base pin's collection beside two small
    oracle files) must not leave a pytest process with nothing to collect."""
    parts = shards(files, jobs, preload)
    if len(parts) > 1:
        assert {parts[0].assign[p] for p in files} == set(range(len(parts)))


@given(sizes, st.integers(1, 4))
def test_balance_is_within_one_file_of_even(files, jobs):
    count = shard_count(files, jobs)
    assign = balance(files, count)
    loads = [sum(files[p] for p in files if assign[p] == i) for i in range(count)]
    assert max(loads) - min(loads) <= max(files.values(), default=0)


def test_small_suites_are_not_split():
    assert shard_count({"a.py": MIN_BYTES_PER_SHARD - 1, "b.py": 10}, jobs=2) == 1
    assert shard_count({"a.py": MIN_BYTES_PER_SHARD, "b.py": MIN_BYTES_PER_SHARD}, jobs=2) == 2
    assert shard_count({"a.py": 10**6}, jobs=8) == 1
    assert shard_of("x.py", 3, {"x.py": 2}) == 2


def test_the_last_shard_gets_less_by_the_small_process_queued_after_it():
    """The base pin (collect-only) and the frozen flakes follow the shards in the
    queue; the last shard gets that much less source, so it ends first and takes
    the small process."""
    files = {f"tests/test_{i}.py": 12_000 for i in range(10)}
    preload = collect_only_weight(files)
    assert preload == STARTUP_BYTES + 15_000
    assign = balance(files, 2, last_preload=preload)
    loads = [sum(n for p, n in files.items() if assign[p] == i) for i in (0, 1)]
    assert loads == [84_000, 36_000]  # 36,000 + the collect-only's 47,768 ~ 84,000


def test_junit_documents_merge_into_one_testsuites():
    one = b'<?xml version="1.0"?><testsuites><testsuite name="a" tests="1"/></testsuites>'
    two = b'<testsuite name="b" tests="2"/>'
    merged = merge_junit([one, two])
    assert merged is not None
    assert merged.count(b"<testsuite ") == 2 and merged.startswith(b"<?xml")
    assert merge_junit([one, b"<broken"]) is None


def many_untrusted_files(repo: SampleRepo) -> None:
    body = "".join(
        f"\n\ndef test_case_{i}(numbers):\n    assert sum(numbers) == 6  # {'x' * 60}\n"
        for i in range(40)
    )
    files = {f"tests/unit/test_bulk_{n}.py": body for n in range(12)}
    files["tests/unit/conftest.py"] = (
        "import pytest\n\n@pytest.fixture\ndef numbers():\n    return [1, 2, 3]\n"
    )
    files["tests/unit/test_bulk_3.py"] += "\n\ndef test_wrong():\n    assert 1 == 2\n"
    repo.write(files)


def test_a_sharded_untrusted_class_decides_like_one_process(sample):
    """Split over two processes, the class decides as one process would: every
    item counted once, the one failure and nothing else (one process's verdict is
    known: the conftest.py is approved, the rest passes)."""
    head = sample.change(many_untrusted_files)
    split = sample.gate(head, jobs=2, approved_by=("alice",))
    assert split.codes == ["UNTRUSTED_FAILED"]
    assert split.payload["counts"] == {
        "oracle": 8,
        "property": 3,
        "frozen_flake": 1,
        "untrusted": 1 + 12 * 40 + 1,
    }
    assert split.details("UNTRUSTED_FAILED") == [
        "tests/unit/test_bulk_3.py::test_wrong failed: assert 1 == 2"
    ]
    logs = sorted(p.name for p in (split.artifacts / "logs").iterdir())
    assert "untrusted.0.log" in logs and "untrusted.1.log" in logs
    junit = (split.artifacts / "untrusted.xml").read_text()
    assert junit.count("<testcase ") == split.payload["counts"]["untrusted"]
    assert all(split.payload["bits"][b] for b in split.payload["bits"] if b != "untrusted_ok")


def test_the_property_class_splits_over_the_jobs_however_small():
    """The property phase runs alone, so a second process takes a core that would
    idle: no minimum size (the untrusted class keeps one: its flakes share a core)."""
    from types import SimpleNamespace

    from andgate.check.property.phase import run_property_phase

    small = {"tests/properties/test_a.py": 600, "tests/properties/test_b.py": 700}
    assert shard_count(small, jobs=2) == 1
    assert shard_count(small, jobs=2, min_bytes=0) == 2
    assert shard_count(small, jobs=1, min_bytes=0) == 1
    asked = {}

    def class_tasks(kind, request, commit, sizes, last_preload=0, min_bytes=MIN_BYTES_PER_SHARD):
        asked.update(sizes=sizes, parts=len(shards(sizes, 2, last_preload, min_bytes=min_bytes)))
        return []

    plan = SimpleNamespace(
        property_files=tuple(small), property_rules=None, property_tree="t", property_sizes=small,
        base="0" * 40,
    )  # fmt: skip
    manifest = SimpleNamespace(require_property_class=False, property=SimpleNamespace(markers=()))
    ctx = SimpleNamespace(
        plan=plan,
        state=SimpleNamespace(property_seed=0, environment=None),
        config=SimpleNamespace(manifest=manifest, invariants_problem=lambda at: None),
        class_tasks=class_tasks,
        run=lambda phase, tasks, counted=None: None,
        merge_class=lambda kind: None,
        runs={},
        capture=lambda: None,
        results=lambda: None,
    )
    run_property_phase(ctx)
    assert asked == {"sizes": small, "parts": 2}
