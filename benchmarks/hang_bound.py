"""What a change that makes a test item loop forever costs a check (issue 37, item 3).

`python benchmarks/hang_bound.py [--rounds 1] [--out benchmarks/results.json] [--keep]`

The contract (section 4, "Hangs") bounds the whole check of a change that makes
one item hang at the clean check's time plus twice the item limit. This measures
it with the defaults, on the demo's sample project (`andgate.commands.sample`: two
oracle files, a property file, a frozen flake, two known-bad fixtures) plus one
function, `total`, with its oracle item after `test_mean` and a third fixture only
that item catches (so that a replay runs `test_mean`). Three heads, each by the
agent, each adding a test of `mean` (an untrusted item the discrimination report
covers):

- **clean**: `mean` gains a harmless branch for four numbers;
- **hang**: the branch loops forever (`while True: pass`): the oracle item
  `test_mean` (the mean of four numbers) hangs; the agent's test (two numbers) does not;
- **hang + agent's**: the agent also tests the mean of four numbers, so a second
  item hangs, in the untrusted class: the bound is per item, this shows what each
  further one costs.

Each check is `andgate check --base B --head H --today 2026-11-25 --artifacts DIR
--quiet` and nothing else (`--item-timeout` 60, `--jobs` the number of CPUs, the
discrimination report on; a cold killer cache), through `run.py`'s gate wrapper,
which records every pytest process. Per check: wall seconds, the verdict and its
reasons, and the processes that ran for at least the item limit less 10 %: where
a check waited out the limit. The rounds are interleaved. Standard library and
andgate; `--out` adds a `hang_bound` section (`--section`) to a results file and keeps
the rest.
To measure another andgate (the code before a change), put its sources first:
`PYTHONPATH=/tmp/snap/src python benchmarks/hang_bound.py`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import run as bench  # benchmarks/run.py: the gate wrapper, timing, the machine

from andgate.commands.sample import AGENT, BASE_FILES, build_sample
from andgate.process.requests import DEFAULT_ITEM_TIMEOUT

TODAY = "2026-11-25"
LIMIT = DEFAULT_ITEM_TIMEOUT  # the check runs with the defaults
WAITED = 0.9  # a process that ran this share of the limit or more waited it out
TOTAL = '\n\ndef total(xs):\n    """Sum of a sequence."""\n    return sum(xs)\n'
TEST_TOTAL = (
    "\n\ndef test_total():\n    from minilib.mathx import total\n\n    assert total([1, 2]) == 3\n"
)
AGENT_TEST = "from minilib import mean\n\n\ndef test_mean_pair():\n    assert mean([1, 3]) == 2\n"
AGENT_HANGS = "\n\ndef test_mean_four():\n    assert mean([2, 2, 2, 2]) == 2\n"
AFTER = "    xs = list(xs)\n"
BRANCHES = {
    "clean": "    if len(xs) == 4:\n        xs = xs[:]\n",
    "hang": "    if len(xs) == 4:\n        while True:\n            pass\n",
}
HEADS = {  # name: (branch, the agent's tests)
    "clean": ("clean", AGENT_TEST),
    "hang": ("hang", AGENT_TEST),
    "hang + agent's": ("hang", AGENT_TEST + AGENT_HANGS),
}


def build(root: Path) -> tuple[Path, str, dict[str, str]]:
    """The repository, its base and each head's commit."""
    files = dict(BASE_FILES)
    files["minilib/mathx.py"] += TOTAL
    files["tests/oracles/test_math_oracle.py"] += TEST_TOTAL
    repo, base = build_sample(root / "repo", files)
    edit = ("minilib/mathx.py", "    return sum(xs)\n", "    return sum(xs) + 1\n")
    repo.write({"tests/oracles/known_bad/kb_total_off_by_one.patch": repo.diff_of([edit])})
    base = repo.commit("known-bad kb_total_off_by_one (owner: alice)")
    heads = {}
    for name, (branch, tests) in HEADS.items():
        repo.run("checkout", "-q", "--detach", base)
        repo.edit("minilib/mathx.py", AFTER, AFTER + BRANCHES[branch])
        repo.write({"tests/test_mean_agent.py": tests})
        heads[name] = repo.commit(f"agent: {name}", who=AGENT)
    return repo.path, base, heads


def check(repo: Path, base: str, head: str, root: Path, name: str) -> dict[str, Any]:
    """One `andgate check` with the defaults, through the gate wrapper."""
    stem = f"{re.sub(r'[^a-z]+', '-', name)}-{time.monotonic_ns()}"
    out, artifacts = root / f"{stem}.gate.json", root / f"{stem}-artifacts"
    cache = Path(tempfile.mkdtemp(prefix="killers-", dir=root))
    argv = [sys.executable, "-c", bench.GATE_WRAPPER, str(out), "-", "check"]
    argv += ["--base", base, "--head", head, "--today", TODAY]
    argv += ["--artifacts", str(artifacts), "--quiet"]
    result = bench.timed(argv, repo, bench.gate_env(root, cache))
    verdict = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
    gate = json.loads(out.read_text(encoding="utf-8"))
    t0 = gate["t0"]
    processes = [
        {"label": e["name"], "start": round(e["start"] - t0, 1), "end": round(e["end"] - t0, 1)}
        for e in sorted(gate["events"], key=lambda e: e["start"])
        if e["kind"] == "pytest"
    ]
    waits = [p for p in processes if p["end"] - p["start"] >= WAITED * LIMIT]
    return {
        "head": name,
        "seconds": round(result.seconds, 2),
        "cpu_s": round(result.cpu, 2),
        "load": round(result.load, 2),
        "exit": result.proc.returncode,
        "verdict": verdict["verdict"],
        "reasons": [f"{r['code']}: {r['detail']}" for r in verdict["reasons"]],
        "processes": processes,
        "waits": waits,
    }


def summarize(samples: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    clean = statistics.median(s["seconds"] for s in samples["clean"])
    bound = clean + 2 * LIMIT
    rows = {}
    for name, runs in samples.items():
        seconds = statistics.median(s["seconds"] for s in runs)
        rows[name] = {
            "median_s": round(seconds, 2),
            "over_clean_s": round(seconds - clean, 2),
            "within_bound": seconds <= bound,
            "waits": [len(s["waits"]) for s in runs],
            "verdicts": sorted({s["verdict"] for s in runs}),
        }
    return {"item_limit_s": LIMIT, "clean_s": round(clean, 2), "bound_s": round(bound, 2), **rows}


def print_report(result: Mapping[str, Any]) -> None:
    summary = result["summary"]
    print(
        f"item limit {LIMIT:g} s; clean check {summary['clean_s']:.1f} s; "
        f"bound (clean + 2 x limit) {summary['bound_s']:.1f} s"
    )
    print(f"{'head':16s} {'median s':>9s} {'over clean':>11s} {'waits':>6s}  within bound")
    for name in HEADS:
        row = summary[name]
        waits = ",".join(str(w) for w in row["waits"])
        print(
            f"{name:16s} {row['median_s']:9.1f} {row['over_clean_s']:11.1f} {waits:>6s}  "
            f"{'yes' if row['within_bound'] else 'NO'}"
        )
    for sample in result["samples"]:
        print(f"\n{sample['head']}: {sample['seconds']:.1f} s, {sample['verdict']}")
        for reason in sample["reasons"]:
            print(f"  {reason[:150]}")
        for p in sample["waits"]:
            print(f"  waited: {p['label']} {p['start']:.1f} -> {p['end']:.1f} s")


def write_out(path: Path, result: dict[str, Any], section: str) -> None:
    """Add (or replace) one section; keep everything else already there."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data[section] = result
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="rounds of the three checks")
    parser.add_argument("--out", type=Path, default=None, help="results file to add to")
    parser.add_argument(
        "--section", default="hang_bound", help="its section in --out (default: hang_bound)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="andgate-hangs-"))
    started = time.monotonic()
    try:
        repo, base, heads = build(root)
        check(repo, base, heads["clean"], root, "warm-up")  # bytecode of andgate and pytest
        samples: dict[str, list[dict[str, Any]]] = {name: [] for name in HEADS}
        flat = []
        for round_ in range(args.rounds):
            for name, head in heads.items():
                print(f"round {round_ + 1}: {name}", file=sys.stderr, flush=True)
                sample = check(repo, base, head, root, name)
                samples[name].append(sample)
                flat.append(sample)
        result: dict[str, Any] = {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(["python", "benchmarks/hang_bound.py", *sys.argv[1:]]),
            "machine": bench.machine(),
            "cpus": os.cpu_count(),
            "summary": summarize(samples),
            "samples": flat,
            "total_s": round(time.monotonic() - started, 1),
        }
        print_report(result)
        if args.out is not None:
            write_out(args.out, result, args.section)
        return 0
    finally:
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
