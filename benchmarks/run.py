"""How much does `andgate check` cost compared with the `pytest -q` a user runs today?

`python benchmarks/run.py` builds, in a temporary folder, a realistic repository:
a small package (`benchlib`) and about 2,000 test items (300 oracle, 100 property
items, 1,500 untrusted, 10 frozen flakes; every body does a little real work),
with K known-bad fixtures for K in `--ks` (0, 4, 16). Each known-bad fixture is
real `git diff` output of a bug in `benchlib/rules.py` that exactly one oracle
item catches, and those killer items are spread evenly through the oracle order.

For each K the base commit holds the trust overlay with K fixtures and the head
commit is an honest change (a production fix plus one new untrusted test) that
the gate must allow. One run measures, interleaved, with repeats and medians:

- `pytest -q` on the whole suite in a clean clone of head (the baseline);
- `andgate check` for each K with `--jobs 1` and `--jobs 2`;
- `pytest -q <killer node id>` for each killer item (start-up + the one item);
- the peak RSS of the gate process itself (not of its pytest children).

It prints a table and writes `benchmarks/results.json`. `--profile` also runs one
instrumented check (largest K, `--jobs 2`) and reports where its time goes.
Standard library only (plus andgate, pytest and PyYAML, which andgate needs).
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
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TODAY = "2026-11-25"
OWNER = ("alice", "alice@example.org")
AGENT = ("coding-agent", "agent@example.org")
TIMEOUT = 1800.0
RSS_LIMIT_MIB = 150.0
K0_RATIO_LIMIT = 1.25
REPLAY_SLACK = 1.2
RULES = 16
# Fixture order: the first 4 (and the first 2, 8) are spread through the oracle order too.
FIXTURE_ORDER = (0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15)


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


FULL = Sizes(10, 30, 5, 4, 5, 30, 5, 10, 10)
QUICK = Sizes(3, 15, 2, 2, 5, 6, 5, 10, 4)

# -- the package under test ------------------------------------------------------------

TEXT_PY = '''\
"""Text helpers."""

import re


def slugify(text):
    """Lower-case words joined by single dashes."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def chunk(seq, n):
    """Split seq into lists of n items; the last one may be shorter."""
    if n < 1:
        raise ValueError("n must be at least 1")
    items = list(seq)
    return [items[i : i + n] for i in range(0, len(items), n)]


def wrap(text, width):
    """Greedy word wrap: lines of at most width characters (longer words stand alone)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def count_words(text):
    """How often each word occurs, in alphabetical order."""
    counts = {}
    for word in re.findall(r"[a-z']+", text.lower()):
        counts[word] = counts.get(word, 0) + 1
    return dict(sorted(counts.items()))


def truncate(text, limit):
    """text cut to at most limit characters, ending in '...' when it was cut."""
    if limit < 3:
        raise ValueError("limit must be at least 3")
    return text[: limit - 3] + "..."
'''

HONEST_FIX = (
    '        raise ValueError("limit must be at least 3")\n    return text[',
    '        raise ValueError("limit must be at least 3")\n'
    "    if len(text) <= limit:\n        return text\n    return text[",
)

HONEST_TEST = '''\
"""truncate keeps short texts as they are (regression test for the fix)."""

from benchlib import truncate


def test_truncate_keeps_short_text():
    assert truncate("short", 10) == "short"
    assert truncate("a" * 20, 10) == "aaaaaaa..."
'''

MATHX_PY = '''\
"""Number helpers."""

import math


def clamp(x, lo, hi):
    """x limited to the closed range [lo, hi]."""
    return max(lo, min(x, hi))


def mean(xs):
    """Arithmetic mean of a non-empty sequence."""
    xs = list(xs)
    if not xs:
        raise ValueError("mean of an empty sequence")
    return sum(xs) / len(xs)


def median(xs):
    """Middle value (mean of the two middle values for an even count)."""
    s = sorted(xs)
    if not s:
        raise ValueError("median of an empty sequence")
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def variance(xs):
    """Population variance."""
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)


def primes_upto(n):
    """All primes <= n, by the sieve of Eratosthenes."""
    if n < 2:
        return []
    sieve = bytearray([1]) * (n + 1)
    sieve[0] = sieve[1] = 0
    for p in range(2, math.isqrt(n) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytearray(len(range(p * p, n + 1, p)))
    return [i for i, flag in enumerate(sieve) if flag]


def gcd_all(xs):
    """Greatest common divisor of all values (0 for an empty sequence)."""
    g = 0
    for x in xs:
        g = math.gcd(g, x)
    return g
'''

CODEC_PY = '''\
"""Small encoders."""

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def rle_encode(text):
    """Run-length encoding as (character, count) pairs."""
    out = []
    for ch in text:
        if out and out[-1][0] == ch:
            out[-1] = (ch, out[-1][1] + 1)
        else:
            out.append((ch, 1))
    return out


def rle_decode(pairs):
    """Inverse of rle_encode."""
    return "".join(ch * count for ch, count in pairs)


def checksum(data):
    """Adler-32 style checksum, computed in pure Python."""
    a, b = 1, 0
    for byte in data:
        a = (a + byte) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


def to_base(n, base):
    """Non-negative n written in base 2..36."""
    if n == 0:
        return "0"
    digits = []
    while n:
        n, r = divmod(n, base)
        digits.append(DIGITS[r])
    return "".join(reversed(digits))


def from_base(text, base):
    """Inverse of to_base."""
    value = 0
    for ch in text:
        value = value * base + DIGITS.index(ch)
    return value
'''

GRID_PY = '''\
"""Grids as lists of equal-length strings."""

from collections import deque


def transpose(rows):
    return ["".join(col) for col in zip(*rows)]


def rotate(rows):
    """Rotate a quarter turn clockwise."""
    return ["".join(col) for col in zip(*reversed(rows))]


def flood_count(rows, r, c):
    """Number of '.' cells connected to (r, c) (0 when (r, c) is a wall)."""
    if rows[r][c] != ".":
        return 0
    seen, todo = {(r, c)}, deque([(r, c)])
    while todo:
        y, x = todo.popleft()
        for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
            if 0 <= ny < len(rows) and 0 <= nx < len(rows[0]) and (ny, nx) not in seen:
                if rows[ny][nx] == ".":
                    seen.add((ny, nx))
                    todo.append((ny, nx))
    return len(seen)


def life(cells, steps, size=12):
    """Game of life on a size x size torus; cells is a set of (row, col)."""
    cells = set(cells)
    for _ in range(steps):
        counts = {}
        for y, x in cells:
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    if dy or dx:
                        key = ((y + dy) % size, (x + dx) % size)
                        counts[key] = counts.get(key, 0) + 1
        cells = {k for k, n in counts.items() if n == 3 or (n == 2 and k in cells)}
    return cells
'''


def rule_source(r: int) -> str:
    return f'''

def rule_{r:02d}(values):
    """Pricing rule {r}: a weighted checksum of the basket."""
    total = {r + 3}
    for k, v in enumerate(values):
        total = (total * {31 + 2 * r} + v * (k + {r + 1})) % 100003
    return total
'''


def rule_bug(r: int) -> tuple[str, str]:
    return f"v * (k + {r + 1}))", f"v * (k + {r + 2}))"


RULES_PY = '"""Pricing rules, one small function each."""\n' + "".join(
    rule_source(r) for r in range(RULES)
)
MODULES = {
    "text": TEXT_PY,
    "mathx": MATHX_PY,
    "codec": CODEC_PY,
    "grid": GRID_PY,
    "rules": RULES_PY,
}


def package_namespace() -> dict[str, Any]:
    """The package's functions, executed here so tests get literal expected values."""
    namespace: dict[str, Any] = {}
    for source in MODULES.values():
        module: dict[str, Any] = {}
        exec(compile(source, "<benchlib>", "exec"), module)
        namespace.update({k: v for k, v in module.items() if not k.startswith("_")})
    return namespace


def init_source(namespace: Mapping[str, Any]) -> str:
    lines = ['"""benchlib: the package andgate\'s benchmark gates."""', ""]
    public = []
    for name, source in MODULES.items():
        names = sorted(re.findall(r"^def (\w+)", source, re.M))
        public += names
        lines.append(f"from benchlib.{name} import {', '.join(names)}")
    lines += ["", f"__all__ = {sorted(public)!r}", ""]
    return "\n".join(lines)


# -- test cases ----------------------------------------------------------------------

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


# -- test files ------------------------------------------------------------------------


def killer_positions(total: int) -> dict[int, int]:
    """Oracle order position -> rule: killers spread evenly, never at position 0."""
    return {int((r + 0.5) * total / RULES): r for r in range(RULES)}


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


CASES_LOAD = (
    '\nCASES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "cases.json")'
    ".read_text())\n"
)
CASES_TEST = (
    "def test_recorded_clamp_cases():\n"
    '    for x, lo, hi, expected in CASES["clamp"]:\n'
    "        assert clamp(x, lo, hi) == expected\n"
)
CASES_JSON = json.dumps(
    {"clamp": [[5, 0, 10, 5], [-1, 0, 10, 0], [11, 0, 10, 10], [3, 3, 3, 3], [7, -2, 2, 2]]}
)


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


PROPERTIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "text",
        "chunk, wrap and slugify keep the words of their input, in order",
        (
            "def test_chunk_roundtrip(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(60):\n        n = rng.randint(1, 7)\n"
            "        seq = [rng.randint(0, 9) for _ in range(rng.randint(0, 40))]\n"
            "        pieces = chunk(seq, n)\n"
            "        assert [x for p in pieces for x in p] == seq\n"
            "        assert all(len(p) == n for p in pieces[:-1])\n",
            "def test_wrap_keeps_words(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(40):\n"
            "        words = [rng.choice(WORDS) for _ in range(rng.randint(0, 30))]\n"
            "        lines = wrap(' '.join(words), rng.randint(5, 40))\n"
            "        assert ' '.join(lines).split() == words\n",
            "def test_wrap_respects_width(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(40):\n        width = rng.randint(6, 40)\n"
            "        text = ' '.join(rng.choice(WORDS) for _ in range(30))\n"
            "        assert all(len(line) <= width or ' ' not in line "
            "for line in wrap(text, width))\n",
            "def test_slugify_idempotent(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(60):\n"
            "        slug = slugify(' '.join(rng.choice(WORDS).title() for _ in range(6)))\n"
            "        assert slugify(slug) == slug\n",
        ),
    ),
    (
        "codec",
        "rle_decode inverts rle_encode and from_base inverts to_base",
        (
            "def test_rle_roundtrip(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(40):\n"
            "        text = ''.join(rng.choice('aab ') for _ in range(rng.randint(0, 200)))\n"
            "        assert rle_decode(rle_encode(text)) == text\n",
            "def test_rle_runs_are_maximal(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(40):\n"
            "        pairs = rle_encode(''.join(rng.choice('ab') for _ in range(100)))\n"
            "        assert all(a[0] != b[0] for a, b in zip(pairs, pairs[1:]))\n",
            "def test_base_roundtrip(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(200):\n"
            "        n, b = rng.randrange(10**20), rng.randint(2, 36)\n"
            "        assert from_base(to_base(n, b), b) == n\n",
            "def test_checksum_in_range(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(20):\n        data = rng.randbytes(rng.randint(0, 300))\n"
            "        assert 0 <= checksum(data) < 2**32\n",
        ),
    ),
    (
        "mathx",
        "clamp, median and mean stay within the range of their inputs",
        (
            "def test_clamp_in_range(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(300):\n        lo = rng.randint(-50, 50)\n"
            "        hi = lo + rng.randint(0, 50)\n"
            "        assert lo <= clamp(rng.randint(-200, 200), lo, hi) <= hi\n",
            "def test_median_between(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(60):\n"
            "        xs = [rng.randint(-99, 99) for _ in range(rng.randint(1, 50))]\n"
            "        assert min(xs) <= median(xs) <= max(xs)\n",
            "def test_mean_between(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(60):\n"
            "        xs = [rng.randint(-99, 99) for _ in range(rng.randint(1, 50))]\n"
            "        assert min(xs) <= mean(xs) <= max(xs)\n",
            "def test_variance_non_negative(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(60):\n"
            "        xs = [rng.random() for _ in range(rng.randint(1, 50))]\n"
            "        assert variance(xs) >= 0\n",
        ),
    ),
    (
        "grid",
        "rotating a grid four times or transposing it twice gives it back",
        (
            "def test_rotate_four_times(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(30):\n"
            "        rows = [''.join(rng.choice('.#') for _ in range(9)) for _ in range(7)]\n"
            "        assert rotate(rotate(rotate(rotate(rows)))) == rows\n",
            "def test_transpose_twice(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(30):\n"
            "        rows = [''.join(rng.choice('.#') for _ in range(9)) for _ in range(7)]\n"
            "        assert transpose(transpose(rows)) == rows\n",
            "def test_flood_bounded(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(20):\n"
            "        rows = [''.join(rng.choice('..#') for _ in range(12)) for _ in range(12)]\n"
            "        assert flood_count(rows, 0, 0) <= ''.join(rows).count('.')\n",
            "def test_life_stays_on_board(seed):\n    rng = random.Random(seed)\n"
            "    cells = {(rng.randrange(12), rng.randrange(12)) for _ in range(40)}\n"
            "    assert all(0 <= y < 12 and 0 <= x < 12 for y, x in life(cells, 8))\n",
        ),
    ),
    (
        "primes",
        "primes_upto returns exactly the primes up to n, in increasing order",
        (
            "def test_primes_are_prime(seed):\n    rng = random.Random(seed)\n"
            "    for p in primes_upto(rng.randint(500, 1500)):\n"
            "        assert all(p % d for d in range(2, int(p**0.5) + 1))\n",
            "def test_primes_sorted(seed):\n    rng = random.Random(seed)\n"
            "    ps = primes_upto(rng.randint(2000, 6000))\n    assert ps == sorted(set(ps))\n",
            "def test_primes_complete(seed):\n    rng = random.Random(seed)\n"
            "    n = rng.randint(200, 600)\n"
            "    brute = [k for k in range(2, n + 1) if all(k % d for d in range(2, k))]\n"
            "    assert primes_upto(n) == brute\n",
            "def test_gcd_divides(seed):\n    rng = random.Random(seed)\n"
            "    for _ in range(100):\n"
            "        xs = [rng.randint(1, 10**6) for _ in range(5)]\n"
            "        assert all(x % gcd_all(xs) == 0 for x in xs)\n",
        ),
    ),
)


def property_files(sizes: Sizes) -> dict[str, str]:
    files, accepted = {}, []
    seeds = list(range(1, sizes.seeds + 1))
    for name, invariant, bodies in PROPERTIES[: sizes.property_files]:
        bodies = bodies[: sizes.property_per_file]
        uses = {n for n in package_namespace() if any(f"{n}(" in b for b in bodies)}
        tests = [f'@pytest.mark.parametrize("seed", SEEDS)\n{b}' for b in bodies]
        files[f"tests/properties/test_prop_{name}.py"] = (
            f'"""Seeded properties of benchlib.{name}."""\n\nimport random\n\nimport pytest\n\n'
            + _imports(uses)
            + f"\nWORDS = {WORDS[:12]!r}\n\n# INVARIANT: {invariant}\nSEEDS = {seeds!r}\n\n\n"
            + "\n\n".join(tests)
        )
        accepted.append(f"- {invariant}\n")
    files["tests/properties/INVARIANTS.md"] = "# Accepted invariants (owner: alice)\n\n" + "".join(
        accepted
    )
    return files


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


MANIFEST = """\
version: 1
classes:
  oracle:
    require_human_owner: true
    globs: ["tests/oracles/**/*.py"]
    markers: []
  property:
    require_accepted_invariant: true
    globs: ["tests/properties/**/*.py"]
    markers: []
    invariants_file: tests/properties/INVARIANTS.md
  frozen_flake:
    freeze_file: tests/flakes/freeze.yaml
    globs: ["tests/**/*.py"]
    markers: []
fail_closed_untrusted: true
oracle_must_fail_known_bad: {must_fail}
known_bad_dir: tests/oracles/known_bad
owners: [alice]
lock_file: tests/oracles/locks.sha256
fixtures_dir: tests/oracles/fixtures
max_freeze_days: 28
require_property_class: true
"""

CONFTEST = '''\
"""Shared fixtures."""

import random

import pytest


@pytest.fixture
def rng():
    return random.Random(1234)
'''


# -- git -------------------------------------------------------------------------------


def base_env() -> dict[str, str]:
    """The environment every measured process gets.

    PYTHONDONTWRITEBYTECODE is dropped because andgate drops it for its pytest
    children: the baseline must get the same bytecode caches. GIT_* and
    PYTEST_ADDOPTS/PYTEST_PLUGINS of the caller would change what runs.
    """
    drop = {"PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"}
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
        ["git", *args], cwd=repo, env=git_env(who), capture_output=True, timeout=120, check=False
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
    import hashlib

    return "".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(root).as_posix()}\n"
        for p in sorted(root.rglob("*"))
        if p.is_file()
    )


@dataclass
class BenchRepo:
    path: Path
    pairs: dict[int, tuple[str, str]]  # K -> (base sha, head sha)
    killer_ids: dict[int, str]  # rule -> oracle node id that kills its fixture
    fixtures: dict[int, tuple[int, ...]]  # K -> rules whose fixtures base holds


def build_repo(path: Path, sizes: Sizes, ks: Sequence[int]) -> BenchRepo:
    """upstream (package) -> overlay (tests, manifest) -> per K: base (K fixtures) -> head."""
    namespace = package_namespace()
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    package = {f"benchlib/{name}.py": source for name, source in MODULES.items()}
    package["benchlib/__init__.py"] = init_source(namespace)
    write(path, {".gitignore": "__pycache__/\n*.pyc\nartifacts/\n", **package})
    write(path, {"pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n"})
    commit(path, "benchlib upstream")
    patches = {r: fixture_patch(path, r) for r in FIXTURE_ORDER[: max(ks, default=0)]}
    oracles, killer_ids = oracle_files(sizes, namespace)
    flakes, freeze_yaml = flake_files(sizes)
    write(path, {**oracles, **unit_files(sizes, namespace), **property_files(sizes), **flakes})
    write(path, {"tests/conftest.py": CONFTEST, "tests/flakes/freeze.yaml": freeze_yaml})
    write(path, {"tests/oracles/fixtures/cases.json": CASES_JSON + "\n"})
    write(path, {"tests/oracles/locks.sha256": lock_text(path / "tests/oracles/fixtures")})
    write(path, {"tests/trust_manifest.yaml": MANIFEST.format(must_fail="true")})
    overlay = commit(path, "tests and trust overlay (owner: alice)")
    pairs, fixtures = {}, {}
    for k in ks:
        rules = FIXTURE_ORDER[:k]
        git(path, "checkout", "-q", "--detach", overlay)
        write(path, {"tests/trust_manifest.yaml": MANIFEST.format(must_fail=str(k > 0).lower())})
        write(path, {f"tests/oracles/known_bad/kb_rule_{r:02d}.patch": patches[r] for r in rules})
        base = commit(path, f"{k} known-bad fixtures (owner: alice)")
        honest_change(path)
        head = commit(path, "truncate: keep texts that already fit", who=AGENT)
        git(path, "branch", "-f", f"base-k{k}", base)
        git(path, "branch", "-f", f"head-k{k}", head)
        pairs[k], fixtures[k] = (base, head), rules
    git(path, "checkout", "-q", "main")
    return BenchRepo(path, pairs, killer_ids, fixtures)


def fixture_patch(repo: Path, r: int) -> str:
    """A real `git diff` of the bug in rule r, against the committed package."""
    target = repo / "benchlib/rules.py"
    text = target.read_text(encoding="utf-8")
    search, replace = rule_bug(r)
    assert text.count(search) == 1, search
    target.write_text(text.replace(search, replace), encoding="utf-8")
    patch = git(repo, "diff", "--no-color", "--no-ext-diff")
    git(repo, "checkout", "--", ".")
    return patch


def honest_change(repo: Path) -> None:
    target = repo / "benchlib/text.py"
    search, replace = HONEST_FIX
    target.write_text(target.read_text(encoding="utf-8").replace(search, replace), "utf-8")
    write(repo, {"tests/unit/test_truncate.py": HONEST_TEST})


# -- measured commands --------------------------------------------------------------------

RSS_WRAPPER = """\
import resource, runpy, sys
rss_file = sys.argv.pop(1)
sys.argv[0] = "andgate"
try:
    runpy.run_module("andgate", run_name="__main__", alter_sys=True)
finally:
    with open(rss_file, "w") as fh:
        fh.write("%d %d" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
"""


@dataclass(frozen=True)
class Timed:
    """Wall seconds, and CPU seconds (user + system) of the whole process tree: the
    CPU figure is the work done, which other load on the machine disturbs far less."""

    seconds: float
    cpu: float
    proc: subprocess.CompletedProcess[bytes]


def timed(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Timed:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        list(argv), cwd=cwd, env=dict(env), capture_output=True, timeout=TIMEOUT, check=False
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Timed(seconds, cpu, proc)


def pytest_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


@dataclass
class Workspace:
    root: Path
    repo: BenchRepo
    tree: Path  # a clean clone of the largest K's head, for the plain pytest runs
    sizes: Sizes

    @property
    def gate_env(self) -> dict[str, str]:
        # A cache the gate may keep lives here, the same for every run of this benchmark.
        return {**base_env(), "XDG_CACHE_HOME": str(self.root / "xdg-cache")}


def run_pytest_suite(ws: Workspace, *, fresh: bool) -> Timed:
    """`pytest -q` on the whole suite; `fresh` first removes the tree's bytecode caches."""
    if fresh:
        for cache in ws.tree.rglob("__pycache__"):
            shutil.rmtree(cache)
    result = timed(pytest_argv(), ws.tree, base_env())
    proc = result.proc
    out = proc.stdout.decode("utf-8", "replace")
    summary = out.strip().splitlines()[-1] if out.strip() else ""
    failed = re.search(r"(\d+) failed", summary)
    if proc.returncode != 1 or not failed or int(failed.group(1)) != ws.sizes.flakes:
        raise SystemExit(
            f"baseline pytest: expected exactly the {ws.sizes.flakes} frozen flakes to fail "
            f"(exit 1), got exit {proc.returncode}: {summary}\n{out[-3000:]}"
        )
    return result


def run_killer(ws: Workspace, nodeid: str) -> float:
    result = timed(pytest_argv(nodeid), ws.tree, base_env())
    if result.proc.returncode != 0:
        raise SystemExit(f"{nodeid} should pass on head: {result.proc.stdout.decode()[-2000:]}")
    return result.seconds


@dataclass
class CheckRun:
    seconds: float
    cpu_s: float
    rss_mib: float
    children_rss_mib: float
    replay_seconds: list[float]
    killers_as_expected: bool
    counts: dict[str, int]


def run_check(
    ws: Workspace,
    k: int,
    jobs: int,
    env: Mapping[str, str] | None = None,
    wrapper: str = RSS_WRAPPER,
    extra: Sequence[str] = (),
) -> CheckRun:
    base, head = ws.repo.pairs[k]
    artifacts = ws.root / f"artifacts-k{k}-j{jobs}"
    shutil.rmtree(artifacts, ignore_errors=True)
    rss_file = ws.root / "rss.txt"
    argv = [
        sys.executable,
        "-c",
        wrapper,
        str(rss_file),
        *extra,
        "check",
        "--base",
        base,
        "--head",
        head,
        "--jobs",
        str(jobs),
        "--today",
        TODAY,
        "--artifacts",
        str(artifacts),
    ]
    result = timed(argv, ws.repo.path, env or ws.gate_env)
    proc = result.proc
    verdict = _read_json(artifacts / "verdict.json")
    if proc.returncode != 0 or verdict.get("verdict") != "allow":
        reasons = "\n".join(f"  {r['code']}: {r['detail']}" for r in verdict.get("reasons", []))
        raise SystemExit(
            f"andgate check (K={k}, --jobs {jobs}) did not allow the honest change "
            f"(exit {proc.returncode}):\n{reasons or '  (no verdict.json)'}\n"
            f"{proc.stdout.decode()[-2000:]}{proc.stderr.decode()[-3000:]}"
        )
    self_kib, children_kib = (int(x) for x in rss_file.read_text().split())
    replays = _read_json(artifacts / "known_bad.json").get("fixtures", [])
    expected = {ws.repo.killer_ids[r] for r in ws.repo.fixtures[k]}
    found = {item for fx in replays for item in fx["failed_oracle_items"]}
    return CheckRun(
        seconds=result.seconds,
        cpu_s=result.cpu,
        rss_mib=self_kib / 1024,
        children_rss_mib=children_kib / 1024,
        replay_seconds=[fx["seconds"] for fx in replays],
        killers_as_expected=found == expected and len(replays) == k,
        counts=verdict.get("counts", {}),
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


# -- the measurement -------------------------------------------------------------------


@dataclass
class Samples:
    pytest: list[Timed] = field(default_factory=list)
    pytest_fresh: list[Timed] = field(default_factory=list)
    killers: dict[str, list[float]] = field(default_factory=dict)
    checks: dict[str, list[CheckRun]] = field(default_factory=dict)
    load: list[float] = field(default_factory=list)  # 1-minute load average, each round


def config_name(k: int, jobs: int) -> str:
    return f"check K={k} --jobs {jobs}"


def measure(ws: Workspace, ks: Sequence[int], jobs_list: Sequence[int], repeats: int) -> Samples:
    """Warm up once (bytecode caches of the suite and of site-packages, and any cache
    the gate keeps: one check per K), then time every command in turn, `repeats` times."""
    samples = Samples()
    killers = [ws.repo.killer_ids[r] for r in ws.repo.fixtures[max(ks)]]
    for round_ in range(repeats + 1):
        warm = round_ == 0
        label = "warm-up" if warm else f"repeat {round_}/{repeats}"
        samples.load.append(os.getloadavg()[0])
        t = run_pytest_suite(ws, fresh=False)
        t_fresh = run_pytest_suite(ws, fresh=True)
        if not warm:
            samples.pytest.append(t)
            samples.pytest_fresh.append(t_fresh)
        log(f"{label}: pytest -q {t.seconds:.2f}s (fresh tree {t_fresh.seconds:.2f}s)")
        for k in ks:
            for jobs in [max(jobs_list)] if warm else jobs_list:
                run = run_check(ws, k, jobs)
                if not warm:
                    samples.checks.setdefault(config_name(k, jobs), []).append(run)
                log(f"{label}: {config_name(k, jobs)} {run.seconds:.2f}s, {run.rss_mib:.0f} MiB")
        for nodeid in killers:
            seconds = run_killer(ws, nodeid)
            if not warm:
                samples.killers.setdefault(nodeid, []).append(seconds)
    samples.load.append(os.getloadavg()[0])
    return samples


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def summarize(ws: Workspace, samples: Samples, ks: Sequence[int], jobs_list: Sequence[int]):
    med = statistics.median
    pytest_s = med(t.seconds for t in samples.pytest)
    pytest_cpu = med(t.cpu for t in samples.pytest)
    killer_s = {n: med(v) for n, v in samples.killers.items()}
    rows = [
        baseline_row("pytest -q (warm bytecode caches)", samples.pytest, pytest_s, pytest_cpu),
        baseline_row(
            "pytest -q (fresh tree, no caches)", samples.pytest_fresh, pytest_s, pytest_cpu
        ),
    ]
    for k in ks:
        for jobs in jobs_list:
            runs = samples.checks[config_name(k, jobs)]
            row: dict[str, Any] = {
                "config": config_name(k, jobs),
                "k": k,
                "jobs": jobs,
                "median_s": med(r.seconds for r in runs),
                "min_s": min(r.seconds for r in runs),
                "samples_s": [round(r.seconds, 3) for r in runs],
                "cpu_s": med(r.cpu_s for r in runs),
                "peak_rss_mib": max(r.rss_mib for r in runs),
                "peak_child_rss_mib": max(r.children_rss_mib for r in runs),
                "killers_as_expected": all(r.killers_as_expected for r in runs),
                "counts": runs[0].counts,
            }
            row["ratio"] = row["median_s"] / pytest_s
            row["cpu_ratio"] = row["cpu_s"] / pytest_cpu
            if k:
                row.update(replay_row(ws, samples, k, jobs, row["median_s"], killer_s))
                row["replay_s_per_fixture_known_bad_json"] = med(
                    statistics.fmean(r.replay_seconds) for r in runs
                )
            rows.append(row)
    return rows, judge(rows, 0 in ks, max(ks), jobs_list), killer_s


def baseline_row(name: str, runs: list[Timed], pytest_s: float, pytest_cpu: float) -> dict:
    median = statistics.median(t.seconds for t in runs)
    cpu = statistics.median(t.cpu for t in runs)
    return {
        "config": name,
        "median_s": median,
        "min_s": min(t.seconds for t in runs),
        "samples_s": [round(t.seconds, 3) for t in runs],
        "cpu_s": cpu,
        "ratio": median / pytest_s,
        "cpu_ratio": cpu / pytest_cpu,
    }


def replay_row(ws, samples, k, jobs, median_s, killer_s) -> dict[str, Any]:
    k0 = samples.checks.get(config_name(0, jobs))
    if not k0:
        return {}
    added = median_s - statistics.median(r.seconds for r in k0)
    startup_killer = statistics.fmean(killer_s[ws.repo.killer_ids[r]] for r in ws.repo.fixtures[k])
    bound = k / jobs * startup_killer * REPLAY_SLACK
    return {
        "replay_added_s": added,
        "replay_s_per_fixture": added / k,
        "startup_plus_killer_s": startup_killer,
        "replay_bound_s": bound,
    }


def judge(rows: list[dict[str, Any]], has_k0: bool, kmax: int, jobs_list: Sequence[int]):
    """The issue's targets (2 cores): K=0 ratio, largest-K replay at --jobs 2, memory."""
    by_name = {r["config"]: r for r in rows}
    targets = []
    top_jobs = max(jobs_list)
    k0 = by_name.get(config_name(0, top_jobs))
    if has_k0 and k0:
        targets.append(
            {
                "target": f"K=0, --jobs {top_jobs}: check/pytest <= {K0_RATIO_LIMIT}",
                "measured": round(k0["ratio"], 3),
                "ok": k0["ratio"] <= K0_RATIO_LIMIT,
            }
        )
        k0["target"] = f"ratio <= {K0_RATIO_LIMIT}"
        k0["ok"] = k0["ratio"] <= K0_RATIO_LIMIT
    top = by_name.get(config_name(kmax, top_jobs))
    if kmax and top and "replay_bound_s" in top:
        ok = top["replay_added_s"] <= top["replay_bound_s"]
        targets.append(
            {
                "target": (
                    f"K={kmax}, --jobs {top_jobs}: replay adds <= {kmax}/{top_jobs} x "
                    f"(start-up + killer) x {REPLAY_SLACK} = {top['replay_bound_s']:.2f}s"
                ),
                "measured": round(top["replay_added_s"], 3),
                "ok": ok,
            }
        )
        top["target"] = f"replay <= {top['replay_bound_s']:.2f}s"
        top["ok"] = ok
    peak = max((r["peak_rss_mib"] for r in rows if "peak_rss_mib" in r), default=0.0)
    targets.append(
        {
            "target": f"gate process peak RSS < {RSS_LIMIT_MIB:.0f} MiB",
            "measured": round(peak, 1),
            "ok": peak < RSS_LIMIT_MIB,
        }
    )
    return targets


def print_table(rows: list[dict[str, Any]], targets: list[dict[str, Any]]) -> None:
    head = (
        "config",
        "median s",
        "min s",
        "x pytest",
        "cpu s",
        "cpu x",
        "replay +s",
        "s/fixture",
        "kb.json s/fx",
        "peak MiB",
        "target",
        "ok",
    )
    lines = [head]
    for r in rows:
        lines.append(
            (
                r["config"],
                f"{r['median_s']:.2f}",
                f"{r['min_s']:.2f}",
                f"{r['ratio']:.2f}",
                f"{r['cpu_s']:.1f}",
                f"{r['cpu_ratio']:.2f}",
                _fmt(r.get("replay_added_s")),
                _fmt(r.get("replay_s_per_fixture")),
                _fmt(r.get("replay_s_per_fixture_known_bad_json")),
                _fmt(r.get("peak_rss_mib"), 0),
                r.get("target", ""),
                {True: "PASS", False: "FAIL"}.get(r.get("ok"), ""),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for n, line in enumerate(lines):
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print()
    for t in targets:
        print(f"{'PASS' if t['ok'] else 'FAIL'}  {t['target']}: measured {t['measured']}")


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
        run = {"cwd": folder, "env": git_env(OWNER), "capture_output": True, "timeout": 30}
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
_SPEC = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--andgate-run=")), "plain")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _T["configure"] = time.time()


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
    with open(os.environ["ANDGATE_BENCH_PROBE"], "a") as fh:
        fh.write(json.dumps({"spec": _SPEC, **_T}) + "\\n")
'''

PROFILE_WRAPPER = """\
import json, sys, threading, time
T0 = time.time()
rss_file = sys.argv.pop(1)
out_path = sys.argv.pop(1)
events, lock = [], threading.Lock()

def record(kind, name, t0, extra=None):
    with lock:
        events.append({"kind": kind, "name": name, "start": t0, "end": time.time(),
                       "thread": threading.current_thread().name, **(extra or {})})

import andgate.git as G, andgate.run as R
T_IMPORT = time.time()
git_run = G.Git.run
def timed_git(self, *args, **kw):
    t0 = time.time()
    try:
        return git_run(self, *args, **kw)
    finally:
        name = args[0] + (" " + args[1] if args[0] == "worktree" else "")
        record("git", name, t0)
G.Git.run = timed_git
session = R._run_in_own_session
def timed_session(argv, cwd, log, timeout):
    t0 = time.time()
    spec = next((a.split("=", 1)[1] for a in argv if a.startswith("--andgate-run=")), "")
    try:
        return session(argv, cwd, log, timeout)
    finally:
        record("pytest", log.stem, t0, {"spec": spec})
R._run_in_own_session = timed_session
from andgate.cli import main
code = 2
try:
    code = main(sys.argv[1:])
finally:
    with open(out_path, "w") as fh:
        json.dump({"t0": T0, "t_import": T_IMPORT, "t_end": time.time(), "events": events}, fh)
    import resource
    with open(rss_file, "w") as fh:
        fh.write("%d %d" % (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
raise SystemExit(code)
"""


def profile(ws: Workspace, k: int, jobs: int) -> dict[str, Any]:
    """One instrumented check: git calls and pytest processes timed in the gate, and
    each pytest process's phases timed by a probe plugin loaded via PYTEST_ADDOPTS."""
    probe_dir = ws.root / "probe"
    probe_dir.mkdir(exist_ok=True)
    (probe_dir / "andgate_bench_probe.py").write_text(PROBE, encoding="utf-8")
    probe_log, gate_log = ws.root / "probe.jsonl", ws.root / "gate-profile.json"
    probe_log.unlink(missing_ok=True)
    env = {
        **ws.gate_env,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(probe_dir), os.environ.get("PYTHONPATH")])),
        "PYTEST_ADDOPTS": "-p andgate_bench_probe",
        "ANDGATE_BENCH_PROBE": str(probe_log),
    }
    run = run_check(ws, k, jobs, env=env, wrapper=PROFILE_WRAPPER, extra=(str(gate_log),))
    gate = json.loads(gate_log.read_text(encoding="utf-8"))
    probes = {}
    for line in probe_log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        probes[entry["spec"]] = entry
    spawned = time.time()
    timed(pytest_argv(), ws.tree, {**base_env(), **{k_: env[k_] for k_ in PROBE_ENV}})
    exited = time.time()
    plain = [json.loads(x) for x in probe_log.read_text(encoding="utf-8").splitlines()]
    baseline = next((p for p in plain if p["spec"] == "plain"), None)
    base_phases = baseline and process_phases(spawned, exited, baseline)
    return analyse_profile(gate, probes, base_phases, run.seconds, k, jobs)


PROBE_ENV = ("PYTHONPATH", "PYTEST_ADDOPTS", "ANDGATE_BENCH_PROBE")
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


def analyse_profile(gate, probes, baseline, wall, k, jobs) -> dict[str, Any]:
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
        probe = probes.get(e["spec"], {})
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
    busy = _union([(e["start"], e["end"]) for e in events])
    totals: dict[str, float] = {}
    for p in processes:
        for phase, secs in p["phases"].items():
            totals[phase] = round(totals.get(phase, 0.0) + secs, 3)
    return {
        "config": config_name(k, jobs),
        "wall_s": round(wall, 3),
        "gate_python_startup_and_import_s": round(gate["t_import"] - t0, 3),
        "gate_run_s": round(gate["t_end"] - t0, 3),
        "gate_time_outside_subprocesses_s": round(gate["t_end"] - t0 - busy, 3),
        "git": {
            name: {"calls": len(v), "total_s": round(sum(v), 3), "max_s": round(max(v), 3)}
            for name, v in sorted(git_by.items(), key=lambda kv: -sum(kv[1]))
        },
        "git_total_s": round(sum(sum(v) for v in git_by.values()), 3),
        "pytest_processes": processes,
        "pytest_phase_totals_s": totals,
        "baseline_pytest_phases_s": baseline,
    }


def _union(spans: list[tuple[float, float]]) -> float:
    total, cur_start, cur_end = 0.0, None, None
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


def print_profile(p: dict[str, Any]) -> None:
    print(f"\nprofile of one {p['config']} run: {p['wall_s']:.2f}s wall")
    print(
        f"  gate start-up + import andgate: {p['gate_python_startup_and_import_s']:.2f}s; "
        f"gate time outside any git/pytest subprocess: "
        f"{p['gate_time_outside_subprocesses_s']:.2f}s"
    )
    print(f"  git: {p['git_total_s']:.2f}s in total (summed over threads)")
    for name, g in list(p["git"].items())[:8]:
        print(
            f"    {name:<18} {g['calls']:>3} calls  {g['total_s']:6.2f}s  (max {g['max_s']:.2f}s)"
        )
    print("  pytest processes (start/end relative to the gate's start):")
    for proc in p["pytest_processes"]:
        print(
            f"    {proc['label']:<16} {proc['start']:6.2f} -> {proc['end']:6.2f}  "
            f"{proc['seconds']:5.2f}s  items {proc['items']}"
        )
    print("  pytest time by phase, summed over all processes:")
    for phase, secs in p["pytest_phase_totals_s"].items():
        print(f"    {phase:<62} {secs:6.2f}s")
    if p.get("baseline_pytest_phases_s"):
        print("  the baseline `pytest -q` by phase:")
        for phase, secs in p["baseline_pytest_phases_s"].items():
            print(f"    {phase:<62} {secs:6.2f}s")


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
        "--quick", action="store_true", help="smaller repository, 1 repeat, K 0,4: a smoke test"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--out", type=Path, default=HERE / "results.json", help="default: benchmarks/results.json"
    )
    parser.add_argument("--ks", default=None, help="known-bad fixture counts (default 0,4,16)")
    parser.add_argument("--jobs", default="1,2", help="--jobs values to measure (default 1,2)")
    parser.add_argument(
        "--profile", action="store_true", help="also profile one check (largest K, largest --jobs)"
    )
    args = parser.parse_args(argv)
    args.ks = sorted({int(x) for x in (args.ks or ("0,4" if args.quick else "0,4,16")).split(",")})
    args.jobs = sorted({int(x) for x in args.jobs.split(",")})
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if not all(0 <= k <= RULES for k in args.ks) or args.repeats < 1 or min(args.jobs) < 1:
        parser.error(f"--ks values must be in 0..{RULES}, --repeats and --jobs >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if importlib.util.find_spec("andgate") is None:
        raise SystemExit(f"andgate is not importable by {sys.executable}: pip install -e . first")
    # SIGTERM unwinds like Ctrl-C: the running command is killed, the temp folder removed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    sizes = QUICK if args.quick else FULL
    started = time.perf_counter()
    with workspace_root(args.keep) as root:
        log(f"building the benchmark repository in {root} ({sizes.counts})")
        repo = build_repo(root / "repo", sizes, args.ks)
        tree = root / "tree"
        head = f"head-k{max(args.ks)}"
        git(root, "clone", "-q", "--branch", head, str(repo.path), str(tree))
        ws = Workspace(root, repo, tree, sizes)
        samples = measure(ws, args.ks, args.jobs, args.repeats)
        rows, targets, killer_s = summarize(ws, samples, args.ks, args.jobs)
        prof = profile(ws, max(args.ks), max(args.jobs)) if args.profile else None
    print()
    print_table(rows, targets)
    if prof:
        print_profile(prof)
    result = {
        "schema": "andgate.benchmark/1",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "command": " ".join(["python", "benchmarks/run.py", *(argv or sys.argv[1:])]),
        "repeats": args.repeats,
        "sizes": asdict(sizes),
        "items": sizes.counts,
        "load_average_1min_each_round": [round(x, 2) for x in samples.load],
        "startup_plus_killer_s": {n: round(s, 3) for n, s in killer_s.items()},
        "rows": _rounded(rows),
        "targets": targets,
        "profile": prof,
        "total_benchmark_s": round(time.perf_counter() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out} ({result['total_benchmark_s']:.0f}s in total)")
    return 0


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


if __name__ == "__main__":
    raise SystemExit(main())
