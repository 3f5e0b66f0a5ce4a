"""Where a check's fixed cost goes: the check's own timeline (`timings.json`, what `andgate
check --profile` prints) beside plain `pytest -q` on the same tree, interleaved.

    python benchmarks/overhead.py                     # the generated repository, about a 1 s suite
    python benchmarks/overhead.py --repo R --base B --head H [--rounds 5] [--out results.json]

Each round runs `pytest -q` in a clean clone of head (warm: after one warm-up run) and
then `andgate check --jobs 2` with the defaults and an empty killer cache; the check's
`timings.json` says where its wall time went. The table groups the steps: the process
start-up (Python and andgate), the gate's steps before the first test runs, each test
phase (its pytest processes run `--jobs` at a time, so a phase is shorter than the sum of
its processes), what follows the phases (worktrees removed, inventory, verdict) and the
artifacts. Medians over the rounds; the ratio is each median over plain pytest's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sample_repo  # noqa: E402  (benchmarks/ is not a package)

TIMEOUT = 1800
# About a 1 s plain pytest run on a quiet day: the size where the fixed cost shows.
SMALL = sample_repo.Sizes(
    oracle_files=4,
    oracle_per_file=40,
    property_files=1,
    property_per_file=2,
    seeds=5,
    unit_files=4,
    unit_functions=5,
    unit_cases=10,
    flakes=1,
)
PHASES = ("oracle phase", "property phase", "untrusted phase")
# Outside the check's timeline: Python starting, andgate's modules loading, the
# artifacts written and the process ending.
START_UP = "start-up and exit (Python, andgate loading, artifacts)"


def wall(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> tuple[float, int]:
    started = time.perf_counter()
    proc = subprocess.run(
        list(argv), cwd=cwd, env=dict(env), capture_output=True, timeout=TIMEOUT, check=False
    )
    return time.perf_counter() - started, proc.returncode


def breakdown(timings: Mapping[str, Any], total: float) -> dict[str, float]:
    """The check's wall time in consecutive groups that add up to `total`."""
    steps = timings["steps"]
    phases = [s for s in steps if s["name"] in PHASES]
    first = min((s["started_s"] for s in phases), default=timings["seconds"])
    last = max((s["started_s"] + s["seconds"] for s in phases), default=first)
    groups = {START_UP: 0.0, "before the tests": first}
    for phase in phases:
        groups[phase["name"]] = phase["seconds"]
    between = (last - first) - sum(p["seconds"] for p in phases)
    groups["between the phases (waits, report)"] = max(between, 0.0)
    groups["after the phases (worktrees removed, verdict)"] = timings["seconds"] - last
    groups[START_UP] = max(total - timings["seconds"], 0.0)
    return groups


def processes(timings: Mapping[str, Any]) -> dict[str, float]:
    """The pytest processes and worktree preparations, by step name."""
    return {
        s["name"]: s["seconds"] for s in timings["steps"] if s["kind"] in ("pytest", "worktrees")
    }


def measure(repo: Path, base: str, head: str, rounds: int, root: Path) -> dict[str, Any]:
    tree = root / "tree"
    subprocess.run(["git", "clone", "-q", str(repo), str(tree)], check=True, timeout=TIMEOUT)
    subprocess.run(["git", "-C", str(tree), "checkout", "-q", head], check=True, timeout=60)
    env = {**os.environ, "XDG_CACHE_HOME": str(root / "xdg")}
    pytest_argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    wall(pytest_argv, tree, env)  # warm-up: bytecode written, as on a developer's machine
    plain: list[float] = []
    checks: list[float] = []
    groups: list[dict[str, float]] = []
    runs: list[dict[str, float]] = []
    for n in range(rounds):
        plain.append(wall(pytest_argv, tree, env)[0])
        artifacts = root / f"artifacts-{n}"
        cache = tempfile.mkdtemp(prefix="killers-", dir=root)
        argv = ["andgate", "check", "--base", base, "--head", head, "--jobs", "2", "--quiet"]
        seconds, code = wall(
            [*argv, "--artifacts", str(artifacts)], repo, {**env, "ANDGATE_CACHE_DIR": cache}
        )
        if code not in (0, 1):
            raise SystemExit(f"andgate check exited {code}: see {artifacts}")
        timings = json.loads((artifacts / "timings.json").read_text(encoding="utf-8"))
        checks.append(seconds)
        groups.append(breakdown(timings, seconds))
        runs.append(processes(timings))
    plain_median = statistics.median(plain)
    return {
        "rounds": rounds,
        "pytest_q_s": round(plain_median, 3),
        "check_s": round(statistics.median(checks), 3),
        "ratio": round(statistics.median(checks) / plain_median, 2),
        "groups_s": _medians(groups),
        "processes_s": _medians(runs),
        "load": round(os.getloadavg()[0], 1),
    }


def _medians(samples: Sequence[Mapping[str, float]]) -> dict[str, float]:
    keys = list(dict.fromkeys(k for s in samples for k in s))
    return {k: round(statistics.median(s.get(k, 0.0) for s in samples), 3) for k in keys}


def print_report(result: Mapping[str, Any]) -> None:
    plain = result["pytest_q_s"]
    print(f"pytest -q: {plain:.2f} s; check: {result['check_s']:.2f} s ({result['ratio']:.2f}x)")
    print(f"{'group':<50} {'median s':>9} {'x pytest -q':>12}")
    for name, seconds in result["groups_s"].items():
        print(f"{name:<50} {seconds:>9.2f} {seconds / plain:>12.2f}")
    print("\npytest processes and worktrees (overlapping):")
    for name, seconds in result["processes_s"].items():
        print(f"  {name:<48} {seconds:>9.2f}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, help="a repository that adopted andgate")
    parser.add_argument("--base", help="the change's base (with --repo)")
    parser.add_argument("--head", help="the change's head (with --repo)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="add an `overhead` section to this results file")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="andgate-overhead-") as scratch:
        root = Path(scratch)
        if args.repo is None:
            built = sample_repo.build_repo(root / "repo", SMALL, ks=(1,))
            repo, (base, head) = built.path, built.pairs[1]
            name = "generated repository, one known-bad fixture"
        else:
            repo, base, head, name = args.repo.resolve(), args.base, args.head, args.repo.name
        result = {"workload": name, **measure(repo, base, head, args.rounds, root)}
    print_report(result)
    if args.out is not None:
        data = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
        data.setdefault("overhead", {})[name] = result
        args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
