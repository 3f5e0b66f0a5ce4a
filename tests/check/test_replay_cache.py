"""Killer-first replay: the cache only chooses what runs first, never the verdict."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import andgate.check.cache
import andgate.check.oracle.replay
from andgate.check.pipeline import CheckOptions, run_check
from andgate.commands.sample import AGENT
from andgate.records import Outcome
from conftest import GateRun, Sample, isolated
from harness import build_test_sample
from stories import honest_fix, weakened_oracle

pytestmark = [pytest.mark.slow, pytest.mark.both_known_bad]


class SpiedRequests(list):
    """Every replay pytest request, in order (each one's result in `.results`)."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list = []

    def clear(self) -> None:
        super().clear()
        self.results.clear()


def spy_on(monkeypatch) -> SpiedRequests:
    requests = SpiedRequests()
    real = andgate.check.oracle.replay.run_pytest

    def recording(request, *args, **kwargs):
        requests.append(request)
        result = real(request, *args, **kwargs)
        requests.results.append(result)
        return result

    monkeypatch.setattr(andgate.check.oracle.replay, "run_pytest", recording)
    return requests


@pytest.fixture
def spy(monkeypatch):
    return spy_on(monkeypatch)


def killer_files(cache_dir):
    return sorted((cache_dir / "killers").glob("*.json"))


@dataclass
class Cold:
    """The honest fix gated once on an empty cache: the cache it left and the
    verdict (read only; copy the cache to change it)."""

    sample: Sample
    head: str
    cache: Path
    run: GateRun


@pytest.fixture(scope="module")
def cold(tmp_path_factory) -> Cold:
    tmp = tmp_path_factory.mktemp("cold")
    with isolated(tmp_path_factory):
        repo, base = build_test_sample(tmp / "sample")
        sample = Sample(repo, base, tmp)
        head = sample.change(honest_fix)
        run = sample.gate(head, cache_dir=tmp / "cache")
        return Cold(sample, head, tmp / "cache", run)


def warm_cache(cold: Cold, tmp_path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(cold.cache, cache)
    return cache


def guesses(monkeypatch) -> list:
    """Every call of the likely-killer guess from now on."""
    calls: list = []
    real = andgate.check.oracle.replay.first_files
    monkeypatch.setattr(
        andgate.check.oracle.replay, "first_files", lambda *a: calls.append(a) or real(*a)
    )
    return calls


def test_a_second_replay_runs_the_remembered_killers_files_first(cold, spy, tmp_path, monkeypatch):
    """The cache names the files that run first, instead of the guess: each whole
    and in order, so a killer runs after the items before it, as in the class."""
    guessed = guesses(monkeypatch)
    cache = warm_cache(cold, tmp_path)
    entries = {json.loads(p.read_text())["killers"][0] for p in killer_files(cache)}
    assert entries == {
        "tests/oracles/test_text_oracle.py::test_chunk_keeps_short_tail",
        "tests/oracles/test_math_oracle.py::test_clamp_cases[-1-0-10-0]",
    }
    warm = cold.sample.gate(cold.head, cache_dir=cache, artifacts=tmp_path / "artifacts")
    assert guessed == []
    assert sorted(r.first_files for r in spy) == [
        ("tests/oracles/test_math_oracle.py",),
        ("tests/oracles/test_text_oracle.py",),
    ]
    assert all(r.allow_files == r.first_files for r in spy)  # each file whole, alone
    assert warm.payload["reasons"] == cold.run.payload["reasons"] == []
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
def test_a_poisoned_cache_never_changes_the_verdict(cold, spy, tmp_path, poison):
    """Killers that do not fail (a passing oracle, a non-oracle, garbage) cost at
    most a run of the other files; the fixtures still bite."""
    cache = warm_cache(cold, tmp_path)
    entries = killer_files(cache)
    assert len(entries) == 2
    for entry in entries:
        entry.write_text(poison)
    run = cold.sample.gate(cold.head, cache_dir=cache, artifacts=tmp_path / "artifacts")
    assert run.decision == "allow", run.payload["reasons"]
    assert [f["bites"] for f in run.artifact("known_bad.json")["fixtures"]] == [True, True]
    # Whatever the entry names, only oracle files run in a replay.
    assert all(f.startswith("tests/oracles/") for r in spy for f in r.allow_files or ())


@pytest.mark.parametrize(
    ("apply", "approvals"),
    [
        (honest_fix, ()),
        (weakened_oracle, ("alice",)),
        (
            lambda r: r.edit(
                "minilib/mathx.py", "return max(lo, min(x, hi))", "return min(max(x, lo), hi)"
            ),
            (),
        ),
    ],
    ids=["honest", "weakened-oracle", "stale-fixture"],
)
def test_cached_parallel_replay_decides_like_serial_cold_replay(
    sample, spy, apply, approvals, monkeypatch
):
    """Issue 4's acceptance: same verdict.json bits and reasons either way. The
    serial run starts on an empty cache (cold) and fills it for the parallel one."""
    cache = sample.tmp / "cache"
    head = sample.change(apply)
    cold = sample.gate(head, jobs=1, cache_dir=cache, approved_by=approvals)
    remembered = len(killer_files(cache))
    assert remembered
    spy.clear()
    guessed = guesses(monkeypatch)
    warm = sample.gate(head, jobs=2, cache_dir=cache, approved_by=approvals)
    # Only a fixture with no entry (one the change made stale) is guessed for.
    replays = {r.label.split(" part ")[0] for r in spy}
    assert len(guessed) == len(replays) - remembered
    for key in ("verdict", "reasons", "bits", "counts"):
        assert warm.payload[key] == cold.payload[key], key


# -- cold replays: likely killers first (issue 14) ------------------------------------

WIDE = 6  # oracle files, one per production module, five items each
WIDE_MANIFEST = """\
version: 1
classes:
  oracle:
    require_human_owner: true
    globs: ["tests/oracles/**/*.py"]
owners: [alice]
require_property_class: false
"""


def wide_project(make_repo):
    """A project whose one known-bad fixture breaks the module only the LAST
    oracle file imports; every other oracle file passes under it."""
    files = {".gitignore": "__pycache__/\nartifacts/\n", "pkg/__init__.py": ""}
    files["tests/trust_manifest.yaml"] = WIDE_MANIFEST
    for n in range(1, WIDE + 1):
        files[f"pkg/m{n}.py"] = f"def shift{n}(x):\n    return x + {n}\n"
        files[f"tests/oracles/test_m{n}.py"] = (
            f"import pytest\n\nfrom pkg.m{n} import shift{n}\n\n\n"
            f"@pytest.mark.parametrize('x', range(5))\n"
            f"def test_shift{n}(x):\n    assert shift{n}(x) == x + {n}\n"
        )
    repo = make_repo(files)
    patch = repo.diff_of([(f"pkg/m{WIDE}.py", f"return x + {WIDE}", f"return x - {WIDE}")])
    repo.write({"tests/oracles/known_bad/last_subtracts.patch": patch})
    base = repo.commit("known-bad fixture (owner: alice)")
    repo.write({"pkg/extra.py": "EXTRA = 1\n"})
    return repo, base, repo.commit("agent change", who=AGENT)


def wide_gate(repo, base, head, artifacts):
    opts = CheckOptions(
        repo=repo.path,
        base=base,
        head=head,
        today=dt.date(2026, 11, 25),
        artifacts=artifacts,
        jobs=2,
        timeout=300,
        cache_dir=None,
        discrimination=False,
    )
    _, written = run_check(opts)
    return json.loads((written.folder / "verdict.json").read_text(encoding="utf-8"))


def test_a_cold_replay_runs_the_likely_killer_first_and_decides_the_same(
    make_repo, spy, tmp_path, monkeypatch
):
    repo, base, head = wide_project(make_repo)
    ordered = wide_gate(repo, base, head, tmp_path / "ordered")
    likely = (f"tests/oracles/test_m{WIDE}.py",)
    assert [(r.allow_files, r.first_files) for r in spy] == [(likely, likely)]
    (result,) = spy.results
    assert list(result.reports) == [f"tests/oracles/test_m{WIDE}.py::test_shift{WIDE}[0]"]
    assert len(result.selected("oracle")) == 5  # only the likely killer's file collected

    spy.clear()
    monkeypatch.setattr(
        andgate.check.oracle.replay, "first_files", lambda *args: ()
    )  # collection order
    unordered = wide_gate(repo, base, head, tmp_path / "unordered")
    (result,) = spy.results
    assert len(result.reports) == (WIDE - 1) * 5 + 1
    for key in ("verdict", "reasons", "bits", "counts"):
        assert ordered[key] == unordered[key], key
    assert ordered["verdict"] == "allow", ordered["reasons"]


def test_a_cold_replay_whose_likely_killers_all_pass_runs_the_other_files_next(
    make_repo, spy, tmp_path, monkeypatch
):
    """The likely files are a guess: when none of them fails, the class's other files
    run (and here catch the fixture), so the guess can cost a run, never a bite."""
    repo, base, head = wide_project(make_repo)
    wrong_guess = ("tests/oracles/test_m1.py", "tests/oracles/test_m2.py")
    monkeypatch.setattr(andgate.check.oracle.replay, "first_files", lambda *args: wrong_guess)
    verdict = wide_gate(repo, base, head, tmp_path / "guess")
    assert verdict["verdict"] == "allow", verdict["reasons"]
    likely, rest = spy
    assert (likely.allow_files, likely.exitfirst) == (wrong_guess, True)
    assert sorted(rest.allow_files) == [f"tests/oracles/test_m{n}.py" for n in range(3, WIDE + 1)]
    assert rest.exitfirst
    first, second = spy.results
    assert {first.outcome(n) for n in first.reports} == {Outcome.PASSED}
    assert len(first.reports) == 10
    assert second.outcome(f"tests/oracles/test_m{WIDE}.py::test_shift{WIDE}[0]") is Outcome.FAILED


def registry_project(make_repo):
    """wide_project, where test_m2 imports a module test_m1 registers when it is
    collected (alone, test_m2 cannot be collected), and the fixture breaks nothing."""
    repo, base, head = wide_project(make_repo)
    repo.run("checkout", "-q", "--detach", base)
    registry = (
        "import sys\nimport types\n\nsys.modules['oracle_registry'] = types.ModuleType('r')\n"
    )
    repo.write(
        {
            "tests/oracles/test_m1.py": registry
            + (repo.path / "tests/oracles/test_m1.py").read_text(),
            "tests/oracles/test_m2.py": "import oracle_registry  # noqa: F401\n"
            + (repo.path / "tests/oracles/test_m2.py").read_text(),
            # A fixture that breaks nothing any oracle checks.
            "tests/oracles/known_bad/last_subtracts.patch": repo.diff_of(
                [("pkg/m1.py", "def shift1(x):", "def shift1(x):  # harmless")]
            ),
        }
    )
    base = repo.commit("oracles share a registry; a harmless fixture (owner: alice)")
    repo.write({"pkg/extra.py": "EXTRA = 1\n"})
    head = repo.commit("agent change", who=AGENT)
    return repo, base, head


def test_likely_files_that_only_fail_to_collect_alone_prove_nothing(
    make_repo, spy, tmp_path, monkeypatch
):
    """test_m2 imports a module test_m1 registers when it is collected: alone, it
    cannot be collected, with or without the fixture. That is no bite: the whole
    class runs, and a fixture no oracle catches still survives (and blocks)."""
    repo, base, head = registry_project(make_repo)
    monkeypatch.setattr(
        andgate.check.oracle.replay, "first_files", lambda *args: ("tests/oracles/test_m2.py",)
    )
    verdict = wide_gate(repo, base, head, tmp_path / "registry")
    assert [r.label.rsplit(" ", 1)[-1] for r in spy] == ["1/2", "whole"]
    assert [r["code"] for r in verdict["reasons"]] == ["ORACLE_NEUTRALIZED"], verdict["reasons"]


SETS_STATE = "\n\ndef test_m1_sets_state():\n    import sys\n\n    sys.andgate_state = 1\n"
NEEDS_STATE = (
    "\n\ndef test_m2_needs_state():\n    import sys\n\n"
    "    assert getattr(sys, 'andgate_state', 0)\n"
)


def cross_file_project(make_repo):
    """registry_project, where an item of test_m2 also needs what an item of test_m1
    sets when it runs: test_m2 passes only after test_m1, as in the class."""
    repo, base, _ = registry_project(make_repo)
    repo.run("checkout", "-q", "--detach", base)
    for path, extra in (
        ("tests/oracles/test_m1.py", SETS_STATE),
        ("tests/oracles/test_m2.py", NEEDS_STATE),
    ):
        repo.write({path: (repo.path / path).read_text() + extra})
    base = repo.commit("test_m2 needs test_m1's state (owner: alice)")
    repo.write({"pkg/extra2.py": "EXTRA = 2\n"})
    return repo, base, repo.commit("agent change", who=AGENT)


def test_after_a_part_that_failed_to_collect_the_whole_class_runs_in_its_own_order(
    make_repo, spy, tmp_path, monkeypatch
):
    """The remembered file (test_m2) cannot be collected alone: no proof, so the whole
    class decides, in collection order, not with the cache's file first (where
    test_m2_needs_state would fail before test_m1 set its state). The harmless
    fixture survives (and blocks)."""
    repo, base, head = cross_file_project(make_repo)
    remembered = ("tests/oracles/test_m2.py::test_shift2[0]",)
    monkeypatch.setattr(andgate.check.cache.KillerCache, "get", lambda *args: remembered)
    verdict = wide_gate(repo, base, head, tmp_path / "whole")
    assert [r.label for r in spy] == ["known-bad 0 part 1/2", "known-bad 0 whole"]
    assert spy[1].first_files == ()
    assert [r["code"] for r in verdict["reasons"]] == ["ORACLE_NEUTRALIZED"], verdict["reasons"]


def test_a_second_part_that_failed_to_collect_proves_nothing_either(
    make_repo, spy, tmp_path, monkeypatch
):
    """Cold: the guess names test_m1, which passes; the other files then run apart
    from it, and test_m2 cannot be collected without it. That is no bite: the whole
    class decides, and the harmless fixture survives (and blocks)."""
    repo, base, head = registry_project(make_repo)
    monkeypatch.setattr(
        andgate.check.oracle.replay, "first_files", lambda *args: ("tests/oracles/test_m1.py",)
    )
    verdict = wide_gate(repo, base, head, tmp_path / "second")
    assert [r.label.rsplit(" ", 1)[-1] for r in spy] == ["1/2", "2/2", "whole"]
    assert spy.results[1].collection_errors  # test_m2, apart from test_m1
    assert [r["code"] for r in verdict["reasons"]] == ["ORACLE_NEUTRALIZED"], verdict["reasons"]


ORDER_DEPENDENT = """

SEEN = []


def test_records():
    SEEN.append(1)


def test_relies_on_the_item_before():
    assert SEEN
"""


def test_a_remembered_killer_that_fails_alone_without_the_fixture_proves_nothing(
    make_repo, spy, tmp_path, monkeypatch
):
    """An oracle item that fails when run alone (it relies on the item before it),
    remembered as the killer of a fixture that breaks nothing. Its file runs whole
    and in order, so it passes, as in the class; the rest passes too, and the
    fixture survives (and blocks). When a remembered killer ran alone, that lone
    failure was the bite, and the check allowed."""
    repo, base, head = wide_project(make_repo)
    repo.run("checkout", "-q", "--detach", base)
    repo.write(
        {
            "tests/oracles/test_m2.py": (repo.path / "tests/oracles/test_m2.py").read_text()
            + ORDER_DEPENDENT,
            "tests/oracles/known_bad/last_subtracts.patch": repo.diff_of(
                [("pkg/m1.py", "def shift1(x):", "def shift1(x):  # harmless")]
            ),
        }
    )
    base = repo.commit("an order-dependent oracle pair; a harmless fixture (owner: alice)")
    repo.write({"pkg/extra.py": "EXTRA = 1\n"})
    head = repo.commit("agent change", who=AGENT)
    remembered = ("tests/oracles/test_m2.py::test_relies_on_the_item_before",)
    monkeypatch.setattr(andgate.check.cache.KillerCache, "get", lambda *args: remembered)
    verdict = wide_gate(repo, base, head, tmp_path / "order")
    assert [r.label for r in spy] == ["known-bad 0 part 1/2", "known-bad 0 part 2/2"]
    assert spy[0].allow_files == ("tests/oracles/test_m2.py",)  # the killer's file, whole
    assert spy.results[0].outcome(remembered[0]) is Outcome.PASSED  # after the item before
    assert [r["code"] for r in verdict["reasons"]] == ["ORACLE_NEUTRALIZED"], verdict["reasons"]


def test_a_remembered_killer_that_only_fails_to_collect_alone_proves_nothing(
    make_repo, spy, tmp_path, monkeypatch
):
    """The cache only picks what runs first. A remembered killer in test_m2 makes its
    file run first, alone, and it cannot be collected alone: no bite either. The
    whole class decides, and the harmless fixture still survives (and blocks)."""
    repo, base, head = registry_project(make_repo)
    remembered = ("tests/oracles/test_m2.py::test_shift2[0]",)
    monkeypatch.setattr(andgate.check.cache.KillerCache, "get", lambda *args: remembered)
    verdict = wide_gate(repo, base, head, tmp_path / "remembered")
    assert [r.label for r in spy] == ["known-bad 0 part 1/2", "known-bad 0 whole"]
    assert spy.results[0].collection_errors  # the killer's file, alone
    assert [r["code"] for r in verdict["reasons"]] == ["ORACLE_NEUTRALIZED"], verdict["reasons"]
