"""A new user's adoption of a flat-layout project, timed step by step (issue 43).

`python benchmarks/flat_adoption.py SOURCE [--jobs 2] [--out PATH]`

SOURCE is a path or URL of toolz's git repository (`https://github.com/pytoolz/toolz` by
default): the package at the root, its tests inside it, `testpaths = ["toolz"]`. It is
cloned at run time into a temporary folder and nothing of it is committed here. Then, as
the README and `--help` tell a new user, each command timed with its exit code and what
it decided:

1. `pytest -q` on the clone (after a warm-up run): the suite's own time, for scale.
2. `andgate init --agents AGENTS.md`; the owner's edits (owners, the folder glob init
   suggests for `toolz/tests` without `test_package.py`, which needs an installed
   distribution, one accepted property of `partition_all`, one known-bad fixture: `take`
   one item short); `andgate known-bad mutants` on `toolz/itertoolz.py` (for its time:
   what it proposes is not used); `lock update`, `replay-known-bad`, `classify`, `doctor`.
3. The adoption, committed by the owner, checked against the upstream commit (ADOPTING).
4. Agent changes on top of it, each checked: an honest change that adds a test file
   under the oracle folder glob; a docstring refactor next to the fixture's bug
   (KNOWN_BAD_STALE), `known-bad refresh`, the refreshed fixture committed (blocked
   unapproved, allowed once the owner approves); a change that only disputes an oracle.

Prints a table; `--out` adds a `flat_adoption` section to a results file and leaves the
rest of it as it was.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import run as bench  # benchmarks/run.py: timing, environments, machine facts
from real_history import AGENT, OWNER, git, load_loop

TODAY = dt.date.today().isoformat()  # freeze add dates its entry today: check judges the same day
DEFAULT_SOURCE = "https://github.com/pytoolz/toolz"
MANIFEST = "tests/trust_manifest.yaml"
HOME = "toolz/tests"
INVARIANT = (
    "partition_all(n, seq) gives tuples of n items except a shorter last one, and joining "
    "them gives seq back"
)
PROPERTY_TEST = f'''\
"""Seeded property of toolz.partition_all."""

import random

import pytest

from toolz import partition_all

# INVARIANT: {INVARIANT}
SEEDS = [1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS)
def test_partition_all_roundtrip(seed):
    rng = random.Random(seed)
    for _ in range(50):
        n = rng.randint(1, 5)
        seq = [rng.randint(0, 9) for _ in range(rng.randint(0, 20))]
        pieces = list(partition_all(n, seq))
        assert [x for piece in pieces for x in piece] == seq
        assert all(len(piece) == n for piece in pieces[:-1])
'''
TAKE = ("toolz/itertoolz.py", "    return itertools.islice(seq, n)\n")
AGENT_TEST = """\
from toolz import take


def test_take_more_than_there_is():
    assert list(take(5, [1, 2])) == [1, 2]
"""


# The lines of init's report the table shows: where the folders went, what it left out.
INIT_SAYS = ("pytest collects only", "  bench/test_curry.py", "not proposed")


@dataclass
class Step:
    name: str
    command: str
    seconds: float
    load: float
    loop_s: float
    exit_code: int
    outcome: str = ""  # the verdict and its reasons, or what the command said
    extra: dict[str, Any] = field(default_factory=dict)


class Run:
    def __init__(self, repo: Path, root: Path, jobs: int) -> None:
        self.repo, self.root, self.jobs = repo, root, jobs
        self.steps: list[Step] = []
        self.output = ""  # the last command's stdout
        self.cache = Path(tempfile.mkdtemp(prefix="cache-", dir=root))

    def andgate(self, name: str, *args: str) -> Step:
        loop = load_loop()
        argv = [sys.executable, "-m", "andgate", *args]
        result = bench.timed(argv, self.repo, bench.gate_env(self.root, self.cache))
        out = result.proc.stdout.decode("utf-8", "replace")
        step = Step(name, "andgate " + " ".join(args), result.seconds, result.load, loop,
                    result.proc.returncode, _said(out))  # fmt: skip
        step.extra["first_line"] = (out.splitlines() or [""])[0][:300]
        self.output = out
        self.steps.append(step)
        return step

    def check(self, name: str, *args: str) -> Step:
        artifacts = self.root / f"artifacts-{len(self.steps)}"
        step = self.andgate(
            name, "check", *args, "--jobs", str(self.jobs), "--today", TODAY,
            "--artifacts", str(artifacts), "--quiet",
        )  # fmt: skip
        verdict = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
        codes = [r["code"] for r in verdict["reasons"]]
        warnings = [w["code"] for w in verdict["warnings"]]
        step.outcome = verdict["verdict"] + (f" [{', '.join(codes)}]" if codes else "")
        step.outcome += f"; warnings {', '.join(warnings)}" if warnings else ""
        step.command = re.sub(r" --artifacts \S+", "", step.command)
        step.extra = {"counts": verdict["counts"], "reasons": verdict["reasons"]}
        return step

    def pytest(self) -> Step:
        bench.timed(bench.pytest_argv(), self.repo, bench.base_env())  # warm-up
        loop = load_loop()
        result = bench.timed(bench.pytest_argv(), self.repo, bench.base_env())
        step = Step("pytest -q (warm)", "pytest -q", result.seconds, result.load, loop,
                    result.proc.returncode, bench.summary_line(result.proc))  # fmt: skip
        self.steps.append(step)
        return step


def _said(out: str) -> str:
    """The line a command ends on (`result: ...`), or its first."""
    lines = [line for line in out.splitlines() if line.strip()]
    ends = [line for line in lines if line.startswith("result:")]
    return (ends or lines or [""])[-1][:200]


def edit(repo: Path, rel: str, search: str, replace: str) -> None:
    path = repo / rel
    text = path.read_text(encoding="utf-8")
    if text.count(search) != 1:
        raise SystemExit(f"{rel}: {search!r} found {text.count(search)} times, want 1")
    path.write_text(text.replace(search, replace), encoding="utf-8")


def owners_edits(repo: Path) -> None:
    """What the owner does after init: owners, the folder glob init suggests for
    toolz/tests (test_package.py needs an installed distribution: left out), one
    accepted property, one known-bad fixture (a real `git diff`)."""
    manifest = repo / MANIFEST
    text = manifest.read_text(encoding="utf-8")
    suggestion = re.search(rf'^\s*#\s+globs: (\["{HOME}/\*\*/\*\.py".*?\])', text, re.M)
    if suggestion is None:
        raise SystemExit(f"init suggested no folder glob for {HOME}:\n{text}")
    globs = [*json.loads(suggestion.group(1)), f"!{HOME}/test_package.py"]
    proposed = next(line for line in text.splitlines() if line.startswith("    globs: "))
    text = text.replace(proposed, f"    globs: {json.dumps(globs)}", 1)
    manifest.write_text(text.replace("owners: []", f"owners: [{OWNER[0]}]"), encoding="utf-8")
    prop = repo / HOME / "properties"
    (prop / "test_partition_all_property.py").write_text(PROPERTY_TEST, encoding="utf-8")
    invariants = prop / "INVARIANTS.md"
    invariants.write_text(invariants.read_text(encoding="utf-8") + f"- {INVARIANT}\n")
    path, line = TAKE
    edit(repo, path, line, line.replace("seq, n)", "seq, n - 1)"))
    patch = git(repo, "diff", "--no-color", "--no-ext-diff", "--", path)
    git(repo, "checkout", "--", path)
    (repo / HOME / "oracles/known_bad/kb_take_one_short.patch").write_text(patch + "\n")


def measure(source: str, jobs: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="andgate-flat-"))
    repo = root / "toolz"
    try:
        git(root, "clone", "-q", source, str(repo))
        upstream = git(repo, "rev-parse", "HEAD").strip()
        git(repo, "checkout", "-q", "-b", "adopt")
        r = Run(repo, root, jobs)
        r.pytest()
        init = r.andgate("init", "init", "--github", "--agents", "AGENTS.md")
        init.extra["manifest"] = manifest_lines(repo)
        init.extra["report"] = r.output.splitlines()
        init.outcome = "; ".join(
            line.strip() for line in init.extra["report"] if line.startswith(INIT_SAYS)
        )
        owners_edits(repo)
        r.andgate(
            "freeze add", "freeze", "add", f"{HOME}/test_package.py::test_has_version",
            "--reason", "needs an installed distribution (toolz.__version__)",
            "--owner", OWNER[0], "--days", "14", "--today", TODAY,
        )  # fmt: skip
        mutants = ["--paths", "toolz/itertoolz.py", "--budget", "120", "--jobs", str(jobs)]
        mutants += ["--out", str(root / "proposals")]
        r.andgate("known-bad mutants", "known-bad", "mutants", *mutants)
        r.andgate("lock update", "lock", "update")
        r.andgate("replay-known-bad", "replay-known-bad", "--jobs", str(jobs))
        classify = r.andgate("classify", "classify", "--json")
        classify.extra["counts"] = json.loads(r.output)["counts"]
        classify.outcome = ", ".join(f"{k} {v}" for k, v in classify.extra["counts"].items())
        r.andgate("doctor", "doctor", "--jobs", str(jobs), "--today", TODAY)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "adopt andgate (owner)", who=OWNER)
        adoption = git(repo, "rev-parse", "HEAD").strip()
        r.check("check: the adoption (base: upstream)", "--base", upstream)
        agent_changes(r, repo, adoption)
        machine = bench.machine()
        machine["andgate_source"].pop("path", None)  # this machine's folders stay out
        result = {
            "library": "toolz",
            "source": source if "://" in source else "a local clone of " + DEFAULT_SOURCE,
            "upstream": upstream,
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": "python benchmarks/flat_adoption.py SOURCE --jobs " + str(jobs),
            "machine": machine,
            "steps": [asdict(s) for s in r.steps],
        }
        return json.loads(json.dumps(result).replace(str(root), "TMP"))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def manifest_lines(repo: Path) -> list[str]:
    """Where init put the trust folders and what it proposed (the manifest's keys)."""
    text = (repo / MANIFEST).read_text(encoding="utf-8")
    found = re.findall(r"(?m)^\s*(globs|invariants_file|known_bad_dir|lock_file): (.*)$", text)
    return [f"{key}: {value}" for key, value in found]


def agent_changes(r: Run, repo: Path, adoption: str) -> None:
    def commit(message: str, who: tuple[str, str] = AGENT) -> str:
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", message, who=who)
        return git(repo, "rev-parse", "HEAD").strip()

    git(repo, "checkout", "-q", "-b", "honest", adoption)
    edit(repo, "toolz/itertoolz.py", '    """ The first n elements of a sequence',
         '    """ The first n elements of a sequence (or iterator)')  # fmt: skip
    (repo / HOME / "test_take_agent.py").write_text(AGENT_TEST, encoding="utf-8")
    commit("take's docstring, and a test of it")
    r.check("check: honest change + a test file under the oracle folder glob", "--base", adoption)

    git(repo, "checkout", "-q", "-b", "refactor", adoption)
    see_also = "    See Also:\n        drop\n        tail\n"
    edit(repo, "toolz/itertoolz.py", see_also, see_also + "        take_nth\n")
    commit("take's See Also names take_nth")
    r.check("check: refactor next to the fixture's bug", "--base", adoption)
    r.andgate("known-bad refresh", "known-bad", "refresh", "--jobs", str(r.jobs))
    commit("refresh kb_take_one_short for the new docstring")
    r.check("check: with the refreshed fixture, unapproved", "--base", adoption)
    r.check("check: with the refreshed fixture, the owner approves", "--base", adoption,
            "--approved-by", OWNER[0])  # fmt: skip

    git(repo, "checkout", "-q", "-b", "dispute", adoption)
    r.andgate("dispute", "dispute", f"{HOME}/test_itertoolz.py::test_take", "--reason",
              "The task says take keeps the last n items.", "--base", adoption)  # fmt: skip
    commit("dispute test_take and stop")
    r.check("check: a change that only disputes an oracle", "--base", adoption)


def print_table(result: dict[str, Any]) -> None:
    print(f"toolz {result['upstream'][:12]}, {result['date']}")
    print("| step | command | s | exit | outcome | load |")
    print("|---|---|---:|---:|---|---:|")
    for s in result["steps"]:
        command = s["command"].replace(" --today " + TODAY, "").replace("|", "\\|")
        command = re.sub(r"([0-9a-f]{12})[0-9a-f]{28}", r"\1", command)  # short shas
        command = command.replace(" --out TMP/proposals", "")
        print(f"| {s['name']} | `{command}` | {s['seconds']:.2f} | {s['exit_code']} | "
              f"{s['outcome'].replace('|', '/')} | {s['load']:.1f} |")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", default=DEFAULT_SOURCE)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    os.environ.pop("ANDGATE_APPROVED_BY", None)
    result = measure(args.source, args.jobs)
    print_table(result)
    if args.out is not None:
        data = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
        data["flat_adoption"] = result
        args.out.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
