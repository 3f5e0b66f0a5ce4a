"""What the test-side integrity checks (issue 38) cost a check of the generated suite.

Trusted runs (oracle, property, known-bad replays, base's runs) compile their
worktree's modules from bytes they read and record their blob ids, the gate judges
the records, and a reused worktree is hashed against its commit before each trusted
run (`andgate.plugin.integrity`, `andgate.process.integrity`,
`andgate.process.worktree.Worktree.differences`). This script gates the honest change
of the generated repository (`sample_repo.py`) with and without them, interleaved
(off, on, on, off, ...: the machine's other load shifts both arms alike), and reports
the medians and their ratio, per K known-bad fixtures.

"Without" runs the same andgate with `PhaseContext.trusted` made the identity: no
request is trusted, so no process is guarded and no switch is verified (the untrusted
runs are as before either way). Inside the "with" checks, the time spent verifying
worktree switches is summed apart.

    python benchmarks/integrity.py [--rounds 5] [--ks 0,4] [--jobs 2] [--quick]

It prints one table and writes `benchmarks/integrity.json`. Standard library only (plus
andgate and pytest). Nothing in the test suite asserts timings.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from run import TODAY, Timed, gate_env, machine, timed
from sample_repo import FULL, QUICK, build_repo

HERE = Path(__file__).resolve().parent
TARGET = 1.02  # issue 38: at most 2 % of the check

WRAPPER = r"""
import json, sys, time
arm, out_path = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
sys.argv[0] = "andgate"
verifying = [0, 0.0]
if arm == "off":
    from andgate.check.context import PhaseContext
    PhaseContext.trusted = lambda self, request, commit: request
else:
    from andgate.process.worktree import Worktree
    differences = Worktree.differences
    def timed_differences(self, commit, files=None):
        t0 = time.perf_counter()
        try:
            return differences(self, commit, files)
        finally:
            verifying[0] += 1
            verifying[1] += time.perf_counter() - t0
    Worktree.differences = timed_differences
from andgate.commands.cli import main
try:
    code = main(sys.argv[1:])
finally:
    with open(out_path, "w") as fh:
        json.dump({"switches_verified": verifying[0], "verify_seconds": verifying[1]}, fh)
raise SystemExit(code)
"""


def check(repo: Path, base: str, head: str, arm: str, root: Path, jobs: int) -> dict[str, Any]:
    artifacts = root / f"artifacts-{arm}"
    shutil.rmtree(artifacts, ignore_errors=True)
    out = root / f"gate-{arm}.json"
    argv = [sys.executable, "-c", WRAPPER, arm, str(out), "check", "--base", base]
    argv += ["--head", head, "--jobs", str(jobs), "--today", TODAY]
    argv += ["--artifacts", str(artifacts), "--quiet", "--no-discrimination"]
    cache = Path(tempfile.mkdtemp(prefix="killers-", dir=root))  # a cold killer cache
    result: Timed = timed(argv, repo, gate_env(root, cache))
    verdict = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
    if result.proc.returncode != 0 or verdict["verdict"] != "allow":
        reasons = "\n".join(f"  {r['code']}: {r['detail']}" for r in verdict["reasons"])
        raise SystemExit(f"the {arm} check did not allow the honest change:\n{reasons}")
    gate = json.loads(out.read_text(encoding="utf-8"))
    return {"seconds": result.seconds, "cpu": result.cpu, "load": result.load, **gate}


def measure(root: Path, ks: Sequence[int], rounds: int, jobs: int, quick: bool) -> dict:
    repo = build_repo(root / "repo", QUICK if quick else FULL, ks)
    samples: dict[int, dict[str, list[dict[str, Any]]]] = {k: {"off": [], "on": []} for k in ks}
    for k in ks:  # a warm-up of each arm: site-packages' and andgate's bytecode
        for arm in ("off", "on"):
            check(repo.path, *repo.pairs[k], arm, root, jobs)
    for round_ in range(rounds):
        order = ("off", "on") if round_ % 2 == 0 else ("on", "off")
        for k in ks:
            for arm in order:
                run = check(repo.path, *repo.pairs[k], arm, root, jobs)
                samples[k][arm].append(run)
                print(
                    f"round {round_ + 1}/{rounds} K={k} {arm:>3}: {run['seconds']:.2f} s wall, "
                    f"{run['cpu']:.2f} s CPU, load {run['load']:.2f}",
                    file=sys.stderr,
                )
    return {str(k): summary(samples[k]) for k in ks}


def summary(arms: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    med = {
        arm: {key: statistics.median(r[key] for r in runs) for key in ("seconds", "cpu")}
        for arm, runs in arms.items()
    }
    on = arms["on"]
    return {
        "off": med["off"],
        "on": med["on"],
        "wall_ratio": med["on"]["seconds"] / med["off"]["seconds"],
        "cpu_ratio": med["on"]["cpu"] / med["off"]["cpu"],
        "switches_verified": statistics.median(r["switches_verified"] for r in on),
        "verify_seconds": statistics.median(r["verify_seconds"] for r in on),
        "runs": {arm: [r["seconds"] for r in runs] for arm, runs in arms.items()},
    }


def print_table(results: dict[str, Any]) -> None:
    print(
        f"{'K':>3} {'off s':>7} {'on s':>7} {'wall':>6} {'CPU off':>8} {'CPU on':>7} {'CPU':>6}"
        f" {'switches':>9} {'verify s':>9}"
    )
    for k, row in results.items():
        print(
            f"{k:>3} {row['off']['seconds']:7.2f} {row['on']['seconds']:7.2f} "
            f"{row['wall_ratio']:6.3f} {row['off']['cpu']:8.2f} {row['on']['cpu']:7.2f} "
            f"{row['cpu_ratio']:6.3f} {row['switches_verified']:9.0f} {row['verify_seconds']:9.3f}"
        )
    worst = max(row["wall_ratio"] for row in results.values())
    verdict = "within" if worst <= TARGET else "OVER"
    print(f"worst wall ratio {worst:.3f}: {verdict} the {TARGET:.2f} target")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ks", default="0,4")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="the small repository, 1 round")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "integrity.json")
    args = parser.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]
    rounds = 1 if args.quick else args.rounds
    root = Path(tempfile.mkdtemp(prefix="andgate-integrity-bench-"))
    try:
        results = measure(root, ks, rounds, args.jobs, args.quick)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print_table(results)
    document = {"machine": machine(), "rounds": rounds, "jobs": args.jobs, "results": results}
    args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
