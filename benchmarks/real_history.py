"""What `andgate check` costs on a real library's own history (issue 29).

`python benchmarks/real_history.py SOURCE [--commits 8] [--rounds 1] [--harvest-limit 100]`

SOURCE is a path or URL of a git repository with its history (pytoolz/toolz by
default, its settings in `PROFILES`); it is cloned at run time into a temporary
folder and nothing of it is committed here. Then:

1. **Fix commits replayed as agent changes.** The newest commits that change the
   library's code and add or change a test function (`andgate.commands.harvest.fixed_tests`),
   each replayed on today's code: base = the library's HEAD with the whole commit
   (code and tests) reverted, + a trust overlay (an owner's commit: `andgate init`,
   the library's test files as oracles except the ones the commit touches, which stay
   untrusted, no property class, no known-bad fixture); head = the commit again (the
   revert reverted), by another author. A commit whose revert no longer applies, or
   whose suite fails here, is skipped. Interleaved per commit: `pytest -q` in a
   clean clone of head (after one warm-up run), `andgate check` with the defaults,
   `andgate check --no-discrimination`. A commit the gate does not allow (old code
   on this Python, a trust-root change) is reported and replaced by the next one.
2. **Harvest throughput.** On HEAD with the overlay (every test file an oracle):
   `andgate known-bad harvest --limit N --jobs 2`, cold (an empty cache folder) and
   then warm (the same folder).

Every command's wall time, the 1-minute load average and a 10-million-step Python
loop's time beside it (the machine's load: 0.42 s on a quiet day), the checks' stages
(the wrapper of `run.py`: each pytest process and git call), and the discrimination
report each check made. Prints a table; `--out` adds a `real_history` section and
rows to a results file without touching what is in it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import run as bench  # benchmarks/run.py: the gate wrapper, timing, stages
from sample_repo import base_env

from andgate.commands.harvest import FixCommit, fixed_tests
from andgate.git import Git

TODAY = "2026-11-25"
OWNER = ("alice", "alice@example.com")
AGENT = ("agent", "agent@example.com")
DEFAULT_SOURCE = "https://github.com/pytoolz/toolz"
TARGET_DEFAULTS = 1.3  # median check / pytest -q, with the discrimination report
TARGET_NO_REPORT = 1.15  # median, --no-discrimination
TARGET_HARVEST = (100, 300.0)  # commits, seconds on 2 cores


@dataclass(frozen=True)
class Profile:
    """Where a library keeps its code and tests, and what its suite needs here."""

    package: str  # production code: Python files under this folder, outside tests
    tests: str  # the test folder (oracle globs are its files)
    exclude: tuple[str, ...] = ()  # test files never made oracles
    freeze: tuple[str, ...] = ()  # node ids frozen by the overlay (need an install)


PROFILES = {
    "toolz": Profile(
        package="toolz",
        tests="toolz/tests",
        exclude=("toolz/tests/test_package.py",),
        freeze=("toolz/tests/test_package.py::test_has_version",),
    ),
}


def load_loop() -> float:
    """Seconds for a 10-million-step Python loop in a fresh interpreter: the load."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "for _ in range(10_000_000): pass"], check=True, timeout=300
    )
    return time.perf_counter() - started


def git(repo: Path, *args: str, who: tuple[str, str] | None = None) -> str:
    env = {**base_env(), "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    if who is not None:
        name, email = who
        env |= {
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_AUTHOR_DATE": "2026-11-24T10:00:00+00:00",
            "GIT_COMMITTER_DATE": "2026-11-24T10:00:00+00:00",
        }
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, timeout=600, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode("utf-8", "replace")


# -- choosing the fix commits --------------------------------------------------------------


def candidates(repo: Path, profile: Profile, limit: int) -> list[FixCommit]:
    """Non-merge commits, newest first, that change the library's code and add or
    change a test function in its test folder."""
    found = []
    log = git(repo, "log", "--no-merges", "--format=%H%x1f%P%x1f%s", "-n", "2000")
    handle = Git(repo)
    for line in log.splitlines():
        sha, parents, subject = line.split("\x1f", 2)
        if not parents or " " in parents:
            continue
        changed = git(repo, "diff-tree", "-r", "--no-commit-id", "--name-only", sha).split()
        tests = tuple(p for p in changed if p.startswith(profile.tests + "/") and _test_file(p))
        code = tuple(
            p
            for p in changed
            if p.startswith(profile.package + "/") and p.endswith(".py") and p not in tests
            and "/tests/" not in p
        )  # fmt: skip
        if not code or not tests:
            continue
        fix = FixCommit(sha, subject, code, tests)
        if any(fixed_tests(handle, fix).values()):
            found.append(fix)
        if len(found) >= limit:
            break
    return found


def _test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test_") and name.endswith(".py")


# -- the overlay ---------------------------------------------------------------------------


def overlay(repo: Path, profile: Profile, untrusted: Sequence[str]) -> None:
    """The owner's trust overlay on the checked-out commit: `andgate init`, then the
    test files as oracles except `untrusted` and the profile's exclusions."""
    subprocess.run(
        [sys.executable, "-m", "andgate", "init", "--repo", str(repo)],
        check=True,
        capture_output=True,
        timeout=300,
        env=base_env(),
    )
    manifest = repo / "tests/trust_manifest.yaml"
    text = manifest.read_text(encoding="utf-8")
    globs = [f"{profile.tests}/**/*.py"] + [f"!{p}" for p in (*profile.exclude, *untrusted)]
    # The first `globs:` is the oracle class's, whatever init proposed there.
    text = re.sub(r"(?m)^    globs: \[.*\]$", f"    globs: {json.dumps(globs)}", text, count=1)
    for old, new in (
        ("require_property_class: true", "require_property_class: false"),
        ("oracle_must_fail_known_bad: true", "oracle_must_fail_known_bad: false"),
        ("owners: []", f"owners: [{OWNER[0]}]"),
    ):
        text = text.replace(old, new)
    manifest.write_text(text, encoding="utf-8")
    if profile.freeze:
        freeze = repo / "tests/flakes/freeze.yaml"
        entries = "".join(
            f"  - id: {node}\n    reason: needs an installed distribution\n"
            f"    first_seen: 2026-11-20\n    expires: 2026-12-10\n    owner: {OWNER[0]}\n"
            for node in profile.freeze
        )
        body = freeze.read_text(encoding="utf-8").replace("freezes: []\n", "freezes:\n")
        freeze.write_text(body + entries, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "trust overlay (owner)", who=OWNER)


@dataclass
class Pair:
    fix: FixCommit
    base: str
    head: str


def make_pair(repo: Path, profile: Profile, fix: FixCommit, upstream: str) -> Pair | None:
    """The fix replayed on today's code: base = upstream HEAD with the whole commit
    (code and tests) reverted, + the overlay; head = the fix again, by the agent.
    The code is the library's current code (an old commit's parent often no longer
    runs on this Python); None when the revert does not apply cleanly."""
    git(repo, "checkout", "-q", "--detach", upstream)
    try:
        git(repo, "revert", "--no-edit", fix.sha, who=OWNER)
    except RuntimeError:
        with contextlib.suppress(RuntimeError):
            git(repo, "revert", "--abort")
        git(repo, "reset", "-q", "--hard")
        return None
    reverted = git(repo, "rev-parse", "HEAD").strip()
    overlay(repo, profile, fix.tests)
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "revert", "--no-edit", reverted, who=AGENT)  # the fix, as the agent's change
    head = git(repo, "rev-parse", "HEAD").strip()
    return Pair(fix, base, head)


# -- measuring -----------------------------------------------------------------------------


@dataclass
class Sample:
    seconds: float
    load: float
    loop_s: float
    extra: dict[str, Any] = field(default_factory=dict)


def plain_pytest(tree: Path, *, fresh: bool = False) -> Sample:
    """`pytest -q` in the tree; `fresh`: first without its bytecode caches, as on CI's
    fresh clone (pytest then rewrites and compiles every test module, as it does in
    each worktree a check makes)."""
    loop = load_loop()
    if fresh:
        for cache in tree.rglob("__pycache__"):
            shutil.rmtree(cache)
    result = bench.timed(bench.pytest_argv(), tree, base_env())
    line = bench.summary_line(result.proc)
    return Sample(result.seconds, result.load, loop, {"summary": line})


def check(repo: Path, pair: Pair, root: Path, jobs: int, extra: Sequence[str], tag: str) -> Sample:
    loop = load_loop()
    artifacts = root / f"artifacts-{pair.fix.sha[:10]}-{tag}"
    shutil.rmtree(artifacts, ignore_errors=True)
    out = artifacts.with_name(artifacts.name + ".gate.json")
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=root))
    argv = [sys.executable, "-c", bench.GATE_WRAPPER, str(out), "-", "check"]
    argv += ["--base", pair.base, "--head", pair.head, "--jobs", str(jobs), "--today", TODAY]
    argv += ["--artifacts", str(artifacts), "--quiet", *extra]
    env = bench.gate_env(root, cache)
    result = bench.timed(argv, repo, env)
    verdict = bench._read_json(artifacts / "verdict.json")
    gate = bench._read_json(out)
    disc = verdict.get("discrimination") or {}
    return Sample(
        result.seconds,
        result.load,
        loop,
        {
            "verdict": verdict.get("verdict"),
            "reasons": [f"{r['code']}: {r['detail'][:200]}" for r in verdict.get("reasons", [])],
            "counts": verdict.get("counts", {}),
            "stages_s": bench.stages(gate),
            "discrimination": {
                "items": len(disc.get("items", [])),
                "discriminating": sum(1 for i in disc.get("items", []) if i["discriminates"]),
                "broken_versions": len(disc.get("broken_versions", [])),
                "not_tried": len(disc.get("not_tried", [])),
                "budget_s": disc.get("budget_seconds"),
            }
            if disc
            else None,
        },
    )


def measure_pair(repo: Path, pair: Pair, root: Path, jobs: int, rounds: int) -> dict[str, Any]:
    tree = root / f"tree-{pair.fix.sha[:10]}"
    shutil.rmtree(tree, ignore_errors=True)
    git(root, "clone", "-q", "--no-checkout", str(repo), str(tree))
    git(tree, "checkout", "-q", pair.head)
    warm = plain_pytest(tree)  # warm-up: bytecode of the tree, as a user's checkout has
    samples: dict[str, list[Sample]] = {
        "pytest": [],
        "pytest_fresh": [],
        "check": [],
        "no_report": [],
    }
    if warm.extra["summary"].count("failed") > 1 or "error" in warm.extra["summary"]:
        # More than the one test that needs an installed distribution: the gate would
        # block, and the commit says nothing about cost. Measure nothing.
        return {
            "pytest": [vars(warm)],
            "pytest_fresh": [],
            "check": [],
            "no_report": [],
            "suite_fails": True,
        }
    for _ in range(rounds):
        samples["pytest_fresh"].append(plain_pytest(tree, fresh=True))
        samples["pytest"].append(plain_pytest(tree))  # warm again: the headline baseline
        samples["check"].append(check(repo, pair, root, jobs, (), "defaults"))
        samples["no_report"].append(
            check(repo, pair, root, jobs, ("--no-discrimination",), "no-report")
        )
    shutil.rmtree(tree, ignore_errors=True)
    return {k: [vars(s) for s in v] for k, v in samples.items()}


def harvest(repo: Path, profile: Profile, root: Path, limit: int, jobs: int) -> dict[str, Any]:
    """`known-bad harvest --limit N` on HEAD with every test file an oracle, cold then warm."""
    git(repo, "checkout", "-q", "--detach", "origin/HEAD")
    overlay(repo, profile, ())
    cache = Path(tempfile.mkdtemp(prefix="harvest-cache-", dir=root))
    out: dict[str, Any] = {}
    for tag in ("cold", "warm"):
        loop = load_loop()
        folder = root / f"harvest-{tag}"
        argv = [sys.executable, "-m", "andgate", "known-bad", "harvest", "--limit", str(limit)]
        argv += ["--jobs", str(jobs), "--budget", "1200", "--out", str(folder)]
        result = bench.timed(argv, repo, bench.gate_env(root, cache))
        report = bench._read_json(folder / "report.json")
        out[tag] = {
            "seconds": result.seconds,
            "load": result.load,
            "loop_s": loop,
            "exit": result.proc.returncode,
            "commits": report.get("commits"),
            "walked": report.get("commits_scanned"),
            "counts": report.get("counts"),
            "remembered": sum(1 for r in report.get("results", []) if r.get("remembered")),
            "error": result.proc.stderr.decode("utf-8", "replace")[-500:]
            if result.proc.returncode
            else "",
        }
    return out


# -- the report ----------------------------------------------------------------------------


def _med(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """Per commit the ratio of each check to the pytest of its round (warm; `_fresh`:
    to the fresh-clone pytest of its round); medians and worst."""
    ratios: dict[str, list[float]] = {
        "check": [],
        "no_report": [],
        "check_fresh": [],
        "no_report_fresh": [],
    }
    for m in measured:
        for kind in ratios:
            check_kind = kind.removesuffix("_fresh")
            baseline = m["samples"].get("pytest_fresh" if kind.endswith("_fresh") else "pytest")
            if not baseline:
                continue  # measured before the fresh baseline existed
            per_round = [
                c["seconds"] / p["seconds"]
                for c, p in zip(m["samples"][check_kind], baseline, strict=True)
            ]
            m[f"ratio_{kind}"] = _med(per_round)
            ratios[kind].append(m[f"ratio_{kind}"])
    return {
        kind: {"median": _med(values) if values else None, "worst": max(values) if values else None}
        for kind, values in ratios.items()
    }


def median_stages(measured: list[dict[str, Any]], kind: str) -> dict[str, float]:
    stages = [s["extra"]["stages_s"] for m in measured for s in m["samples"][kind]]
    keys = sorted({k for s in stages for k in s})
    return {k: round(_med([s.get(k, 0.0) for s in stages]), 3) for k in keys}


def rows_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for results.json's table (run.py's `--reprint` prints them too)."""
    name = result["library"]
    measured, summary = result["commits"], result["summary"]
    pytest_s = [s["seconds"] for m in measured for s in m["samples"]["pytest"]]
    loads = [s["load"] for m in measured for s in m["samples"]["pytest"]]
    rows = [
        {
            "config": f"{name} history: pytest -q ({len(measured)} fix commits)",
            "suite": f"history {name}",
            "figure": "real-history",
            "median_s": _med(pytest_s),
            "samples_s": pytest_s,
            "load": _med(loads),
        }
    ]
    for kind, label, target in (
        ("check", "check --jobs 2 (defaults)", TARGET_DEFAULTS),
        ("no_report", "check --jobs 2 --no-discrimination", TARGET_NO_REPORT),
    ):
        seconds = [s["seconds"] for m in measured for s in m["samples"][kind]]
        ratio = summary[kind]["median"]
        rows.append(
            {
                "config": f"{name} history: {label}",
                "suite": f"history {name}",
                "figure": "real-history",
                "median_s": _med(seconds),
                "samples_s": seconds,
                "ratio": ratio,
                "worst_ratio": summary[kind]["worst"],
                "load": _med([s["load"] for m in measured for s in m["samples"][kind]]),
                "target": f"median x pytest <= {target}",
                "ok": ratio <= target,
                "stages_s": median_stages(measured, kind),
            }
        )
    fresh_s = [s["seconds"] for m in measured for s in m["samples"].get("pytest_fresh", [])]
    if fresh_s and summary.get("check_fresh", {}).get("median") is not None:
        rows.append(
            {
                "config": f"{name} history: pytest -q on a fresh clone (no bytecode caches)",
                "suite": f"history {name}",
                "figure": "real-history",
                "median_s": _med(fresh_s),
                "samples_s": fresh_s,
                "load": _med([s["load"] for m in measured for s in m["samples"]["pytest_fresh"]]),
                "note": (
                    f"check x this: defaults {summary['check_fresh']['median']:.2f} "
                    f"(worst {summary['check_fresh']['worst']:.2f}), --no-discrimination "
                    f"{summary['no_report_fresh']['median']:.2f} "
                    f"(worst {summary['no_report_fresh']['worst']:.2f}); no target"
                ),
            }
        )
    for tag in ("cold", "warm"):
        h = result.get("harvest", {}).get(tag)
        if not h:
            continue
        commits, limit_s = TARGET_HARVEST
        rows.append(
            {
                "config": f"{name} history: known-bad harvest --limit {commits} ({tag} cache)",
                "suite": f"history {name}",
                "figure": "real-history",
                "median_s": h["seconds"],
                "items": h["commits"],
                "load": h["load"],
                "target": f">= {commits} commits in <= {limit_s:.0f}s",
                "ok": (h["commits"] or 0) >= commits and h["seconds"] <= limit_s,
            }
        )
    return rows


def print_report(result: dict[str, Any]) -> None:
    print(f"\n{result['library']} at {result['head'][:10]}: {len(result['commits'])} fix commits")
    print("commit      pytest s  check s  x      no-report s  x      report (items/shown/tried/"
          "not tried, budget)  loop s  load")  # fmt: skip
    for m in result["commits"]:
        p, c, n = (m["samples"][k][0] for k in ("pytest", "check", "no_report"))
        d = c["extra"]["discrimination"] or {}
        report = (
            f"{d.get('items', 0)}/{d.get('discriminating', 0)}/{d.get('broken_versions', 0)}/"
            f"{d.get('not_tried', 0)}, {d.get('budget_s') or 0:.1f}s"
        )
        print(
            f"{m['sha'][:10]}  {p['seconds']:8.2f}  {c['seconds']:7.2f}  {m['ratio_check']:5.2f}  "
            f"{n['seconds']:11.2f}  {m['ratio_no_report']:5.2f}  {report:38}  "
            f"{c['loop_s']:6.2f}  {c['load']:4.1f}"
        )
    s = result["summary"]
    print(
        f"median / worst check x pytest: defaults {s['check']['median']:.2f} / "
        f"{s['check']['worst']:.2f}, --no-discrimination {s['no_report']['median']:.2f} / "
        f"{s['no_report']['worst']:.2f}"
    )
    if s.get("check_fresh", {}).get("median") is not None:
        print(
            f"against pytest -q on a fresh clone: defaults {s['check_fresh']['median']:.2f} / "
            f"{s['check_fresh']['worst']:.2f}, --no-discrimination "
            f"{s['no_report_fresh']['median']:.2f} / {s['no_report_fresh']['worst']:.2f}"
        )
    for tag, h in result.get("harvest", {}).items():
        remembered = f", {h['remembered']} remembered" if h.get("remembered") else ""
        print(
            f"harvest ({tag}): {h['commits']} commits ({h['walked']} walked) in "
            f"{h['seconds']:.1f}s, loop {h['loop_s']:.2f}s, load {h['load']:.1f}: "
            f"{h['counts']}{remembered}"
        )
    for r in rows_of(result):
        if "stages_s" in r:
            st = r["stages_s"]
            parts = [
                f"{k.split(':')[0]} {st[k]:.1f}s"
                for k in st
                if k.endswith(": summed s") and st[k] > 0.05
            ]
            print(f"  {r['config']}: gate total {st.get('gate total s', 0):.1f}s; "
                  + ", ".join(parts)
                  + f"; git {st.get('git summed s', 0):.1f}s, gate alone "
                  f"{st.get('gate outside any subprocess s', 0):.1f}s")  # fmt: skip


def write_out(path: Path, result: dict[str, Any]) -> None:
    """Add the rows and a `real_history` section; keep everything already there."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"rows": []}
    data.setdefault("rows", [])
    data["rows"] = [r for r in data["rows"] if r.get("suite") != f"history {result['library']}"]
    data["rows"] += rows_of(result)
    data.setdefault("real_history", {})[result["library"]] = result
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", nargs="?", default=DEFAULT_SOURCE, help="git path or URL")
    parser.add_argument("--library", default="toolz", choices=sorted(PROFILES))
    parser.add_argument("--commits", type=int, default=8, help="fix commits to replay")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per commit")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--harvest-limit", type=int, default=100, help="0: no harvest")
    parser.add_argument("--out", type=Path, default=None, help="results file to add to")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    profile = PROFILES[args.library]
    root = Path(tempfile.mkdtemp(prefix="andgate-history-"))
    started = time.monotonic()
    try:
        repo = root / "clone"
        git(root, "clone", "-q", args.source, str(repo))
        head = git(repo, "rev-parse", "origin/HEAD").strip()
        measured, refused = [], []
        for fix in candidates(repo, profile, args.commits * 3):
            if len(measured) >= args.commits:
                break
            pair = make_pair(repo, profile, fix, head)
            print(f"{fix.sha[:10]} {fix.subject[:60]}", file=sys.stderr, flush=True)
            if pair is None:
                print("  its revert does not apply to HEAD, skipped", file=sys.stderr)
                continue
            samples = measure_pair(repo, pair, root, args.jobs, args.rounds)
            verdicts = {s["extra"]["verdict"] for k in ("check", "no_report") for s in samples[k]}
            entry = {"sha": fix.sha, "subject": fix.subject, "samples": samples}
            if verdicts != {"allow"}:
                entry["reasons"] = (
                    samples["check"][0]["extra"]["reasons"]
                    if samples["check"]
                    else [f"pytest -q: {samples['pytest'][0]['extra']['summary']}"]
                )
                refused.append(entry)
                print(f"  not allowed, skipped: {entry['reasons'][:2]}", file=sys.stderr)
                continue
            measured.append(entry)
        result: dict[str, Any] = {
            "library": args.library,
            "source": args.source,
            "head": head,
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(["python", "benchmarks/real_history.py", *sys.argv[1:]]),
            "machine": bench.machine(),
            "commits": measured,
            "not_allowed": [{k: e[k] for k in ("sha", "subject", "reasons")} for e in refused],
        }
        result["summary"] = summarize(measured)
        if args.harvest_limit:
            result["harvest"] = harvest(repo, profile, root, args.harvest_limit, args.jobs)
        result["total_s"] = round(time.monotonic() - started, 1)
        print_report(result)
        if args.out is not None:
            write_out(args.out, result)
        return 0
    finally:
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
