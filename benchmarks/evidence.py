"""What the approval evidence costs a check (issue 41): the check with it and without it.

```
python benchmarks/evidence.py [--rounds 3] [--toolz SOURCE | --no-toolz]
                              [--out benchmarks/results.json] [--keep]
```

Two corpora, each with an owner's base and four heads by the agent, every head
approved by the owner (`--approved-by alice`: the check allows, and the evidence is
what the owner reads beside the approval):

- **generated**: the generated repository of `run.py` (`sample_repo.build_repo`, full
  size, K = 4 known-bad fixtures): 10 oracle files of 30 items over `benchlib`.
- **toolz**: pytoolz/toolz at its HEAD (SOURCE: a path or URL, cloned at run time;
  nothing of it is committed here), every test file an oracle (`real_history.overlay`).

The heads:

- **no oracle edit**: the corpus's honest change (the generated repository's own; for
  toolz a docstring of `toolz/itertoolz.py`): nothing of the evidence runs;
- **loosened**: three asserts of one oracle file loosened (`==` to a weaker check: a
  membership, a length, `is not None`), the kind of edit the evidence exists for; in
  the generated repository one of them is the only item that checks its rule;
- **refactor**: the same three asserts through a helper the change extracts
  (`_same(got, expected)`), the same checks: the evidence must find nothing;
- **refactor, whole file** (generated only): every assert of that oracle file through
  the helper: 30 edited items exercising a dozen functions, where the budget binds.

Per round, interleaved: `andgate check --no-discrimination` (the evidence on, default
budget) and the same with `--no-evidence`, each through `run.py`'s gate wrapper (every
pytest process recorded), a cold killer cache for each. Per check: wall and CPU
seconds, the verdict, and from `verdict.json` `weakened` what the evidence made,
tried, left and found, and the seconds it says it added. Medians over rounds; the
difference is what the evidence costs. `--out` adds an `approval_evidence` section to
a results file and keeps the rest.
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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import real_history
import run as bench  # benchmarks/run.py: the gate wrapper, timing, the machine
from sample_repo import AGENT, FULL, build_repo, commit, git

TODAY = "2026-11-25"
EDITED = "tests/oracles/test_oracle_03.py"  # the generated repository's edited oracle file
TOOLZ_EDITED = "toolz/tests/test_itertoolz.py"
HELPER = "\n\ndef _same(got, expected):\n    assert got == expected\n"
# toolz: three asserts, each (as it is, loosened, through the helper)
TOOLZ_ASSERTS = (
    (
        "    assert list(partition_all(3, range(5))) == [(0, 1, 2), (3, 4)]\n",
        "    assert (0, 1, 2) in list(partition_all(3, range(5)))\n",
        "    _same(list(partition_all(3, range(5))), [(0, 1, 2), (3, 4)])\n",
    ),
    (
        "    assert groupby(iseven, [1, 2, 3, 4]) == {True: [2, 4], False: [1, 3]}\n",
        "    assert set(groupby(iseven, [1, 2, 3, 4])) == {True, False}\n",
        "    _same(groupby(iseven, [1, 2, 3, 4]), {True: [2, 4], False: [1, 3]})\n",
    ),
    (
        "    assert list(tail(3, 'ABCDE')) == list('CDE')\n",
        "    assert len(list(tail(3, 'ABCDE'))) == 3\n",
        "    _same(list(tail(3, 'ABCDE')), list('CDE'))\n",
    ),
)
ASSERT = re.compile(r"^    assert (?P<got>.+) == (?P<expected>.+)$", re.MULTILINE)
Edit = Callable[[str], str]


# -- the heads ------------------------------------------------------------------------------


def loosened(text: str, count: int = 3) -> str:
    """A generated oracle file with its rule's killer (the one item of the suite that
    checks that rule) and its first `count - 1` other plain `assert A == B` weakened:
    `B` is no longer compared, only that `A` is not None."""

    def weaker(match: re.Match[str]) -> str:
        return f"    assert ({match['got']}) is not None"

    rule = re.compile(r"^    assert (?P<got>rule_\d\d\(basket\)) == (?P<expected>.+)$", re.M)
    if len(rule.findall(text)) != 1:
        raise SystemExit(f"{EDITED}: expected one rule's killer to loosen")
    return _asserts(rule.sub(weaker, text), count - 1, weaker)


def through_helper(text: str, count: int | None = 3) -> str:
    """The first `count` (None: every) plain `assert A == B` as `_same(A, B)`, with the
    helper the change extracts: the same checks."""
    return _asserts(text, count, lambda m: f"    _same({m['got']}, {m['expected']})") + HELPER


def _asserts(text: str, count: int | None, rewrite: Callable[[re.Match[str]], str]) -> str:
    done = 0

    def one(match: re.Match[str]) -> str:
        nonlocal done
        plain = " and " not in match[0] and " == " not in match["got"]
        if not plain or (count is not None and done >= count):
            return match[0]
        done += 1
        return rewrite(match)

    return ASSERT.sub(one, text)


def head_with(repo: Path, base: str, path: str, edit: Edit, message: str) -> str:
    """A commit by the agent on `base` that edits one file."""
    git(repo, "checkout", "-q", "--detach", base)
    target = repo / path
    target.write_text(edit(target.read_text(encoding="utf-8")), encoding="utf-8")
    return commit(repo, message, who=AGENT)


def generated(root: Path) -> tuple[Path, str, dict[str, str]]:
    repo = build_repo(root / "generated", FULL, (4,))
    base, honest = repo.pairs[4]
    heads = {
        "no oracle edit": honest,
        "loosened": head_with(repo.path, base, EDITED, loosened, "oracle: less brittle"),
        "refactor": head_with(repo.path, base, EDITED, through_helper, "oracle: a helper"),
        "refactor, whole file": head_with(
            repo.path,
            base,
            EDITED,
            lambda t: through_helper(t, None),
            "oracle: the helper everywhere",
        ),
    }
    return repo.path, base, heads


def toolz(root: Path, source: str) -> tuple[Path, str, dict[str, str]]:
    repo = root / "toolz"
    real_history.git(root, "clone", "-q", source, str(repo))
    git(repo, "checkout", "-q", "--detach", "HEAD")
    real_history.overlay(repo, real_history.PROFILES["toolz"], ())
    base = git(repo, "rev-parse", "HEAD").strip()

    def rewrite(which: int) -> Edit:
        def edit(text: str) -> str:
            for asserts in TOOLZ_ASSERTS:
                if text.count(asserts[0]) != 1:
                    raise SystemExit(f"{TOOLZ_EDITED}: {asserts[0].strip()!r} not found once")
                text = text.replace(asserts[0], asserts[which])
            return text + (HELPER if which == 2 else "")

        return edit

    def docstring(text: str) -> str:
        return text.replace('"""', '"""A docstring edit by the agent. ', 1)

    heads = {
        "no oracle edit": head_with(repo, base, "toolz/itertoolz.py", docstring, "docs"),
        "loosened": head_with(repo, base, TOOLZ_EDITED, rewrite(1), "tests: less brittle"),
        "refactor": head_with(repo, base, TOOLZ_EDITED, rewrite(2), "tests: a helper"),
    }
    return repo, base, heads


# -- measuring ------------------------------------------------------------------------------


def check(repo: Path, base: str, head: str, root: Path, extra: Sequence[str]) -> dict[str, Any]:
    stem = f"check-{time.monotonic_ns()}"
    out, artifacts = root / f"{stem}.gate.json", root / f"{stem}-artifacts"
    cache = Path(tempfile.mkdtemp(prefix="killers-", dir=root))
    argv = [sys.executable, "-c", bench.GATE_WRAPPER, str(out), "-", "check"]
    argv += ["--base", base, "--head", head, "--today", TODAY, "--jobs", "2"]
    argv += ["--approved-by", "alice", "--no-discrimination", "--artifacts", str(artifacts)]
    argv += ["--quiet", *extra]
    result = bench.timed(argv, repo, bench.gate_env(root, cache))
    verdict = json.loads((artifacts / "verdict.json").read_text(encoding="utf-8"))
    gate = json.loads(out.read_text(encoding="utf-8"))
    stages = bench.stages(gate)
    weakened = verdict.get("weakened") or {}
    shutil.rmtree(artifacts, ignore_errors=True)
    return {
        "seconds": round(result.seconds, 2),
        "cpu_s": round(result.cpu, 2),
        "load": round(result.load, 2),
        "verdict": verdict["verdict"],
        "reasons": [f"{r['code']}: {r['detail'][:200]}" for r in verdict["reasons"]],
        "evidence": {
            key: weakened.get(key)
            for key in (
                "mutants_made",
                "mutants_tried",
                "mutants_left",
                "seconds",
                "out_of_budget",
                "complete",
                "error",
                "not_measured",
            )
        }
        | {
            "mutants_weakened": len(weakened.get("mutants") or []),
            "hidden_failures": len(weakened.get("hidden_failures") or []),
            "edited_items": len(weakened.get("edited_items") or []),
            "functions": len(weakened.get("functions") or []),
        }
        if weakened
        else None,
        "evidence_processes": {
            side: stages.get(f"approval evidence, {side}: processes", 0)
            for side in ("base's side", "head's side")
        },
    }


def measure(
    corpus: str, built: tuple[Path, str, Mapping[str, str]], root: Path, rounds: int
) -> dict[str, Any]:
    repo, base, heads = built
    check(repo, base, heads["no oracle edit"], root, ())  # warm-up: bytecode, the page cache
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {
        name: {"evidence": [], "no_evidence": []} for name in heads
    }
    for round_ in range(rounds):
        for name, head in heads.items():
            print(f"{corpus} round {round_ + 1}: {name}", file=sys.stderr, flush=True)
            samples[name]["evidence"].append(check(repo, base, head, root, ()))
            samples[name]["no_evidence"].append(check(repo, base, head, root, ("--no-evidence",)))
    return {name: {**runs, "summary": summarize(runs)} for name, runs in samples.items()}


def summarize(runs: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    on = statistics.median(r["seconds"] for r in runs["evidence"])
    off = statistics.median(r["seconds"] for r in runs["no_evidence"])
    said = [r["evidence"]["seconds"] for r in runs["evidence"] if r["evidence"]]
    return {
        "evidence_s": round(on, 2),
        "no_evidence_s": round(off, 2),
        "added_s": round(on - off, 2),
        "ratio": round(on / off, 2) if off else None,
        "evidence_says_s": round(statistics.median(said), 1) if said else None,
        "verdicts": sorted({r["verdict"] for k in runs for r in runs[k]}),
        "found": sorted(
            {
                (r["evidence"]["mutants_weakened"], r["evidence"]["hidden_failures"])
                for r in runs["evidence"]
                if r["evidence"]
            }
        ),
    }


def print_report(result: Mapping[str, Any]) -> None:
    header = (
        f"{'corpus':10s} {'head':22s} {'evidence s':>10s} {'without s':>9s} {'added s':>8s} "
        f"{'x':>5s}  mutants made/tried/left, weakened, hidden"
    )
    print(header)
    for corpus, heads in result["corpora"].items():
        for name, measured in heads.items():
            s = measured["summary"]
            last = measured["evidence"][-1]["evidence"]
            what = "nothing ran"
            if last:
                what = (
                    f"{last['mutants_made']}/{last['mutants_tried']}/{last['mutants_left']}, "
                    f"{last['mutants_weakened']}, {last['hidden_failures']}"
                )
            print(
                f"{corpus:10s} {name:22s} {s['evidence_s']:10.2f} {s['no_evidence_s']:9.2f} "
                f"{s['added_s']:8.2f} {s['ratio'] or 0:5.2f}  {what}"
            )


def write_out(path: Path, result: dict[str, Any], section: str) -> None:
    """Add (or replace) one section; keep everything else already there."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data[section] = result
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument(
        "--toolz", default=real_history.DEFAULT_SOURCE, metavar="SOURCE", help="toolz's repository"
    )
    parser.add_argument("--no-toolz", action="store_true", help="the generated repository only")
    parser.add_argument("--out", type=Path, default=None, help="results file to add to")
    parser.add_argument("--section", default="approval_evidence", help="its section in --out")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    return parser.parse_args(argv)


def command(args: argparse.Namespace) -> str:
    """How it was run, with this machine's folders named by role (SOURCE, OUT)."""
    words = ["python", "benchmarks/evidence.py", "--rounds", str(args.rounds)]
    if args.no_toolz:
        words.append("--no-toolz")
    elif args.toolz != real_history.DEFAULT_SOURCE:
        words += ["--toolz", args.toolz if "://" in args.toolz else "SOURCE"]
    if args.out is not None:
        words += ["--out", "OUT"]
    return " ".join(words)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="andgate-evidence-"))
    started = time.monotonic()
    try:
        corpora = {"generated": measure("generated", generated(root), root, args.rounds)}
        if not args.no_toolz:
            corpora["toolz"] = measure("toolz", toolz(root, args.toolz), root, args.rounds)
        machine = bench.machine()
        machine["andgate_source"].pop("path", None)  # this machine's folders stay out
        result: dict[str, Any] = {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": command(args),
            "machine": machine,
            "cpus": os.cpu_count(),
            "corpora": corpora,
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
