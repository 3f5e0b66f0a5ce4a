"""Item timeouts (contract section 4, "Hangs"; issue 23, part 4).

An item past its limit fails, named, with `timed out after N s`, and the rest of
its class still runs: in every class, for a loop that holds the GIL and for a
sleep. In a known-bad replay a timeout is a kill only when the item times out
again when rerun alone. A hang outside any item is still the process's timeout.
The gate runs use a 3 s item limit (CheckOptions takes any; the CLI's floor is 30 s).
"""

from __future__ import annotations

import os
import time

import pytest

from andgate.check.oracle.replay import ALONE_FACTOR, alone_limit
from andgate.commands.cli import main
from andgate.commands.sample import SampleRepo
from andgate.process.requests import ITEM_TIMEOUT_FLOOR
from andgate.records import Outcome
from conftest import GateRun, Sample
from stories import honest_fix

LIMIT = 3.0
HANGS = {
    "gil": "while True:\n            pass",  # holds the GIL: only a signal stops it
    "sleep": "import time\n        time.sleep(1000)",
}


def hang_in_mean(how: str) -> tuple[str, str, str]:
    """`mean` of four numbers hangs: the oracle's test_mean only."""
    return (
        "minilib/mathx.py",
        "    xs = list(xs)\n",
        f"    xs = list(xs)\n    if len(xs) == 4:\n        {HANGS[how]}\n",
    )


def gate(sample: Sample, head: str, **options: object) -> GateRun:
    return sample.gate(head, item_timeout=LIMIT, timeout=120, cache_dir=None, **options)


def outcomes(run: GateRun) -> dict[str, str]:
    return {i["nodeid"]: i["outcome"] for i in run.artifact("trust_inventory.json")["items"]}


TIMED_OUT = f"failed: timed out after {LIMIT:g} s"


@pytest.mark.parametrize("how", HANGS)
def test_an_oracle_item_that_hangs_fails_named_and_the_class_runs_on(sample, how):
    head = sample.change(lambda r: r.edit(*hang_in_mean(how)))
    run = gate(sample, head)
    assert run.codes == ["ORACLE_FAILED"], run.payload["reasons"]
    assert run.details("ORACLE_FAILED") == [
        f"tests/oracles/test_math_oracle.py::test_mean {TIMED_OUT}"
    ]
    seen = outcomes(run)
    assert seen["tests/oracles/test_text_oracle.py::test_slugify_words"] == Outcome.PASSED
    assert seen["tests/oracles/test_math_oracle.py::test_clamp_cases[5-0-10-5]"] == Outcome.PASSED


@pytest.mark.parametrize("how", HANGS)
def test_a_property_item_that_hangs_fails_named(sample, how):
    def hang_on_seed_two(repo: SampleRepo) -> None:
        repo.edit(
            "tests/properties/test_chunk_property.py",
            "    rng = random.Random(seed)\n",
            f"    rng = random.Random(seed)\n    if seed == 2:\n        {HANGS[how]}\n",
        )

    run = gate(sample, sample.change(hang_on_seed_two))
    assert run.codes == ["PROPERTY_FAILED"], run.payload["reasons"]
    assert run.details("PROPERTY_FAILED") == [
        f"tests/properties/test_chunk_property.py::test_chunk_roundtrip[2] {TIMED_OUT}"
    ]
    seen = outcomes(run)
    assert seen["tests/properties/test_chunk_property.py::test_chunk_roundtrip[3]"] == "passed"


@pytest.mark.parametrize("how", HANGS)
def test_an_untrusted_item_that_hangs_fails_named(sample, how):
    test = (
        f"def test_hang():\n    if True:\n        {HANGS[how]}\n\n\ndef test_after():\n    pass\n"
    )
    run = gate(sample, sample.change(lambda r: r.write({"tests/test_hang.py": test})))
    assert run.codes == ["UNTRUSTED_FAILED"], run.payload["reasons"]
    assert run.details("UNTRUSTED_FAILED") == [f"tests/test_hang.py::test_hang {TIMED_OUT}"]
    assert outcomes(run)["tests/test_hang.py::test_after"] == Outcome.PASSED


def test_a_swallowed_timeout_still_fails_the_item(sample):
    """`except BaseException: pass` around a hang: the alarm fires again, and the
    item is recorded as timed out whatever the test made of it."""
    test = (
        "import time\n\n\ndef test_swallows():\n"
        "    try:\n        time.sleep(1000)\n    except BaseException:\n        pass\n"
    )
    run = gate(sample, sample.change(lambda r: r.write({"tests/test_swallow.py": test})))
    assert run.details("UNTRUSTED_FAILED") == [f"tests/test_swallow.py::test_swallows {TIMED_OUT}"]


def test_under_xdist_workers_an_item_times_out_the_same(tmp_path):
    """The user's config starts xdist workers: the alarm runs in each worker."""
    from harness import BASE_FILES, build_test_sample

    ini = "[pytest]\ntestpaths = tests\naddopts = -n 2\n"
    repo, base = build_test_sample(tmp_path / "sample", {**BASE_FILES, "pytest.ini": ini}, ())
    sample = Sample(repo, base, tmp_path)
    run = gate(sample, sample.change(lambda r: r.edit(*hang_in_mean("gil"))))
    assert run.details("ORACLE_FAILED") == [
        f"tests/oracles/test_math_oracle.py::test_mean {TIMED_OUT}"
    ]


# -- known-bad replays -------------------------------------------------------------------


def with_fixture(sample: Sample, name: str, edit: tuple[str, str, str]) -> Sample:
    """The sample with one more known-bad fixture, committed by the owner as base."""
    repo = sample.repo
    repo.run("checkout", "-q", "--detach", sample.base)
    repo.write({f"tests/oracles/known_bad/{name}.patch": repo.diff_of([edit])})
    return Sample(repo, repo.commit(f"known-bad {name}"), sample.tmp)


@pytest.mark.parametrize("how", HANGS)
def test_a_fixture_that_makes_an_oracle_hang_bites(sample, how):
    """The item times out under the fixture, and again alone: a kill."""
    hanging = with_fixture(sample, "kb_hang", hang_in_mean(how))
    run = gate(hanging, hanging.change(honest_fix))
    assert run.decision == "allow", run.payload["reasons"]
    [replay] = [f for f in run.artifact("known_bad.json")["fixtures"] if f["name"] == "kb_hang"]
    assert replay["bites"] and replay["failed_oracle_items"] == [
        "tests/oracles/test_math_oracle.py::test_mean"
    ]


def test_a_replay_timeout_that_does_not_recur_alone_is_no_kill(sample):
    """The fixture hangs mean only the first time in a worktree (as a loaded machine
    might slow an item once): alone, test_mean passes, so it is set aside, the rest
    of the class catches nothing, and the fixture does not bite."""
    once = (
        "minilib/mathx.py",
        "    xs = list(xs)\n",
        "    xs = list(xs)\n"
        "    import pathlib\n"
        "    flag = pathlib.Path(__file__).parent.parent / 'hung-once'\n"
        "    if not flag.exists():\n"
        "        flag.touch()\n"
        "        while True:\n"
        "            pass\n",
    )
    name = "kb_hang_once"
    hanging = with_fixture(sample, name, once)
    run = gate(hanging, hanging.change(honest_fix))
    assert run.codes == ["ORACLE_NEUTRALIZED"], run.payload["reasons"]
    assert run.details("ORACLE_NEUTRALIZED") == [f"{name} left every oracle item passing"]
    [replay] = [
        f for f in run.artifact("known_bad.json")["fixtures"] if f["name"] == "kb_hang_once"
    ]
    assert not replay["bites"] and not replay["failed_oracle_items"], replay


# -- limits --------------------------------------------------------------------------------


def test_a_rerun_alone_is_bounded_by_the_plain_run():
    assert alone_limit(600.0, None) == 600.0  # never ran plainly: the check's limit
    assert alone_limit(600.0, 0.01) == ITEM_TIMEOUT_FLOOR  # never below the floor
    assert alone_limit(600.0, 12.0) == 12.0 * ALONE_FACTOR
    assert alone_limit(60.0, 12.0) == 60.0  # never above the check's limit
    assert alone_limit(3.0, 0.01) == 3.0


def test_the_cli_refuses_an_item_timeout_below_the_floor(sample, capsys):
    code = main(["check", "--repo", str(sample.path), "--base", sample.base, "--item-timeout", "5"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--item-timeout 5: at least 30 s" in err and "Traceback" not in err


def test_a_hang_outside_any_item_is_the_processs_timeout(sample):
    """An untrusted file that loops at import: no item runs, the process times out."""
    hang = "while True:\n    pass\n"
    head = sample.change(lambda r: r.write({"tests/test_import_hang.py": hang}))
    run = sample.gate(head, item_timeout=LIMIT, timeout=20, cache_dir=None)
    assert "GATE_ERROR" in run.codes
    assert any("ran past the 20s timeout" in d for d in run.details("GATE_ERROR"))


def test_an_item_the_alarm_cannot_stop_is_stopped_by_the_gate(sample, monkeypatch):
    """`sum(range(10**12))` runs in C holding the GIL: no signal handler runs until
    it returns. The gate sees no item finish for the limit plus its grace, and stops
    the process instead of waiting for `--timeout`."""
    monkeypatch.setattr("andgate.process.run.STALL_GRACE", 5.0)
    test = "def test_c_loop():\n    sum(range(10**12))\n"
    head = sample.change(lambda r: r.write({"tests/test_c_loop.py": test}))
    run = sample.gate(head, item_timeout=LIMIT, timeout=300, cache_dir=None)
    [error] = run.details("GATE_ERROR")
    assert error.startswith("the untrusted pytest process stopped responding: no test item")
    assert "past the 3 s item limit, it was running tests/test_c_loop.py::test_c_loop (" in error


def test_under_xdist_the_controller_names_the_item_a_worker_is_stuck_in(tmp_path, monkeypatch):
    """The workers run the items; xdist's controller sees each start and finish."""
    from harness import BASE_FILES, build_test_sample

    monkeypatch.setattr("andgate.process.run.STALL_GRACE", 5.0)
    ini = "[pytest]\ntestpaths = tests\naddopts = -n 2\n"
    repo, base = build_test_sample(tmp_path / "sample", {**BASE_FILES, "pytest.ini": ini}, ())
    sample = Sample(repo, base, tmp_path)
    test = "def test_c_loop():\n    sum(range(10**12))\n"
    head = sample.change(lambda r: r.write({"tests/test_c_loop.py": test}))
    run = sample.gate(head, item_timeout=LIMIT, timeout=300, cache_dir=None)
    [error] = run.details("GATE_ERROR")
    assert "it was running tests/test_c_loop.py::test_c_loop (" in error


def test_the_running_items_are_kept_in_a_map_the_stall_watch_reads(tmp_path):
    """The plugin's side (`RunningItems`: the controller of xdist sees several items
    running at once) and the gate's (`StallWatch.running`), without a process."""
    from andgate.plugin.item_clock import RunningItems
    from andgate.process.run import StallWatch

    progress = tmp_path / "oracle.results.json.progress"
    watch = StallWatch(progress, after=60.0)
    assert watch.running() == ""  # nothing started: nothing named
    running = RunningItems(str(tmp_path / "oracle.results.json.running"))
    running.start("tests/test_a.py::test_one")
    assert watch.running() == ", it was running tests/test_a.py::test_one"
    running.finish("tests/test_a.py::test_one")  # shown with the next start
    running.start("tests/test_b.py::test_two[x]")
    assert watch.running() == ", it was running tests/test_b.py::test_two[x]"
    running.start("tests/test_a.py::test_three")  # xdist: two workers
    assert watch.running() == (
        ", it was running tests/test_b.py::test_two[x], tests/test_a.py::test_three"
    )
    running.finish("tests/test_b.py::test_two[x]")  # the other worker's item still runs
    assert watch.running() == ", it was running tests/test_a.py::test_three"
    running.finish("tests/test_a.py::test_three")
    running.start("tests/test_long.py::test_" + "x" * 10_000)  # cut, never an error
    assert watch.running().startswith(", it was running tests/test_long.py::test_xxx")
    assert len(watch.running()) < 400


def test_no_map_means_nothing_named_never_an_error(tmp_path):
    from andgate.plugin.item_clock import RunningItems

    running = RunningItems(str(tmp_path / "no-such-folder" / "x.running"))
    running.start("tests/test_a.py::test_one")
    running.finish("tests/test_a.py::test_one")
    assert running.broken and running.map is None


def test_the_stall_watch_reads_the_progress_files_age(tmp_path):
    from andgate.process.run import StallWatch

    progress = tmp_path / "oracle.results.json.progress"
    watch = StallWatch(progress, after=60.0)
    assert not watch.check()  # no file yet: still collecting, nothing to judge
    progress.write_text("3 10\n", encoding="utf-8")
    assert not watch.check()
    os.utime(progress, (time.time() - 61, time.time() - 61))
    assert watch.check() and watch.stalled
