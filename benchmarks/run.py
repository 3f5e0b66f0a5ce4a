"""How much does `andgate check` cost next to the `pytest -q` (or `pytest -n 2`) a user runs?

Two suites, measured in one interleaved run (the machine's other load shifts every
command of a round alike, so ratios within a round hold better than absolute times):

1. **The generated repository** (`sample_repo.py`, built from the file tree
   `benchmarks/sample/`): ~1,900 items (300 oracle, 100 property, 1,500 untrusted, 10
   frozen flakes) and K = 0, 4, 16 known-bad fixtures. Each round runs `pytest -q` (warm
   and fresh-tree bytecode caches), `pytest -n 2`, and per K `andgate check --jobs 2`
   with a cold killer cache (an empty cache folder) and then warm (the folder the cold
   run filled).
2. **A real large suite** (`packaging_suite.py`): packaging 26.4's own tests, 64,207
   items, as the oracle class, with two known-bad fixtures that put real bugs back.
   Each round: `pytest -q`, `andgate check` (cold cache), `pytest -n 2`. `--no-real`
   skips it (`--quick` does too).

Every check runs through a small wrapper that records the gate process's own peak RSS
(`getrusage(RUSAGE_SELF)` and `/proc/self/status` VmHWM: not its pytest children),
how long each pytest process and git call took, and the time the gate spends in its
own result handling (results files, inventory, JUnit, artifacts), by wrapping those
functions at run time (andgate itself is not changed). A scaled copy of the generated
repository (`--scale 4`) adds a third size for the per-item cost of that gate-side
work. `--profile` runs the worst configuration once more with a probe plugin in every
pytest process (phase stamps), and again with `--no-discrimination`; `--cprofile`
also writes a cProfile of the gate process of the real-suite check (all threads).

It prints one table and writes `benchmarks/results.json`. Standard library only (plus
andgate, pytest, pytest-xdist, and packaging's test dependencies for the real suite).
Nothing here asserts timings in the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.util
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import packaging_suite
from sample_repo import FULL, OWNER, QUICK, RULES, BenchRepo, Sizes, base_env, build_repo, git
from sample_repo import git_env as _git_env

HERE = Path(__file__).resolve().parent
TODAY = "2026-11-25"
TIMEOUT = 3600.0
# Issue 14's targets (2 cores).
K_TARGETS = {0: 1.10, 4: 1.25, 16: 1.5}  # check / pytest -q, generated repo, --jobs 2
XDIST_TARGET = 1.3  # check / pytest -n 2
REAL_TARGET = 1.15  # check (cold cache) / pytest -q, packaging's suite
RSS_LIMIT_MIB = 200.0  # the gate process at the 64k-item suite
LINEAR_SLACK = 1.5  # per-item gate-side cost at the larger size <= this x the smaller's


# -- the gate wrapper ----------------------------------------------------------------------

# What the gate does with results, timed inside the gate process (module:attribute).
SECTIONS = (
    "andgate.process.results:read_results",
    "andgate.process.results:merge_results",
    "andgate.process.results:class_facts",
    "andgate.report.artifacts:merge_junit",
    "andgate.check.inventory.items:build_inventory",
    "andgate.check.inventory.items:counts",
    "andgate.check.inventory.items:ineffective_freezes",
    "andgate.report.junit:annotate",
    "andgate.check.state:Captured.collect",
    "andgate.check.oracle.phase:oracle_facts",
    "andgate.trust.authorship:sort_changes",
    "andgate.report.artifacts:write_artifacts",
    "andgate.report.artifacts:VerdictJson.render",
    "andgate.report.artifacts:InventoryJson.render",
    "andgate.report.artifacts:SeedsJson.render",
    "andgate.report.artifacts:KnownBadJson.render",
    "andgate.report.summary:SummaryMarkdown.render",
    "andgate.report.artifacts:HtmlPage.render",
)
# The figures reported per item: trust_inventory.json (built and rendered), the JUnit
# files (shards merged, attempts and frozen marks added), and everything else.
SECTION_GROUPS = {
    "inventory": (
        "andgate.check.inventory.items:build_inventory",
        "andgate.check.inventory.items:counts",
        "andgate.check.inventory.items:ineffective_freezes",
        "andgate.report.artifacts:InventoryJson.render",
    ),
    "junit": ("andgate.report.artifacts:merge_junit", "andgate.report.junit:annotate"),
    "results_files": ("andgate.process.results:read_results",),
    "artifacts_total": ("andgate.report.artifacts:write_artifacts",),
}

GATE_WRAPPER = r"""
import functools, importlib, json, resource, sys, threading, time
T0 = time.time()
out_path, cprofile_path = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
sys.argv[0] = "andgate"
lock = threading.Lock()
sections, events, missing = {}, [], []

def record(kind, name, t0, extra=None):
    with lock:
        events.append({"kind": kind, "name": name, "start": t0, "end": time.time(),
                       "thread": threading.current_thread().name, **(extra or {})})

def size_of(result):
    items = getattr(result, "items", None)
    if isinstance(items, tuple):
        return len(items)
    return len(result) if isinstance(result, (list, tuple, bytes)) else 0

def timed(name, fn):
    # calls, wall seconds, CPU seconds of the calling thread, items (or bytes) returned
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0, cpu0, wall = time.perf_counter(), time.thread_time(), time.time()
        result = None
        try:
            result = fn(*args, **kwargs)
            return result
        finally:
            spent, cpu = time.perf_counter() - t0, time.thread_time() - cpu0
            with lock:
                entry = sections.setdefault(name, [0, 0.0, 0.0, 0])
                entry[0] += 1
                entry[1] += spent
                entry[2] += cpu
                entry[3] += size_of(result)
            record("section", name, wall)
    return wrapper

rss = []  # (time, resident KiB) every 0.2 s: when the peak happens
def sample_rss():
    while True:
        try:
            with open("/proc/self/statm") as fh:
                rss.append((time.time(), int(fh.read().split()[1]) * PAGE_KIB))
        except OSError:
            return
        time.sleep(0.2)
import os
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
threading.Thread(target=sample_rss, daemon=True, name="rss-sampler").start()

def patch(spec, wrap):
    module_name, _, attr = spec.partition(":")
    try:
        owner = importlib.import_module(module_name)
    except ImportError:
        missing.append(spec)
        return
    *path, last = attr.split(".")
    for part in path:
        owner = getattr(owner, part, None)
    if owner is None or not hasattr(owner, last):
        missing.append(spec)
        return
    setattr(owner, last, wrap(spec, getattr(owner, last)))

def git_wrap(spec, run):
    def timed_git(self, *args, **kw):
        t0 = time.time()
        try:
            return run(self, *args, **kw)
        finally:
            name = args[0] + (" " + args[1] if args[0] == "worktree" and len(args) > 1 else "")
            record("git", name, t0)
    return timed_git

def session_wrap(spec, run):
    def timed_session(argv, cwd, log, *args, **kw):
        t0 = time.time()
        try:
            return run(argv, cwd, log, *args, **kw)
        finally:
            record("pytest", log.stem, t0)
    return timed_session

patch("andgate.git:Git.run", git_wrap)
patch("andgate.process.run:_run_session", session_wrap)  # Popen and fork-server runs alike
for spec in @SECTIONS@:
    patch(spec, timed)
T_IMPORT = time.time()

profiles = []
if cprofile_path != "-":
    import cProfile, pstats
    thread_run = threading.Thread.run
    def profiled_run(self):
        prof = cProfile.Profile()
        with lock:
            profiles.append(prof)
        prof.enable()
        try:
            thread_run(self)
        finally:
            prof.disable()
    threading.Thread.run = profiled_run
    main_prof = cProfile.Profile()
    profiles.append(main_prof)
    main_prof.enable()

from andgate.commands.cli import main
code = 2
try:
    code = main(sys.argv[1:])
finally:
    T_END = time.time()
    if profiles:
        main_prof.disable()
        stats = pstats.Stats(profiles[0])
        for prof in profiles[1:]:
            try:
                stats.add(prof)
            except TypeError:
                pass  # a thread that never ran Python code under the profiler
        stats.dump_stats(cprofile_path)
    hwm = 0
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    except OSError:
        pass
    with open(out_path, "w") as fh:
        json.dump({
            "t0": T0, "t_import": T_IMPORT, "t_end": T_END,
            "rss_self_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "rss_children_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
            "vmhwm_kib": hwm,
            "sections": sections, "missing": missing, "events": events, "rss": rss,
        }, fh)
raise SystemExit(code)
""".replace("@SECTIONS@", repr(SECTIONS))


# -- measured commands ---------------------------------------------------------------------


@dataclass(frozen=True)
class Timed:
    """Wall seconds, CPU seconds (user + system) of the whole process tree (the work
    done, which other load on the machine disturbs far less), and the 1-minute load
    average when it started."""

    seconds: float
    cpu: float
    load: float
    proc: subprocess.CompletedProcess[bytes]


def timed(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Timed:
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        list(argv), cwd=cwd, env=dict(env), capture_output=True, timeout=TIMEOUT, check=False
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Timed(seconds, cpu, load, proc)


def pytest_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def summary_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    out = proc.stdout.decode("utf-8", "replace").strip()
    return out.splitlines()[-1] if out else ""


@dataclass
class Workspace:
    root: Path
    repo: BenchRepo
    tree: Path  # a clean clone of the largest K's head, for the plain pytest runs
    sizes: Sizes

    def cache_dir(self) -> Path:
        """A new, empty killer-cache folder (a cold cache)."""
        return Path(tempfile.mkdtemp(prefix="killers-", dir=self.root))


def gate_env(root: Path, cache: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The gate's environment: its killer cache, and an XDG cache inside the
    benchmark's folder (the user's home is never touched)."""
    return {
        **(base if base is not None else base_env()),
        "ANDGATE_CACHE_DIR": str(cache),
        "XDG_CACHE_HOME": str(root / "xdg-cache"),
    }


def run_pytest_suite(ws: Workspace, *, fresh: bool = False, xdist: int = 0) -> Timed:
    """`pytest -q` (or `-n N`) on the whole suite; `fresh` first removes the bytecode caches."""
    if fresh:
        for cache in ws.tree.rglob("__pycache__"):
            shutil.rmtree(cache)
    argv = pytest_argv(*(["-n", str(xdist)] if xdist else []))
    result = timed(argv, ws.tree, base_env())
    summary = summary_line(result.proc)
    failed = re.search(r"(\d+) failed", summary)
    if result.proc.returncode != 1 or not failed or int(failed.group(1)) != ws.sizes.flakes:
        out = result.proc.stdout.decode("utf-8", "replace")
        raise SystemExit(
            f"baseline pytest: expected exactly the {ws.sizes.flakes} frozen flakes to fail "
            f"(exit 1), got exit {result.proc.returncode}: {summary}\n{out[-3000:]}"
        )
    return result


@dataclass
class CheckRun:
    seconds: float
    cpu_s: float
    load: float
    rss_mib: float
    vmhwm_mib: float
    children_rss_mib: float
    replays: list[dict[str, Any]]
    counts: dict[str, int]
    sections: dict[str, list[float]]
    gate: dict[str, Any]  # start, import, end, events of the wrapper
    killers_as_expected: bool = True
    cache_entries: int = 0
    verdict: str = ""  # verdict.json's "verdict": the honest change must be allowed
    warnings: dict[str, int] = field(default_factory=dict)  # warning code -> how many

    @property
    def items(self) -> int:
        return sum(self.counts.values())


def run_check(
    repo: Path,
    base: str,
    head: str,
    *,
    jobs: int,
    env: Mapping[str, str],
    artifacts: Path,
    extra: Sequence[str] = (),
    cprofile: Path | None = None,
) -> CheckRun:
    shutil.rmtree(artifacts, ignore_errors=True)
    out = artifacts.with_name(artifacts.name + ".gate.json")
    argv = [sys.executable, "-c", GATE_WRAPPER, str(out), str(cprofile or "-"), "check"]
    argv += ["--base", base, "--head", head, "--jobs", str(jobs), "--today", TODAY]
    argv += ["--artifacts", str(artifacts), "--quiet", *extra]
    result = timed(argv, repo, env)
    proc = result.proc
    verdict = _read_json(artifacts / "verdict.json")
    if proc.returncode != 0 or verdict.get("verdict") != "allow":
        reasons = "\n".join(f"  {r['code']}: {r['detail']}" for r in verdict.get("reasons", []))
        raise SystemExit(
            f"andgate check --base {base[:10]} --head {head[:10]} --jobs {jobs} in {repo} "
            f"did not allow the honest change (exit {proc.returncode}):\n"
            f"{reasons or '  (no verdict.json)'}\n"
            f"{proc.stdout.decode()[-2000:]}{proc.stderr.decode()[-3000:]}"
        )
    gate = _read_json(out)
    cache = Path(env["ANDGATE_CACHE_DIR"]) / "killers"
    return CheckRun(
        seconds=result.seconds,
        cpu_s=result.cpu,
        load=result.load,
        rss_mib=gate.get("rss_self_kib", 0) / 1024,
        vmhwm_mib=gate.get("vmhwm_kib", 0) / 1024,
        children_rss_mib=gate.get("rss_children_kib", 0) / 1024,
        replays=_read_json(artifacts / "known_bad.json").get("fixtures", []),
        counts=verdict.get("counts", {}),
        sections=gate.get("sections", {}),
        gate={k: gate.get(k) for k in ("t0", "t_import", "t_end", "events", "missing", "rss")},
        cache_entries=len(list(cache.glob("*.json"))) if cache.is_dir() else 0,
        verdict=str(verdict.get("verdict")),
        warnings=_warning_counts(verdict),
    )


def _warning_counts(verdict: Mapping[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for warning in verdict.get("warnings", []):
        counts[warning["code"]] = counts.get(warning["code"], 0) + 1
    return counts


def check_generated(
    ws: Workspace, k: int, jobs: int, cache: Path, extra: Sequence[str] = (), env_extra=None
) -> CheckRun:
    base, head = ws.repo.pairs[k]
    env = {**gate_env(ws.root, cache), **(env_extra or {})}
    run = run_check(
        ws.repo.path,
        base,
        head,
        jobs=jobs,
        env=env,
        artifacts=ws.root / f"artifacts-k{k}-j{jobs}",
        extra=extra,
    )
    expected = {ws.repo.killer_ids[r] for r in ws.repo.fixtures[k]}
    found = {item for fx in run.replays for item in fx["failed_oracle_items"]}
    run.killers_as_expected = found == expected and len(run.replays) == k
    return run


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


# -- the measurement: generated repository ----------------------------------------------


def config_name(k: int, jobs: int, cache: str) -> str:
    return f"check K={k} --jobs {jobs} ({cache} cache)"


@dataclass
class Samples:
    pytest: list[Timed] = field(default_factory=list)
    pytest_fresh: list[Timed] = field(default_factory=list)
    xdist: list[Timed] = field(default_factory=list)
    checks: dict[str, list[CheckRun]] = field(default_factory=dict)
    load: list[float] = field(default_factory=list)  # 1-minute load average, each round


def measure(
    ws: Workspace, ks: Sequence[int], jobs_list: Sequence[int], repeats: int, quick: bool
) -> Samples:
    """A warm-up round (bytecode caches of the suite and of site-packages, andgate's own
    bytecode: one check; with `quick` only `pytest -q`), then `repeats` rounds of every
    command in turn. Per K, the cold check gets an empty cache folder and the warm check
    then reuses it."""
    samples = Samples()
    for round_ in range(repeats + 1):
        warm_up = round_ == 0
        label = "warm-up" if warm_up else f"round {round_}/{repeats}"
        samples.load.append(os.getloadavg()[0])
        t = run_pytest_suite(ws)
        if warm_up and quick:
            log(f"{label}: pytest -q {t.seconds:.2f}s, load {samples.load[-1]:.2f}")
            continue
        t_fresh = run_pytest_suite(ws, fresh=True)
        t_x = run_pytest_suite(ws, xdist=2)
        log(
            f"{label}: pytest -q {t.seconds:.2f}s (fresh tree {t_fresh.seconds:.2f}s), "
            f"pytest -n 2 {t_x.seconds:.2f}s, load {samples.load[-1]:.2f}"
        )
        if warm_up:
            run = check_generated(ws, min(ks), max(jobs_list), ws.cache_dir())
            log(f"{label}: {config_name(min(ks), max(jobs_list), 'cold')} {run.seconds:.2f}s")
            continue
        samples.pytest.append(t)
        samples.pytest_fresh.append(t_fresh)
        samples.xdist.append(t_x)
        for k in ks:
            for jobs in jobs_list:
                cache = ws.cache_dir()
                for mode in ("cold", "warm"):
                    run = check_generated(ws, k, jobs, cache)
                    samples.checks.setdefault(config_name(k, jobs, mode), []).append(run)
                    log(
                        f"{label}: {config_name(k, jobs, mode)} {run.seconds:.2f}s, "
                        f"{run.rss_mib:.0f} MiB, cache entries {run.cache_entries}"
                    )
    samples.load.append(os.getloadavg()[0])
    return samples


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def _med(values) -> float:
    return statistics.median(list(values))


def baseline_row(name: str, runs: list[Timed], ref: list[Timed], xdist: list[Timed]) -> dict:
    median = _med(t.seconds for t in runs)
    cpu = _med(t.cpu for t in runs)
    return {
        "suite": "generated",
        "config": name,
        "median_s": median,
        "min_s": min(t.seconds for t in runs),
        "samples_s": [round(t.seconds, 3) for t in runs],
        "cpu_s": cpu,
        "load": _med(t.load for t in runs),
        "ratio": median / _med(t.seconds for t in ref),
        "ratio_xdist": median / _med(t.seconds for t in xdist),
        "cpu_ratio": cpu / _med(t.cpu for t in ref),
    }


def check_row(name: str, runs: list[CheckRun], pytest_s: float, xdist_s: float, cpu_ref: float):
    row: dict[str, Any] = {
        "config": name,
        "median_s": _med(r.seconds for r in runs),
        "min_s": min(r.seconds for r in runs),
        "samples_s": [round(r.seconds, 3) for r in runs],
        "cpu_s": _med(r.cpu_s for r in runs),
        "load": _med(r.load for r in runs),
        "peak_rss_mib": max(r.rss_mib for r in runs),
        "peak_vmhwm_mib": max(r.vmhwm_mib for r in runs),
        "peak_child_rss_mib": max(r.children_rss_mib for r in runs),
        "killers_as_expected": all(r.killers_as_expected for r in runs),
        # every round's verdict (run_check stops on anything but allow)
        "verdict": "/".join(sorted({r.verdict for r in runs})),
        "warnings": runs[0].warnings,
        "counts": runs[0].counts,
        "items": runs[0].items,
        "replay_s_per_fixture_known_bad_json": _med(
            statistics.fmean(fx["seconds"] for fx in r.replays) if r.replays else 0.0 for r in runs
        ),
        "stages_s": _median_stages([stages(r.gate) for r in runs]),
        "gate_side_s": _median_stages([gate_side(r) for r in runs]),
        "rss_peak": rss_peak(max(runs, key=lambda r: r.rss_mib).gate),
    }
    row["ratio"] = row["median_s"] / pytest_s
    row["ratio_xdist"] = row["median_s"] / xdist_s
    row["cpu_ratio"] = row["cpu_s"] / cpu_ref
    return row


def summarize(samples: Samples, ks: Sequence[int], jobs_list: Sequence[int]) -> list[dict]:
    pytest_s = _med(t.seconds for t in samples.pytest)
    xdist_s = _med(t.seconds for t in samples.xdist)
    cpu_ref = _med(t.cpu for t in samples.pytest)
    rows = [
        baseline_row(
            "pytest -q (warm bytecode caches)", samples.pytest, samples.pytest, samples.xdist
        ),
        baseline_row(
            "pytest -q (fresh tree, no caches)", samples.pytest_fresh, samples.pytest, samples.xdist
        ),
        baseline_row("pytest -q -n 2 (xdist)", samples.xdist, samples.pytest, samples.xdist),
    ]
    for k in ks:
        for jobs in jobs_list:
            for mode in ("cold", "warm"):
                name = config_name(k, jobs, mode)
                row = check_row(name, samples.checks[name], pytest_s, xdist_s, cpu_ref)
                row.update(suite="generated", k=k, jobs=jobs, cache=mode)
                k0 = samples.checks.get(config_name(0, jobs, mode))
                if k and k0:
                    added = row["median_s"] - _med(r.seconds for r in k0)
                    row["replay_added_s"] = added
                    row["replay_s_per_fixture"] = added / k
                target = K_TARGETS.get(k)
                if jobs == 2 and target is not None:
                    row["target"] = f"x pytest <= {target}; x -n 2 <= {XDIST_TARGET}"
                    row["ok"] = row["ratio"] <= target and row["ratio_xdist"] <= XDIST_TARGET
                    row["ok_pytest"] = row["ratio"] <= target
                    row["ok_xdist"] = row["ratio_xdist"] <= XDIST_TARGET
                rows.append(row)
    return rows


# -- where the time went, from the wrapper's events -------------------------------------------

STAGE_OF = (
    ("base-oracle", "base oracle (collect-only)"),
    ("known-bad", "known-bad replays"),
    ("discrimination", "discrimination report"),
    ("evidence-base", "approval evidence, base's side"),
    ("evidence-head", "approval evidence, head's side"),
    ("oracle-skips-on-base", "oracle items skipped by code, again on base"),
    ("oracle", "oracle"),
    ("property", "property"),
    ("untrusted", "untrusted"),
    ("flake", "frozen flakes"),
)


def _stage(label: str) -> str:
    return next((name for prefix, name in STAGE_OF if label.startswith(prefix)), label)


def stages(gate: Mapping[str, Any]) -> dict[str, float]:
    """Per kind of pytest process: processes, summed wall seconds, and the span from the
    first start to the last end; plus git and the gate's time outside any subprocess."""
    events = gate.get("events") or []
    t0, t_end = gate.get("t0") or 0.0, gate.get("t_end") or 0.0
    out: dict[str, float] = {}
    spans: dict[str, list[float]] = {}
    for e in events:
        if e["kind"] != "pytest":
            continue
        name = _stage(e["name"])
        out[f"{name}: processes"] = out.get(f"{name}: processes", 0) + 1
        out[f"{name}: summed s"] = out.get(f"{name}: summed s", 0.0) + e["end"] - e["start"]
        span = spans.setdefault(name, [e["start"], e["end"]])
        span[0], span[1] = min(span[0], e["start"]), max(span[1], e["end"])
    for name, (a, b) in spans.items():
        out[f"{name}: span s"] = b - a
        out[f"{name}: ends at s"] = b - t0
    git_s = sum(e["end"] - e["start"] for e in events if e["kind"] == "git")
    out["git calls"] = sum(1 for e in events if e["kind"] == "git")
    out["git summed s"] = git_s
    busy = _union([(e["start"], e["end"]) for e in events if e["kind"] in ("git", "pytest")])
    out["gate start-up + import s"] = (gate.get("t_import") or t0) - t0
    out["gate outside any subprocess s"] = t_end - t0 - busy
    out["gate total s"] = t_end - t0
    return out


def rss_peak(gate: Mapping[str, Any]) -> dict[str, Any]:
    """When the gate process's resident memory peaked, and what it was doing then."""
    samples = gate.get("rss") or []
    if not samples:
        return {}
    at, kib = max(samples, key=lambda s: s[1])
    active = sorted(
        {
            f"{e['kind']} {e['name']}"
            for e in gate.get("events") or []
            if e["kind"] != "git" and e["start"] - 0.2 <= at <= e["end"] + 0.2
        }
    )
    return {"mib": kib / 1024, "at_s": at - (gate.get("t0") or at), "active": active}


def gate_side(run: CheckRun) -> dict[str, float]:
    """Per section and per group: wall and CPU (thread time) seconds, calls, items."""
    out: dict[str, float] = {}
    for name, (calls, wall, cpu, size) in run.sections.items():
        out[f"{name} wall s"], out[f"{name} cpu s"] = float(wall), float(cpu)
        out[f"{name} calls"], out[f"{name} size"] = float(calls), float(size)
    for group, names in SECTION_GROUPS.items():
        entries = [run.sections.get(n, (0, 0.0, 0.0, 0)) for n in names]
        out[f"group {group} wall s"] = sum(float(e[1]) for e in entries)
        out[f"group {group} cpu s"] = sum(float(e[2]) for e in entries)
        out[f"group {group} size"] = sum(float(e[3]) for e in entries)
    return out


def _median_stages(values: list[dict[str, float]]) -> dict[str, float]:
    keys = sorted({k for v in values for k in v})
    return {k: _med(v.get(k, 0.0) for v in values) for k in keys}


def _union(spans: list[tuple[float, float]]) -> float:
    total, cur_start, cur_end = 0.0, 0.0, None
    for start, end in sorted(spans):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


# -- the scaled repository and the real suite ------------------------------------------------


def measure_scaled(root: Path, sizes: Sizes, factor: int, jobs: int) -> dict[str, Any]:
    """One cold K=0 check of the generated repository with `factor` x its files: a
    second size for the per-item cost of the gate's own result handling."""
    scaled = sizes.scaled(factor)
    folder = root / f"scaled-{factor}"
    folder.mkdir()
    repo = build_repo(folder / "repo", scaled, [0])
    ws = Workspace(folder, repo, folder, scaled)
    run = check_generated(ws, 0, jobs, ws.cache_dir())
    log(f"scaled x{factor}: {run.items} items, check {run.seconds:.2f}s, {run.rss_mib:.0f} MiB")
    return {
        "factor": factor,
        "items": run.items,
        "seconds": run.seconds,
        "rss_mib": run.rss_mib,
        "gate_side_s": gate_side(run),
        "stages_s": stages(run.gate),
    }


@dataclass
class RealSamples:
    repo: packaging_suite.RealRepo
    pytest: list[Timed] = field(default_factory=list)
    xdist: list[Timed] = field(default_factory=list)
    checks: list[CheckRun] = field(default_factory=list)
    passed: int = 0
    collect_s: float = 0.0
    load: list[float] = field(default_factory=list)


def measure_real(root: Path, repeats: int, jobs: int, cprofile: Path | None) -> RealSamples:
    folder = root / "real"
    folder.mkdir()
    real = packaging_suite.build(folder, log)
    samples = RealSamples(real)
    # Warm-up: bytecode of the tree and of site-packages (collection only: the suite
    # itself takes minutes).
    warm = timed(pytest_argv("--collect-only"), real.tree, real.tree_env())
    samples.collect_s = warm.seconds
    log(f"real suite warm-up (collect-only): {summary_line(warm.proc)} in {warm.seconds:.1f}s")
    for round_ in range(1, repeats + 1):
        label = f"real round {round_}/{repeats}"
        samples.load.append(os.getloadavg()[0])
        t = timed(pytest_argv(), real.tree, real.tree_env())
        _expect_green(t, "pytest -q")
        samples.passed = packaging_suite.passed_count(summary_line(t.proc))
        samples.pytest.append(t)
        log(f"{label}: pytest -q {t.seconds:.1f}s ({summary_line(t.proc)})")
        cache = Path(tempfile.mkdtemp(prefix="killers-", dir=folder))
        run = run_check(
            real.path,
            real.base,
            real.head,
            jobs=jobs,
            env=gate_env(folder, cache, real.gate_env()),
            artifacts=folder / "artifacts",
            cprofile=cprofile if round_ == 1 else None,
        )
        run.killers_as_expected = len(run.replays) == len(real.fixtures) and all(
            fx["bites"] for fx in run.replays
        )
        samples.checks.append(run)
        log(
            f"{label}: check {run.seconds:.1f}s, {run.items} items, gate {run.rss_mib:.0f} MiB, "
            "killers: "
            + "; ".join(f"{fx['name']}: {fx['failed_oracle_items'][:1]}" for fx in run.replays)
        )
        x = timed(pytest_argv("-n", str(jobs)), real.tree, real.tree_env())
        _expect_green(x, f"pytest -n {jobs}")
        samples.xdist.append(x)
        log(f"{label}: pytest -n {jobs} {x.seconds:.1f}s")
    samples.load.append(os.getloadavg()[0])
    if samples.passed < packaging_suite.MIN_ITEMS:
        raise SystemExit(
            f"packaging {packaging_suite.VERSION}'s suite has only {samples.passed} items"
        )
    return samples


def _expect_green(t: Timed, what: str) -> None:
    if t.proc.returncode != 0:
        raise SystemExit(
            f"packaging's suite, {what}: exit {t.proc.returncode}\n"
            f"{t.proc.stdout.decode()[-3000:]}{t.proc.stderr.decode()[-2000:]}"
        )


def real_rows(s: RealSamples, jobs: int) -> list[dict[str, Any]]:
    pytest_s = _med(t.seconds for t in s.pytest)
    xdist_s = _med(t.seconds for t in s.xdist)
    cpu_ref = _med(t.cpu for t in s.pytest)
    rows = []
    for name, runs in (("pytest -q", s.pytest), (f"pytest -q -n {jobs} (xdist)", s.xdist)):
        median = _med(t.seconds for t in runs)
        rows.append(
            {
                "suite": "packaging",
                "config": f"packaging {packaging_suite.VERSION}: {name}",
                "median_s": median,
                "min_s": min(t.seconds for t in runs),
                "samples_s": [round(t.seconds, 3) for t in runs],
                "cpu_s": _med(t.cpu for t in runs),
                "load": _med(t.load for t in runs),
                "ratio": median / pytest_s,
                "ratio_xdist": median / xdist_s,
                "cpu_ratio": _med(t.cpu for t in runs) / cpu_ref,
                "items": s.passed,
            }
        )
    name = f"packaging {packaging_suite.VERSION}: check --jobs {jobs} (cold cache)"
    row = check_row(name, s.checks, pytest_s, xdist_s, cpu_ref)
    row.update(suite="packaging", k=len(s.repo.fixtures), jobs=jobs, cache="cold")
    row["target"] = f"x pytest <= {REAL_TARGET}; x -n 2 <= {XDIST_TARGET}"
    row["ok_pytest"] = row["ratio"] <= REAL_TARGET
    row["ok_xdist"] = row["ratio_xdist"] <= XDIST_TARGET
    row["ok"] = row["ok_pytest"] and row["ok_xdist"]
    row["killers"] = {fx["name"]: fx["failed_oracle_items"] for fx in s.checks[0].replays}
    rows.append(row)
    return rows


def special_rows(rows: list[dict[str, Any]], scaled: dict | None) -> list[dict[str, Any]]:
    """Gate memory at the largest suite, and the per-item gate-side cost at each size."""
    out = []
    real = next((r for r in rows if r.get("suite") == "packaging" and "peak_rss_mib" in r), None)
    biggest = real or max((r for r in rows if "peak_rss_mib" in r), key=lambda r: r["items"])
    out.append(
        {
            "config": f"gate process peak RSS at {biggest['items']:,} items",
            "figure": "memory",
            "median_s": None,
            "peak_rss_mib": biggest["peak_rss_mib"],
            "peak_vmhwm_mib": biggest["peak_vmhwm_mib"],
            "target": f"< {RSS_LIMIT_MIB:.0f} MiB" + ("" if real else " (no 64k suite run)"),
            "ok": biggest["peak_rss_mib"] < RSS_LIMIT_MIB if real else None,
        }
    )
    sizes = []
    one = next((r for r in rows if r.get("k") == 0 and r.get("cache") == "cold"), None)
    if one:
        sizes.append(("generated x1", one["items"], one["gate_side_s"]))
    if scaled:
        sizes.append((f"generated x{scaled['factor']}", scaled["items"], scaled["gate_side_s"]))
    if real:
        sizes.append((f"packaging {packaging_suite.VERSION}", real["items"], real["gate_side_s"]))
    smallest = None
    for name, items, side in sizes:
        inv, junit = side.get("group inventory cpu s", 0.0), side.get("group junit cpu s", 0.0)
        results = side.get("group results_files cpu s", 0.0)
        parsed = side.get("group results_files size", 0.0) or 1.0
        per_item = (inv + junit) / items * 1e6
        row = {
            "config": f"gate-side inventory + JUnit, {name}",
            "figure": "linearity",
            "items": items,
            "median_s": inv + junit,
            "inventory_cpu_s": inv,
            "junit_cpu_s": junit,
            "results_files_cpu_s": results,
            "results_items_parsed": parsed,
            "artifacts_total_cpu_s": side.get("group artifacts_total cpu s", 0.0),
            "us_per_item": per_item,
            "results_us_per_parsed_item": results / parsed * 1e6,
            "artifacts_us_per_item": side.get("group artifacts_total cpu s", 0.0) / items * 1e6,
        }
        if smallest is None:
            smallest = per_item
        else:
            row["target"] = f"us/item <= {LINEAR_SLACK} x the smallest size's"
            row["ok"] = per_item <= LINEAR_SLACK * smallest
        out.append(row)
    return out


def add_round_ratios(rows: list[dict[str, Any]]) -> None:
    """Each row's ratio to its suite's `pytest -q` and `pytest -n 2` within each round
    (commands of one round ran minutes apart, under about the same load), and their
    median: a second reading of the same samples, less moved by load that drifts
    between rounds than median / median."""
    refs: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        config = r.get("config", "")
        if config in ("pytest -q (warm bytecode caches)", f"{_real_prefix()}pytest -q"):
            refs.setdefault(r["suite"], {})["pytest"] = r["samples_s"]
        elif "(xdist)" in config:
            refs.setdefault(r["suite"], {})["xdist"] = r["samples_s"]
    for r in rows:
        ref = refs.get(r.get("suite", ""), {})
        for key, name in (("pytest", ""), ("xdist", "_xdist")):
            base = ref.get(key)
            if base and len(base) == len(r.get("samples_s", ())):
                ratios = [a / b for a, b in zip(r["samples_s"], base, strict=True)]
                r[f"round_ratios{name}"] = [round(x, 3) for x in ratios]
                r[f"ratio{name}_per_round"] = _med(ratios)


def _real_prefix() -> str:
    return f"packaging {packaging_suite.VERSION}: "


# -- the table ---------------------------------------------------------------------------------


# `pytest -n 2` / `pytest -q` on the generated repository: 1.09-1.22 on a quiet 2-core
# run of this machine. Well above, another load took one core for much of the run.
TWO_CORES_AT_MOST = 1.3


def two_cores_warning(rows: list[dict[str, Any]]) -> str | None:
    """A line saying the machine did not give the run two cores, or None."""
    xdist = next((r for r in rows if r.get("config") == "pytest -q -n 2 (xdist)"), None)
    if xdist is None or xdist["ratio"] <= TWO_CORES_AT_MOST:
        return None
    return (
        f"note: pytest -n 2 took {xdist['ratio']:.2f} x pytest -q here, so the machine did "
        "not give this run two free cores. A check runs two pytest processes at once: its "
        "ratios against pytest -q overstate its cost on such a run; those against "
        "pytest -n 2, parallel too, move less."
    )


def print_table(rows: list[dict[str, Any]]) -> None:
    head = (
        "figure",
        "items",
        "verdict",
        "median s",
        "x pytest -q",
        "per round",
        "x pytest -n 2",
        "per round",
        "cpu x",
        "gate MiB",
        "load",
        "target",
        "ok",
        "note",
    )
    lines = [head]
    for r in rows:
        lines.append(
            (
                r["config"],
                f"{r['items']:,}" if r.get("items") else "",
                r.get("verdict", ""),
                _fmt(r.get("median_s")),
                _fmt(r.get("ratio")),
                _fmt(r.get("ratio_per_round")),
                _fmt(r.get("ratio_xdist")),
                _fmt(r.get("ratio_xdist_per_round")),
                _fmt(r.get("cpu_ratio")),
                _fmt(r.get("peak_rss_mib"), 0),
                _fmt(r.get("load"), 1),
                r.get("target", ""),
                {True: "PASS", False: "FAIL"}.get(r.get("ok"), ""),
                _note(r),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for n, line in enumerate(lines):
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _note(r: dict[str, Any]) -> str:
    if r.get("figure") == "linearity":
        return (
            f"CPU {r['us_per_item']:.1f} us/item (inventory {r['inventory_cpu_s']:.3f}s, "
            f"JUnit {r['junit_cpu_s']:.3f}s); all artifacts {r['artifacts_us_per_item']:.1f} "
            f"us/item; results files {r['results_us_per_parsed_item']:.1f} us per item read "
            f"({r['results_items_parsed']:,.0f} read)"
        )
    if r.get("figure") == "memory":
        return f"VmHWM {r['peak_vmhwm_mib']:.0f} MiB"
    parts = []
    if r.get("ok") is False:
        parts.append(
            ", ".join(
                what
                for what, ok in (("x pytest", r.get("ok_pytest")), ("x -n 2", r.get("ok_xdist")))
                if ok is False
            )
            + " missed"
        )
    if "replay_s_per_fixture" in r:
        parts.append(f"replays +{r['replay_added_s']:.2f}s ({r['replay_s_per_fixture']:.2f}s/fx)")
    if "killers_as_expected" in r and not r["killers_as_expected"]:
        parts.append("KILLERS NOT AS EXPECTED")
    if r.get("warnings"):
        parts.append(", ".join(f"{code} x{n}" for code, n in sorted(r["warnings"].items())))
    return "; ".join(parts)


def _fmt(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def machine() -> dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    import pytest

    import andgate

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pytest": pytest.__version__,
        "andgate": getattr(andgate, "__version__", "?"),
        "andgate_source": andgate_source(Path(andgate.__file__).parent),
        "plugins": sorted(_pytest_plugins()),
    }


def andgate_source(folder: Path) -> dict[str, Any]:
    """Which andgate was measured: its folder and, in a git checkout, the commit."""
    out: dict[str, Any] = {"path": str(folder)}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        run = {"cwd": folder, "env": _git_env(OWNER), "capture_output": True, "timeout": 30}
        sha = subprocess.run(["git", "rev-parse", "HEAD"], **run, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], **run, check=True)
        out["commit"] = sha.stdout.decode().strip()
        out["uncommitted_changes"] = bool(dirty.stdout.strip())
    return out


def _pytest_plugins() -> set[str]:
    from importlib.metadata import entry_points

    return {
        f"{ep.name} ({ep.dist.name if ep.dist else '?'})" for ep in entry_points(group="pytest11")
    }


# -- profile ---------------------------------------------------------------------------------

PROBE = '''\
"""andgate benchmark probe: when each phase of this pytest process started."""
import json, os, sys, time
import pytest

_T = {"imported": time.time(), "hypothesis_loaded_first": "hypothesis" in sys.modules}


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _T["configure"] = time.time()
    spec = next(
        (str(a).split("=", 1)[1] for a in config.invocation_params.args
         if str(a).startswith("--andgate-run=")),
        "plain",
    )
    _T["spec"] = os.path.basename(spec).removesuffix(".spec.json")


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session):
    _T["collect_start"] = time.time()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    _T["collect_end"] = time.time()
    _T["items"] = len(session.items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    _T["run_start"] = time.time()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    _T["run_end"] = time.time()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    _T["end"] = time.time()
    with open(os.environ["BENCH_PROBE_LOG"], "a") as fh:
        fh.write(json.dumps(_T) + "\\n")
'''

PHASES = (
    ("spawn -> plugins loading (interpreter, import pytest + andgate)", None, "imported"),
    ("plugin autoload (hypothesis ...), ini, conftests", "imported", "configure"),
    ("configure hooks, session start", "configure", "collect_start"),
    ("collection (import, rewrite, classify)", "collect_start", "collect_end"),
    ("gap collection -> run loop", "collect_end", "run_start"),
    ("test execution (run loop)", "run_start", "run_end"),
    ("session finish (results, junit, summary)", "run_end", "end"),
    ("interpreter exit + reap", "end", None),
)


def process_phases(start: float, end: float, probe: Mapping[str, float]) -> dict[str, float]:
    marks = {None: None, **probe}
    out = {}
    for name, a, b in PHASES:
        t0 = start if a is None else marks.get(a)
        t1 = end if b is None else marks.get(b)
        if t0 is not None and t1 is not None:
            out[name] = round(t1 - t0, 3)
    return out


def profile(ws: Workspace, k: int, jobs: int, mode: str) -> dict[str, Any]:
    """The configuration once more with the probe plugin in every pytest process, and
    again with --no-discrimination (what the discrimination report costs)."""
    probe_dir = ws.root / "probe"
    probe_dir.mkdir(exist_ok=True)
    (probe_dir / "andgate_bench_probe.py").write_text(PROBE, encoding="utf-8")
    probe_log = ws.root / "probe.jsonl"
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(probe_dir), os.environ.get("PYTHONPATH")])),
        "PYTEST_ADDOPTS": "-p andgate_bench_probe",
        "BENCH_PROBE_LOG": str(probe_log),  # andgate scrubs ANDGATE_* from test processes
    }
    out: dict[str, Any] = {"config": config_name(k, jobs, mode)}
    for variant, extra in (("default", ()), ("--no-discrimination", ("--no-discrimination",))):
        cache = ws.cache_dir()
        if mode == "warm":
            check_generated(ws, k, jobs, cache)  # fill it
        probe_log.unlink(missing_ok=True)
        run = check_generated(ws, k, jobs, cache, extra=extra, env_extra=env)
        probes = {}
        for line in probe_log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            probes[entry.get("spec", "")] = entry
        out[variant] = analyse_profile(run, probes)
    # The baseline pytest process, by phase.
    probe_log.unlink(missing_ok=True)
    spawned = time.time()
    timed(pytest_argv(), ws.tree, {**base_env(), **env})
    exited = time.time()
    plain = [json.loads(x) for x in probe_log.read_text(encoding="utf-8").splitlines()]
    baseline = next((p for p in plain if p.get("spec") == "plain"), None)
    out["baseline_pytest_phases_s"] = baseline and process_phases(spawned, exited, baseline)
    return out


def analyse_profile(run: CheckRun, probes: Mapping[str, Any]) -> dict[str, Any]:
    gate = run.gate
    t0 = gate["t0"]
    events = sorted(gate["events"], key=lambda e: e["start"])
    git_by: dict[str, list[float]] = {}
    for e in events:
        if e["kind"] == "git":
            git_by.setdefault(e["name"], []).append(e["end"] - e["start"])
    processes = []
    for e in events:
        if e["kind"] != "pytest":
            continue
        probe = probes.get(e["name"], {})
        processes.append(
            {
                "label": e["name"],
                "start": round(e["start"] - t0, 3),
                "end": round(e["end"] - t0, 3),
                "seconds": round(e["end"] - e["start"], 3),
                "items": probe.get("items"),
                "phases": process_phases(e["start"], e["end"], probe),
            }
        )
    totals: dict[str, float] = {}
    by_stage: dict[str, dict[str, float]] = {}
    for p in processes:
        stage = by_stage.setdefault(_stage(p["label"]), {})
        for phase, secs in p["phases"].items():
            totals[phase] = round(totals.get(phase, 0.0) + secs, 3)
            stage[phase] = round(stage.get(phase, 0.0) + secs, 3)
    return {
        "wall_s": round(run.seconds, 3),
        "cpu_s": round(run.cpu_s, 3),
        "stages_s": {k: round(v, 3) for k, v in stages(gate).items()},
        "git": {
            name: {"calls": len(v), "total_s": round(sum(v), 3), "max_s": round(max(v), 3)}
            for name, v in sorted(git_by.items(), key=lambda kv: -sum(kv[1]))
        },
        "pytest_processes": processes,
        "pytest_phase_totals_s": totals,
        "pytest_phase_by_stage_s": by_stage,
    }


def print_profile(p: dict[str, Any]) -> None:
    for variant in ("default", "--no-discrimination"):
        v = p[variant]
        st = v["stages_s"]
        print(f"\nprofile of one {p['config']} run ({variant}): {v['wall_s']:.2f}s wall")
        print(
            f"  gate start-up + import: {st['gate start-up + import s']:.2f}s; outside any "
            f"git/pytest subprocess: {st['gate outside any subprocess s']:.2f}s; git "
            f"{st['git summed s']:.2f}s in {st['git calls']:.0f} calls"
        )
        print("  pytest processes (start -> end, relative to the gate's start):")
        for proc in v["pytest_processes"]:
            print(
                f"    {proc['label']:<24} {proc['start']:6.2f} -> {proc['end']:6.2f}  "
                f"{proc['seconds']:5.2f}s  items {proc['items']}"
            )
        print("  pytest time by phase, summed over all processes:")
        for phase, secs in v["pytest_phase_totals_s"].items():
            print(f"    {phase:<64} {secs:6.2f}s")
    if p.get("baseline_pytest_phases_s"):
        print("  the baseline `pytest -q` by phase:")
        for phase, secs in p["baseline_pytest_phases_s"].items():
            print(f"    {phase:<64} {secs:6.2f}s")


def print_stages(rows: list[dict[str, Any]]) -> None:
    """Where each check's wall time went, from the wrapper's events (medians)."""
    print("\nwhere each check's time went (median s; summed = over processes, span = wall):")
    for r in rows:
        st = r.get("stages_s")
        if not st:
            continue
        parts = []
        for _, name in STAGE_OF:
            if f"{name}: processes" in st:
                parts.append(
                    f"{name} {st[f'{name}: processes']:.0f}p {st[f'{name}: summed s']:.1f}s"
                    f"/{st[f'{name}: span s']:.1f}s"
                )
        parts.append(f"git {st.get('git summed s', 0):.1f}s")
        parts.append(f"gate alone {st.get('gate outside any subprocess s', 0):.1f}s")
        side = r.get("gate_side_s") or {}
        parts.append(
            "gate-side CPU: results files "
            f"{side.get('group results_files cpu s', 0):.2f}s "
            f"({side.get('group results_files size', 0):,.0f} items read), inventory "
            f"{side.get('group inventory cpu s', 0):.2f}s, JUnit "
            f"{side.get('group junit cpu s', 0):.2f}s, all artifacts "
            f"{side.get('group artifacts_total cpu s', 0):.2f}s"
        )
        peak = r.get("rss_peak") or {}
        if peak:
            active = sorted(peak["active"], key=lambda a: (not a.startswith("pytest"), a))
            more = f" (+{len(active) - 3} more)" if len(active) > 3 else ""
            parts.append(
                f"RSS peak {peak['mib']:.0f} MiB at {peak['at_s']:.0f}s during "
                + (", ".join(active[:3]) + more or "gate work")
            )
        print(f"  {r['config']}: " + ", ".join(parts))


# -- main ------------------------------------------------------------------------------------


@contextlib.contextmanager
def workspace_root(keep: bool) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="andgate-bench-"))
    try:
        yield root
    finally:
        if keep:
            print(f"kept the benchmark folder: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=None, help="timed rounds (default 3)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smaller repository, 1 round, K 0,4, no real suite, no scaled copy: a smoke test",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--out", type=Path, default=HERE / "results.json", help="default: benchmarks/results.json"
    )
    parser.add_argument("--ks", default=None, help="known-bad fixture counts (default 0,4,16)")
    parser.add_argument("--jobs", default="2", help="--jobs values to measure (default 2)")
    parser.add_argument(
        "--no-real", action="store_true", help="skip the real suite (packaging's tests)"
    )
    parser.add_argument("--real", action="store_true", help="run the real suite even with --quick")
    parser.add_argument(
        "--real-repeats", type=int, default=1, help="rounds of the real suite (default 1)"
    )
    parser.add_argument(
        "--real-only",
        action="store_true",
        help="measure only the real suite and replace just its rows in --out (which must exist)",
    )
    parser.add_argument(
        "--scale",
        type=int,
        default=None,
        help="the scaled copy of the generated repository, N x its files (default 4; 0: none)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also profile the generated configuration with the worst ratio",
    )
    parser.add_argument(
        "--cprofile",
        type=Path,
        default=None,
        help="write a cProfile of the real-suite check's gate process (all threads) here",
    )
    parser.add_argument(
        "--reprint",
        type=Path,
        default=None,
        metavar="RESULTS_JSON",
        help="print the table of a results.json again (nothing is measured)",
    )
    args = parser.parse_args(argv)
    args.ks = sorted({int(x) for x in (args.ks or ("0,4" if args.quick else "0,4,16")).split(",")})
    args.jobs = sorted({int(x) for x in args.jobs.split(",")})
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.scale is None:
        args.scale = 0 if args.quick else 4
    args.real = not args.no_real and (args.real or not args.quick)
    if not all(0 <= k <= RULES for k in args.ks) or args.repeats < 1 or min(args.jobs) < 1:
        parser.error(f"--ks values must be in 0..{RULES}, --repeats and --jobs >= 1")
    return args


def reprint(path: Path) -> int:
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = data["rows"]
    add_round_ratios(rows)
    print(
        f"{path}: {data['command']} on {data['date']}, andgate {data['machine']['andgate_source']}"
    )
    print()
    print_table(rows)
    if warning := two_cores_warning(rows):
        print(f"\n{warning}")
    real = data.get("real") or {}
    loads = data["load_average_1min_each_round"] + real.get("load_average_1min_each_round", [])
    print(f"\n1-minute load average at each round: {', '.join(f'{x:.2f}' for x in loads)}")
    print_stages(rows)
    if data.get("profile"):
        print_profile(data["profile"])
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.reprint:
        return reprint(args.reprint)
    if args.real_only:
        return real_only(args, argv)
    for module in ("andgate", "xdist"):
        if importlib.util.find_spec(module) is None:
            raise SystemExit(
                f"{module} is not importable by {sys.executable}: pip install -e .[test]"
            )
    if args.real and (missing := packaging_suite.missing_dependencies()):
        raise SystemExit(
            f"the real suite needs packaging's test dependencies ({', '.join(missing)}): "
            'pip install -e ".[test,bench]", or pass --no-real'
        )
    # SIGTERM unwinds like Ctrl-C: the running command is killed, the temp folder removed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    sizes = QUICK if args.quick else FULL
    started = time.perf_counter()
    real = scaled = prof = None
    with workspace_root(args.keep) as root:
        log(f"building the generated repository in {root} ({sizes.counts})")
        repo = build_repo(root / "repo", sizes, args.ks)
        tree = root / "tree"
        git(root, "clone", "-q", "--branch", f"head-k{max(args.ks)}", str(repo.path), str(tree))
        ws = Workspace(root, repo, tree, sizes)
        samples = measure(ws, args.ks, args.jobs, args.repeats, args.quick)
        rows = summarize(samples, args.ks, args.jobs)
        if args.profile:
            worst = max((r for r in rows if "k" in r), key=lambda r: r["ratio"])
            log(f"profiling {worst['config']} (the worst ratio, {worst['ratio']:.2f})")
            prof = profile(ws, worst["k"], worst["jobs"], worst["cache"])
        if args.scale:
            scaled = measure_scaled(root, sizes, args.scale, max(args.jobs))
        if args.real:
            real = measure_real(root, args.real_repeats, max(args.jobs), args.cprofile)
            rows += real_rows(real, max(args.jobs))
        rows += special_rows(rows, scaled)
    add_round_ratios(rows)
    print()
    print_table(rows)
    if warning := two_cores_warning(rows):
        print(f"\n{warning}")
    loads = samples.load + (real.load if real else [])
    print(f"\n1-minute load average at each round: {', '.join(f'{x:.2f}' for x in loads)}")
    print_stages(rows)
    if prof:
        print_profile(prof)
    result = {
        "schema": "andgate.benchmark/2",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "command": " ".join(["python", "benchmarks/run.py", *(argv or sys.argv[1:])]),
        "repeats": args.repeats,
        "sizes": asdict(sizes),
        "items": sizes.counts,
        "load_average_1min_each_round": [round(x, 2) for x in samples.load],
        "rows": _rounded(rows),
        "scaled": _rounded(scaled),
        "real": _rounded(_real_meta(real)) if real else None,
        "profile": _rounded(prof),
        "total_benchmark_s": round(time.perf_counter() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out} ({result['total_benchmark_s']:.0f}s in total)")
    return 0


def real_only(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """Measure the real suite alone and replace its rows (and the rows derived from
    them: gate memory, per-item cost) in an existing results file; the generated
    repository's rows stay as they were measured."""
    if not args.out.is_file():
        raise SystemExit(f"--real-only updates an existing results file; {args.out} is missing")
    if missing := packaging_suite.missing_dependencies():
        raise SystemExit(f"the real suite needs {', '.join(missing)}: pip install -e .[test,bench]")
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    data = json.loads(args.out.read_text(encoding="utf-8"))
    jobs = max(args.jobs)
    with workspace_root(args.keep) as root:
        real = measure_real(root, args.real_repeats, jobs, args.cprofile)
    rows = merge_real_rows(data["rows"], real_rows(real, jobs), data.get("scaled"))
    print()
    print_table(rows)
    data["rows"] = _rounded(rows)
    data["real"] = _rounded(
        {
            **_real_meta(real),
            # This update's own provenance: the other rows keep the file's.
            "measured": {
                "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "command": " ".join(["python", "benchmarks/run.py", *(argv or sys.argv[1:])]),
                "machine": machine(),
            },
        }
    )
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"\nupdated the real suite's rows in {args.out}")
    return 0


def merge_real_rows(
    rows: list[dict[str, Any]], real: list[dict[str, Any]], scaled: dict | None
) -> list[dict[str, Any]]:
    """`rows` with the real suite's rows replaced by `real`, and of the rows derived
    from them only the real suite's (gate memory, its per-item cost): the generated
    repository's rows stay exactly as they were measured."""
    derived = ("memory", "linearity")
    kept = [r for r in rows if r.get("suite") != "packaging" and r.get("figure") not in derived]
    new = special_rows(kept + real, scaled)
    prefix = _real_prefix().rstrip(": ")
    ours = [r for r in new if r.get("figure") == "memory" or prefix in r["config"]]
    old = [r for r in rows if r.get("figure") == "linearity" and prefix not in r["config"]]
    merged = kept + real + ours[:1] + old + ours[1:]
    add_round_ratios(merged)
    return merged


def _real_meta(real: RealSamples) -> dict[str, Any]:
    return {
        "version": packaging_suite.VERSION,
        "sdist_sha256": real.repo.sdist_sha256,
        "items_passed_pytest_q": real.passed,
        "collect_only_warmup_s": real.collect_s,
        "fixtures": real.repo.fixtures,
        "load_average_1min_each_round": [round(x, 2) for x in real.load],
        "check_sections": [r.sections for r in real.checks],
        "check_missing_sections": [r.gate.get("missing") for r in real.checks],
    }


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


if __name__ == "__main__":
    raise SystemExit(main())
