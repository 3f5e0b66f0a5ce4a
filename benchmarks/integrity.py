"""What the test-side integrity checks (issue 38) cost a check of the generated suite.

Trusted runs (oracle, property, known-bad replays, base's runs) compile their
worktree's modules from bytes they read and record their blob ids, the gate judges
the records, and a reused worktree is hashed against its commit before each trusted
run (`andgate.plugin.integrity`, `andgate.process.integrity`,
`andgate.process.worktree.Worktree.differences`). Two measurements, both interleaved
(off, on, on, off, ...: the machine's other load shifts both arms alike):

1. **Whole checks.** The honest change of the generated repository (`sample_repo.py`)
   gated with and without the checks, per K known-bad fixtures; medians of wall and
   CPU time (the whole process tree) and the median of each round's on/off ratio.
   "Without" runs the same andgate with `PhaseContext.trusted` made the identity: no
   request is trusted, so no process is guarded and no switch is verified (the
   untrusted runs are the same either way). Inside the "with" checks, the time the gate
   spends verifying switches and judging records is summed apart.
2. **One trusted process.** What the guard costs a pytest process by itself: the
   generated suite's oracle and property files run in one process, with and without
   `plugin.integrity.install`, in a tree whose bytecode caches a first run wrote (a
   reused worktree: without the guard, its caches are loaded) and in a fresh one.
   CPU of the process, which is far steadier than a whole check's wall time on a
   loaded machine.

    python benchmarks/integrity.py [--rounds 9] [--ks 0,4] [--jobs 2] [--quick]

It prints two tables and writes `benchmarks/integrity.json`. Standard library only
(plus andgate and pytest). Nothing in the test suite asserts timings.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from run import TODAY, Timed, gate_env, machine, timed
from sample_repo import FULL, QUICK, base_env, build_repo

HERE = Path(__file__).resolve().parent
TARGET = 1.02  # issue 38: at most 2 % of the check

WRAPPER = r"""
import json, sys, time
arm, out_path = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
sys.argv[0] = "andgate"
spent = {}

def timed(owner, name, key):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            entry = spent.setdefault(key, [0, 0.0])
            entry[0] += 1
            entry[1] += time.perf_counter() - t0
    setattr(owner, name, wrapper)

if arm == "off":
    from andgate.check.context import PhaseContext
    PhaseContext.trusted = lambda self, request, commit: request
else:
    from andgate.process import integrity, results, worktree
    timed(worktree.Worktree, "differences", "verify")
    timed(results, "judge", "judge")
from andgate.commands.cli import main
try:
    code = main(sys.argv[1:])
finally:
    with open(out_path, "w") as fh:
        json.dump(spent, fh)
raise SystemExit(code)
"""

# One pytest process over the suite's trusted files, guarded or not.
PROCESS = r"""
import os, sys
arm, root = sys.argv[1], sys.argv[2]
sys.path.insert(0, root)
import pytest
if arm == "on":
    from andgate.plugin import integrity
    tests = []
    for here, _, names in os.walk(os.path.join(root, "tests")):
        tests += [os.path.relpath(os.path.join(here, n), root) for n in names if n.endswith(".py")]
    integrity.install(root, "sha1", tests)
code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "tests/oracles",
                    "tests/properties"])
if arm == "on":
    integrity.current().report()
os._exit(int(code))
"""


def check(
    repo: Path, base: str, head: str, arm: str, root: Path, jobs: int, extra: Sequence[str]
) -> dict[str, Any]:
    artifacts = root / f"artifacts-{arm}"
    shutil.rmtree(artifacts, ignore_errors=True)
    out = root / f"gate-{arm}.json"
    argv = [sys.executable, "-c", WRAPPER, arm, str(out), "check", "--base", base]
    argv += ["--head", head, "--jobs", str(jobs), "--today", TODAY]
    argv += ["--artifacts", str(artifacts), "--quiet", *extra]
    cache = Path(tempfile.mkdtemp(prefix="killers-", dir=root))  # a cold killer cache
    result: Timed = timed(argv, repo, gate_env(root, cache))
    verdict = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
    if result.proc.returncode != 0 or verdict["verdict"] != "allow":
        reasons = "\n".join(f"  {r['code']}: {r['detail']}" for r in verdict["reasons"])
        raise SystemExit(f"the {arm} check did not allow the honest change:\n{reasons}")
    spent = json.loads(out.read_text(encoding="utf-8"))
    run = {"seconds": result.seconds, "cpu": result.cpu, "load": result.load}
    for key in ("verify", "judge"):
        calls, seconds = spent.get(key, [0, 0.0])
        run[f"{key}_calls"], run[f"{key}_seconds"] = calls, seconds
    return run


def measure_checks(
    repo: Any, ks: Sequence[int], rounds: int, root: Path, jobs: int, extra: Sequence[str]
) -> dict:
    samples: dict[int, dict[str, list[dict[str, Any]]]] = {k: {"off": [], "on": []} for k in ks}
    for k in ks:  # a warm-up of each arm: site-packages' and andgate's bytecode
        for arm in ("off", "on"):
            check(repo.path, *repo.pairs[k], arm, root, jobs, extra)
    for round_ in range(rounds):
        order = ("off", "on") if round_ % 2 == 0 else ("on", "off")
        for k in ks:
            for arm in order:
                run = check(repo.path, *repo.pairs[k], arm, root, jobs, extra)
                samples[k][arm].append(run)
                log(
                    f"check round {round_ + 1}/{rounds} K={k} {arm:>3}: {run['seconds']:.2f} s "
                    f"wall, {run['cpu']:.2f} s CPU, load {run['load']:.2f}"
                )
    return {str(k): check_summary(samples[k]) for k in ks}


def check_summary(arms: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    pairs = list(zip(arms["on"], arms["off"], strict=True))
    med = {arm: _medians(runs, ("seconds", "cpu")) for arm, runs in arms.items()}
    return {
        "off": med["off"],
        "on": med["on"],
        "wall_ratio": med["on"]["seconds"] / med["off"]["seconds"],
        "cpu_ratio": med["on"]["cpu"] / med["off"]["cpu"],
        "paired_wall_ratio": statistics.median(a["seconds"] / b["seconds"] for a, b in pairs),
        "paired_cpu_ratio": statistics.median(a["cpu"] / b["cpu"] for a, b in pairs),
        **_medians(arms["on"], ("verify_calls", "verify_seconds", "judge_calls", "judge_seconds")),
        "runs": {arm: [r["seconds"] for r in runs] for arm, runs in arms.items()},
    }


def _medians(runs: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in runs) for key in keys}


def one_process(tree: Path, arm: str, fresh: bool) -> dict[str, float]:
    if fresh:
        for cache in tree.rglob("__pycache__"):
            shutil.rmtree(cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    argv = [sys.executable, "-P", "-c", PROCESS, arm, str(tree)]
    proc = subprocess.run(argv, cwd=tree, env=base_env(), capture_output=True, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"pytest in {tree} ({arm}) failed:\n{proc.stdout.decode()[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"seconds": seconds, "cpu": cpu}


def measure_process(repo: Any, k: int, rounds: int, root: Path) -> dict[str, Any]:
    tree = root / "tree"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(tree)], check=True)
    subprocess.run(["git", "checkout", "-q", repo.pairs[k][1]], cwd=tree, check=True)
    found: dict[str, Any] = {}
    for fresh in (False, True):
        kind = "fresh tree" if fresh else "reused tree (caches a first run wrote)"
        one_process(tree, "off", fresh=True)  # the caches a first run writes
        arms: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
        for round_ in range(rounds):
            for arm in ("off", "on") if round_ % 2 == 0 else ("on", "off"):
                arms[arm].append(one_process(tree, arm, fresh))
        off, on = (_medians(arms[arm], ("cpu", "seconds")) for arm in ("off", "on"))
        pairs = zip(arms["on"], arms["off"], strict=True)
        found[kind] = {
            "off": off,
            "on": on,
            "cpu_delta": on["cpu"] - off["cpu"],
            "paired_cpu_delta": statistics.median(a["cpu"] - b["cpu"] for a, b in pairs),
        }
        log(f"one process, {kind}: CPU {off['cpu']:.3f} s off, {on['cpu']:.3f} s on")
    return found


def print_tables(checks: dict[str, Any], process: dict[str, Any]) -> None:
    print("whole checks (medians; paired: the median of each round's on/off ratio)")
    print(
        f"{'K':>3} {'off s':>7} {'on s':>7} {'wall':>6} {'paired':>7} {'CPU off':>8} "
        f"{'CPU on':>7} {'CPU':>6} {'paired':>7} {'verify s':>9} {'judge s':>8}"
    )
    for k, row in checks.items():
        print(
            f"{k:>3} {row['off']['seconds']:7.2f} {row['on']['seconds']:7.2f} "
            f"{row['wall_ratio']:6.3f} {row['paired_wall_ratio']:7.3f} {row['off']['cpu']:8.2f} "
            f"{row['on']['cpu']:7.2f} {row['cpu_ratio']:6.3f} {row['paired_cpu_ratio']:7.3f} "
            f"{row['verify_seconds']:9.3f} {row['judge_seconds']:8.3f}"
        )
    print("one trusted pytest process (CPU seconds, medians)")
    for kind, row in process.items():
        print(
            f"  {kind}: {row['off']['cpu']:.3f} off, {row['on']['cpu']:.3f} on, "
            f"{row['paired_cpu_delta']:+.3f} s paired"
        )


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--process-rounds", type=int, default=15)
    parser.add_argument("--ks", default="0,4")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="the small repository, 1 round")
    parser.add_argument(
        "--discrimination",
        action="store_true",
        help="checks as `check` runs by default (else --no-discrimination: a shorter check, "
        "so a larger share for the checks measured)",
    )
    parser.add_argument("--no-process", action="store_true", help="skip the one-process runs")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "integrity.json")
    args = parser.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]
    rounds = 1 if args.quick else args.rounds
    root = Path(tempfile.mkdtemp(prefix="andgate-integrity-bench-"))
    try:
        repo = build_repo(root / "repo", QUICK if args.quick else FULL, ks)
        process = {}
        if not args.no_process:
            process = measure_process(repo, ks[0], 3 if args.quick else args.process_rounds, root)
        extra = () if args.discrimination else ("--no-discrimination",)
        checks = measure_checks(repo, ks, rounds, root, args.jobs, extra)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print_tables(checks, process)
    document = {
        "machine": machine(),
        "load": os.getloadavg(),
        "rounds": rounds,
        "jobs": args.jobs,
        "discrimination": args.discrimination,
        "checks": checks,
        "one_process": process,
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
