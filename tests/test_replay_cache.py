"""Killer-first replay: the cache only chooses what runs first, never the verdict."""

from __future__ import annotations

import json

import pytest

import andgate.replay
from stories import honest_fix, weakened_oracle


@pytest.fixture
def spy(monkeypatch):
    """Every replay pytest request, in order."""
    requests = []
    real = andgate.replay.run_pytest

    def recording(request, *args, **kwargs):
        requests.append(request)
        return real(request, *args, **kwargs)

    monkeypatch.setattr(andgate.replay, "run_pytest", recording)
    return requests


def killer_files(cache_dir):
    return sorted((cache_dir / "killers").glob("*.json"))


def test_second_replay_runs_only_the_remembered_killer(sample, spy, tmp_path):
    cache = tmp_path / "cache"
    head = sample.change(honest_fix)
    cold = sample.gate(head, cache_dir=cache)
    assert [r.only_ids for r in spy] == [None, None]
    entries = {json.loads(p.read_text())["killers"][0] for p in killer_files(cache)}
    assert entries == {
        "tests/oracles/test_text_oracle.py::test_chunk_keeps_short_tail",
        "tests/oracles/test_math_oracle.py::test_clamp_cases[-1-0-10-0]",
    }
    spy.clear()
    warm = sample.gate(head, cache_dir=cache)
    assert sorted(r.only_ids for r in spy) == sorted((k,) for k in entries)
    assert sorted(r.allow_files for r in spy) == [
        ("tests/oracles/test_math_oracle.py",),
        ("tests/oracles/test_text_oracle.py",),
    ]
    assert warm.payload["reasons"] == cold.payload["reasons"] == []
    assert warm.artifact("known_bad.json")["fixtures"][0]["failed_oracle_items"] == [
        "tests/oracles/test_text_oracle.py::test_chunk_keeps_short_tail"
    ]


@pytest.mark.parametrize(
    "poison",
    [
        "not json",
        json.dumps(
            {
                "schema": "andgate.killers/1",
                "killers": ["tests/test_misc.py::test_clamp_inside_range"],
            }
        ),
        json.dumps(
            {
                "schema": "andgate.killers/1",
                "killers": ["tests/oracles/test_text_oracle.py::test_slugify_words"],
            }
        ),
        json.dumps({"schema": "andgate.killers/1", "killers": [7, None]}),
    ],
)
def test_a_poisoned_cache_never_changes_the_verdict(sample, spy, tmp_path, poison):
    """Killers that do not fail (a passing oracle, a non-oracle, garbage) cost a
    fallback run of the whole class; the fixtures still bite."""
    cache = tmp_path / "cache"
    head = sample.change(honest_fix)
    sample.gate(head, cache_dir=cache)
    for entry in killer_files(cache):
        entry.write_text(poison)
    spy.clear()
    run = sample.gate(head, cache_dir=cache)
    assert run.decision == "allow", run.payload["reasons"]
    assert [f["bites"] for f in run.artifact("known_bad.json")["fixtures"]] == [True, True]
    assert [r.only_ids for r in spy if "killers" not in r.label] == [None, None]


def test_cached_parallel_replay_decides_like_serial_cold_replay(sample, tmp_path):
    """Issue 4's acceptance: same verdict.json bits and reasons either way."""
    changes = [
        (honest_fix, ()),
        (weakened_oracle, ("alice",)),
        (
            lambda r: r.edit(
                "minilib/mathx.py", "return max(lo, min(x, hi))", "return min(max(x, lo), hi)"
            ),
            (),
        ),
    ]
    cache = tmp_path / "cache"
    for apply, approvals in changes:
        head = sample.change(apply)
        cold = sample.gate(head, jobs=1, cache_dir=None, approved_by=approvals)
        sample.gate(head, jobs=2, cache_dir=cache, approved_by=approvals)  # warm the cache
        warm = sample.gate(head, jobs=2, cache_dir=cache, approved_by=approvals)
        for key in ("verdict", "reasons", "bits", "counts"):
            assert warm.payload[key] == cold.payload[key], key
