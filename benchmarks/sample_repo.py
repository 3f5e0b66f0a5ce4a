"""The benchmark's generated repository, built from the real file tree in `sample/`.

`sample/` holds everything static, as files ruff lints like the rest of andgate:

- `sample/upstream/`: the package `benchlib` (five modules, `rules.py` with the 16
  rule functions the known-bad fixtures break), `pytest.ini`, `.gitignore`;
- `sample/overlay/`: the trust overlay an owner commits on top: the manifest,
  `conftest.py`, the locked fixture `cases.json`, the seeded property files and
  their accepted invariants (`INVARIANTS.md`);
- `sample/change/`: the honest change by another author (the fix in
  `benchlib/text.py:truncate` and its regression test).

Only the parametrised multiplication is code: N oracle files of M plain tests and
N untrusted files of M parametrised tests with literal expected values computed
here (`TEMPLATES`), the timing tests frozen by node id and their freeze file, the
lock of the fixtures, and the K known-bad fixtures, each the real `git diff` of a
one-constant bug in `rules.py`, made when the repository is built.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SAMPLE = Path(__file__).resolve().parent / "sample"
OWNER = ("alice", "alice@example.org")
AGENT = ("coding-agent", "agent@example.org")
RULES = 16
# Fixture order: the first 4 (and the first 2, 8) are spread through the oracle order too.
FIXTURE_ORDER = (0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15)
# The property files of sample/overlay, in the order --quick keeps the first of.
PROPERTY_FILES = ("text", "codec", "mathx", "grid", "primes")
# Dotfiles are stored without their dot (as in andgate's own samples).
STORED_NAMES = {"_gitignore": ".gitignore"}
MUST_FAIL = "oracle_must_fail_known_bad: true"


@dataclass(frozen=True)
class Sizes:
    oracle_files: int
    oracle_per_file: int
    property_files: int
    property_per_file: int
    seeds: int
    unit_files: int
    unit_functions: int
    unit_cases: int
    flakes: int

    @property
    def counts(self) -> dict[str, int]:
        return {
            "oracle": self.oracle_files * self.oracle_per_file,
            "property": self.property_files * self.property_per_file * self.seeds,
            "untrusted": self.unit_files * self.unit_functions * self.unit_cases + 1,
            "frozen_flake": self.flakes,
        }

    def scaled(self, factor: int) -> Sizes:
        """N times the oracle and untrusted files (the gate-side linearity runs)."""
        return Sizes(
            self.oracle_files * factor,
            self.oracle_per_file,
            self.property_files,
            self.property_per_file,
            self.seeds,
            self.unit_files * factor,
            self.unit_functions,
            self.unit_cases,
            self.flakes,
        )


FULL = Sizes(10, 30, 5, 4, 5, 30, 5, 10, 10)
QUICK = Sizes(3, 15, 2, 2, 5, 6, 5, 10, 4)


def load_layer(name: str) -> dict[str, str]:
    """One layer of sample/ as path -> text."""
    folder = SAMPLE / name
    files = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        rel = path.relative_to(folder).as_posix()
        files[STORED_NAMES.get(rel, rel)] = path.read_text(encoding="utf-8")
    return files


def package_namespace() -> dict[str, Any]:
    """benchlib's public functions, imported from sample/upstream, so the generated
    tests get literal expected values."""
    sys.path.insert(0, str(SAMPLE / "upstream"))
    try:
        package = importlib.import_module("benchlib")
    finally:
        sys.path.remove(str(SAMPLE / "upstream"))
    return {name: getattr(package, name) for name in package.__all__}


# -- generated test cases ----------------------------------------------------------------

WORDS = tuple(
    re.findall(
        r"\w+",
        """alpha beta gamma delta merge gate oracle seed tree branch commit patch fixture
        owner review agent test suite queue ledger basket price rule value cache token
        river stone cloud light north south early late quick slow""",
    )
)


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _runs(rng: random.Random) -> str:
    return "".join(rng.choice("abcx") * rng.randint(1, 9) for _ in range(rng.randint(30, 60)))


def _grid(rng: random.Random, h: int = 8, w: int = 10) -> list[str]:
    rows = ["".join(rng.choice("...#") for _ in range(w)) for _ in range(h)]
    return ["." + rows[0][1:], *rows[1:]]


@dataclass(frozen=True)
class Template:
    """One kind of check: `expr` over `params` is evaluated here for the expected value."""

    name: str
    params: str
    expr: str
    uses: tuple[str, ...]
    make: Callable[[random.Random], tuple[Any, ...]]


TEMPLATES = (
    Template(
        "primes_count",
        "n",
        "len(primes_upto(n))",
        ("primes_upto",),
        lambda r: (r.randint(3000, 8000),),
    ),
    Template(
        "checksum",
        "blob, reps",
        "checksum(bytes(blob) * reps)",
        ("checksum",),
        lambda r: ([r.randrange(256) for _ in range(16)], r.randint(30, 80)),
    ),
    Template(
        "rle",
        "text",
        "len(rle_encode(rle_decode(rle_encode(text))))",
        ("rle_encode", "rle_decode"),
        lambda r: (_runs(r) * 3,),
    ),
    Template("slug", "title", "slugify(title)", ("slugify",), lambda r: (_sentence(r, 8).title(),)),
    Template(
        "wrap",
        "text, width",
        "wrap(text, width)[-1]",
        ("wrap",),
        lambda r: (_sentence(r, 120), r.randint(20, 60)),
    ),
    Template(
        "count_words",
        "text",
        "sorted(count_words(text).items())[:3]",
        ("count_words",),
        lambda r: (_sentence(r, 200),),
    ),
    Template(
        "chunk_tail",
        "n, k",
        "chunk(range(n), k)[-1]",
        ("chunk",),
        lambda r: (r.randint(2000, 6000), r.randint(3, 9)),
    ),
    Template(
        "median",
        "seed, n",
        "median([(i * seed) % 1009 for i in range(n)])",
        ("median",),
        lambda r: (r.randint(2, 1000), r.randint(500, 1500)),
    ),
    Template(
        "variance",
        "seed, n",
        "round(variance([(i * seed) % 97 for i in range(n)]), 6)",
        ("variance",),
        lambda r: (r.randint(2, 1000), r.randint(500, 1500)),
    ),
    Template(
        "gcd",
        "xs",
        "gcd_all(xs * 50)",
        ("gcd_all",),
        lambda r: ([r.randint(1, 40) * 6 for _ in range(20)],),
    ),
    Template(
        "base",
        "n, b",
        "from_base(to_base(n, b), b) == n and to_base(n, b)",
        ("from_base", "to_base"),
        lambda r: (r.randrange(10**30), r.randint(2, 36)),
    ),
    Template(
        "rotate", "rows", "rotate(rotate(rows))[0]", ("rotate",), lambda r: (_grid(r, 20, 20),)
    ),
    Template(
        "flood", "rows", "flood_count(rows, 0, 0)", ("flood_count",), lambda r: (_grid(r, 16, 16),)
    ),
    Template(
        "life",
        "cells, steps",
        "len(life(cells, steps))",
        ("life",),
        lambda r: ({(r.randrange(12), r.randrange(12)) for _ in range(40)}, r.randint(4, 10)),
    ),
    Template(
        "transpose", "rows", "transpose(rows)[1]", ("transpose",), lambda r: (_grid(r, 12, 12),)
    ),
)


def expected(template: Template, args: tuple[Any, ...], namespace: Mapping[str, Any]) -> Any:
    names = [p.strip() for p in template.params.split(",")]
    return eval(template.expr, {**namespace, **dict(zip(names, args, strict=True))})


def _literal(args: tuple[Any, ...]) -> str:
    return repr(args[0]) if len(args) == 1 else repr(args)


def _imports(names: set[str]) -> str:
    return f"from benchlib import {', '.join(sorted(names))}\n"


# -- generated test files ----------------------------------------------------------------


def killer_positions(total: int) -> dict[int, int]:
    """Oracle order position -> rule: killers spread evenly, never at position 0."""
    return {int((r + 0.5) * total / RULES): r for r in range(RULES)}


CASES_LOAD = (
    '\nCASES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "cases.json")'
    ".read_text())\n"
)
CASES_TEST = (
    "def test_recorded_clamp_cases():\n"
    '    for x, lo, hi, expected in CASES["clamp"]:\n'
    "        assert clamp(x, lo, hi) == expected\n"
)


def oracle_files(sizes: Sizes, namespace: Mapping[str, Any]) -> tuple[dict[str, str], dict]:
    """Oracle files, and for every rule the node id of the single item that kills its bug."""
    rng = random.Random(1)
    total = sizes.oracle_files * sizes.oracle_per_file
    killers = killer_positions(total)
    files, killer_ids = {}, {}
    for f in range(sizes.oracle_files):
        path = f"tests/oracles/test_oracle_{f:02d}.py"
        uses: set[str] = set()
        body: list[str] = []
        for i in range(sizes.oracle_per_file):
            pos = f * sizes.oracle_per_file + i
            if pos == 0:
                uses.add("clamp")
                body.append(CASES_TEST)
            elif pos in killers:
                r = killers[pos]
                name = f"test_rule_{r:02d}"
                value = namespace[f"rule_{r:02d}"](list(range(300)))
                uses.add(f"rule_{r:02d}")
                body.append(
                    f"def {name}():\n    basket = list(range(300))\n"
                    f"    assert rule_{r:02d}(basket) == {value!r}\n"
                )
                killer_ids[r] = f"{path}::{name}"
            else:
                template = TEMPLATES[pos % len(TEMPLATES)]
                args = template.make(rng)
                uses.update(template.uses)
                body.append(
                    f"def test_{template.name}_{pos:03d}():\n"
                    f"    {template.params} = {_literal(args)}\n"
                    f"    assert {template.expr} == {expected(template, args, namespace)!r}\n"
                )
        header = f'"""Human-owned oracle tests (owner: alice), batch {f:02d}."""\n\n'
        if f == 0:
            header += "import json\nimport pathlib\n\n"
        header += _imports(uses)
        if f == 0:
            header += CASES_LOAD
        files[path] = header + "\n\n" + "\n\n".join(body)
    return files, killer_ids


def unit_files(sizes: Sizes, namespace: Mapping[str, Any]) -> dict[str, str]:
    rng = random.Random(2)
    files = {}
    for f in range(sizes.unit_files):
        uses: set[str] = set()
        body = []
        for j in range(sizes.unit_functions):
            template = TEMPLATES[(f * sizes.unit_functions + j) % len(TEMPLATES)]
            uses.update(template.uses)
            cases = []
            for _ in range(sizes.unit_cases):
                args = template.make(rng)
                cases.append(
                    f"        ({', '.join(map(repr, args))}, "
                    f"{expected(template, args, namespace)!r}),\n"
                )
            body.append(
                f'@pytest.mark.parametrize(\n    "{template.params}, expected",\n    [\n'
                + "".join(cases)
                + f"    ],\n)\ndef test_{template.name}_{j}({template.params}, expected):\n"
                f"    assert {template.expr} == expected\n"
            )
        files[f"tests/unit/test_unit_{f:02d}.py"] = (
            f'"""Unit tests, batch {f:02d}."""\n\nimport pytest\n\n'
            + _imports(uses)
            + "\n\n"
            + "\n\n".join(body)
        )
    return files


def property_files(sizes: Sizes, overlay: Mapping[str, str]) -> dict[str, str]:
    """The first `property_files` property files of the overlay, each cut to its first
    `property_per_file` test functions and `seeds` seeds, and INVARIANTS.md listing the
    invariants of the files kept (the full sample is kept as it is)."""
    files, kept = {}, set()
    for name in PROPERTY_FILES[: sizes.property_files]:
        path = f"tests/properties/test_prop_{name}.py"
        text = _first_tests(overlay[path], sizes.property_per_file)
        seeds = list(range(1, sizes.seeds + 1))
        text, n = re.subn(r"^SEEDS = .*$", f"SEEDS = {seeds!r}", text, count=1, flags=re.M)
        assert n == 1, path
        files[path] = text
        kept.update(re.findall(r"^# INVARIANT: (.*)$", text, re.M))
    invariants = "tests/properties/INVARIANTS.md"
    lines = overlay[invariants].splitlines(keepends=True)
    files[invariants] = "".join(
        line for line in lines if not line.startswith("- ") or line[2:].rstrip("\n") in kept
    )
    return files


def _first_tests(source: str, n: int) -> str:
    """`source` without its test functions after the first n (decorators included)."""
    tests = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    ]
    if len(tests) <= n:
        return source
    lines = source.splitlines(keepends=True)
    first = min(d.lineno for d in tests[n].decorator_list) if tests[n].decorator_list else None
    cut = (first or tests[n].lineno) - 1
    return "".join(lines[:cut]).rstrip("\n") + "\n"


def flake_files(sizes: Sizes) -> tuple[dict[str, str], str]:
    path = "tests/test_timing.py"
    tests = [
        f"def test_budget_{i:02d}():\n    started = time.perf_counter()\n"
        f"    primes_upto({2000 + 100 * i})\n"
        "    assert time.perf_counter() - started < 0, "
        '"budget calibrated on the dedicated runner"\n'
        for i in range(sizes.flakes)
    ]
    text = (
        '"""Timing budgets (owner: platform-tests); too tight for shared runners."""\n\n'
        "import time\n\nfrom benchlib import primes_upto\n\n\n" + "\n\n".join(tests)
    )
    freezes = "".join(
        f'  - id: "{path}::test_budget_{i:02d}"\n'
        '    reason: "timing depends on shared runner load"\n'
        '    first_seen: "2026-11-20"\n    expires: "2026-12-10"\n'
        '    owner: "platform-tests"\n'
        for i in range(sizes.flakes)
    )
    return {path: text}, "freezes:\n" + freezes


# -- git -----------------------------------------------------------------------------------


def base_env() -> dict[str, str]:
    """The environment every measured process gets.

    PYTHONDONTWRITEBYTECODE is dropped because andgate drops it for its pytest
    children: the baseline must get the same bytecode caches. GIT_* and
    PYTEST_ADDOPTS/PYTEST_PLUGINS of the caller would change what runs, and an
    ANDGATE_CACHE_DIR of the caller would share a killer cache with this run.
    """
    drop = {"PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "ANDGATE_CACHE_DIR"}
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in drop}


def git_env(who: tuple[str, str]) -> dict[str, str]:
    date = "2026-11-24T10:00:00+00:00"
    return {
        **base_env(),
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": who[0],
        "GIT_COMMITTER_EMAIL": who[1],
        "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }


def git(repo: Path, *args: str, who: tuple[str, str] = OWNER) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=repo, env=git_env(who), capture_output=True, timeout=300, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {repo}: {proc.stderr.decode().strip()}")
    return proc.stdout.decode()


def write(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def commit(repo: Path, message: str, who: tuple[str, str] = OWNER) -> str:
    git(repo, "add", "-A", who=who)
    git(repo, "commit", "-q", "--no-verify", "-m", message, who=who)
    return git(repo, "rev-parse", "HEAD").strip()


def lock_text(root: Path) -> str:
    return "".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(root).as_posix()}\n"
        for p in sorted(root.rglob("*"))
        if p.is_file()
    )


def diff_of(repo: Path, path: str, search: str, replace: str) -> str:
    """A real `git diff` of one edit of a committed file; the tree is restored."""
    target = repo / path
    text = target.read_text(encoding="utf-8")
    if text.count(search) != 1:
        raise SystemExit(f"{path}: expected exactly one {search!r} to edit")
    target.write_text(text.replace(search, replace), encoding="utf-8")
    patch = git(repo, "diff", "--no-color", "--no-ext-diff")
    git(repo, "checkout", "--", ".")
    return patch


@dataclass
class BenchRepo:
    path: Path
    pairs: dict[int, tuple[str, str]]  # K -> (base sha, head sha)
    killer_ids: dict[int, str]  # rule -> oracle node id that kills its fixture
    fixtures: dict[int, tuple[int, ...]]  # K -> rules whose fixtures base holds


def rule_bug(r: int) -> tuple[str, str]:
    return f"v * (k + {r + 1}))", f"v * (k + {r + 2}))"


def build_repo(path: Path, sizes: Sizes, ks: Sequence[int]) -> BenchRepo:
    """upstream (package) -> overlay (tests, manifest) -> per K: base (K fixtures) -> head."""
    namespace = package_namespace()
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    write(path, load_layer("upstream"))
    commit(path, "benchlib upstream")
    patches = {
        r: diff_of(path, "benchlib/rules.py", *rule_bug(r))
        for r in FIXTURE_ORDER[: max(ks, default=0)]
    }
    overlay = load_layer("overlay")
    manifest = overlay.pop("tests/trust_manifest.yaml")
    if manifest.count(MUST_FAIL) != 1:
        raise SystemExit(f"sample manifest: expected one line {MUST_FAIL!r}")
    oracles, killer_ids = oracle_files(sizes, namespace)
    flakes, freeze_yaml = flake_files(sizes)
    props = {k: v for k, v in overlay.items() if not k.startswith("tests/properties/")}
    write(path, {**oracles, **unit_files(sizes, namespace), **property_files(sizes, overlay)})
    write(path, {**flakes, **props, "tests/flakes/freeze.yaml": freeze_yaml})
    write(path, {"tests/oracles/locks.sha256": lock_text(path / "tests/oracles/fixtures")})
    write(path, {"tests/trust_manifest.yaml": manifest})
    overlay_sha = commit(path, "tests and trust overlay (owner: alice)")
    change = load_layer("change")
    pairs, fixtures = {}, {}
    for k in ks:
        rules = FIXTURE_ORDER[:k]
        git(path, "checkout", "-q", "--detach", overlay_sha)
        must_fail = MUST_FAIL if k else MUST_FAIL.replace("true", "false")
        write(path, {"tests/trust_manifest.yaml": manifest.replace(MUST_FAIL, must_fail)})
        write(path, {f"tests/oracles/known_bad/kb_rule_{r:02d}.patch": patches[r] for r in rules})
        base = commit(path, f"{k} known-bad fixtures (owner: alice)")
        write(path, change)
        head = commit(path, "truncate: keep texts that already fit", who=AGENT)
        git(path, "branch", "-f", f"base-k{k}", base)
        git(path, "branch", "-f", f"head-k{k}", head)
        pairs[k], fixtures[k] = (base, head), rules
    git(path, "checkout", "-q", "main")
    return BenchRepo(path, pairs, killer_ids, fixtures)
