"""A small sample project with a full trust overlay, as throwaway git repositories.

Used by `andgate demo` and by andgate's own tests: a library (`minilib`) with
human-owned oracle tests, a locked fixture, two known-bad fixtures generated as
real `git diff` output, an accepted seeded property, a frozen flaky test and
one untrusted test. Repositories get a fixed identity and dates, and git never
reads the user's global config, so commit ids are reproducible.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from andgate.git import Git

OWNER = ("alice", "alice@example.org")
AGENT = ("coding-agent", "agent@example.org")
SAMPLE_TODAY = "2026-11-25"

TEXT_PY = '''\
"""Text helpers."""

import re


def chunk(seq, n):
    """Split seq into lists of n items; the last one may be shorter."""
    if n < 1:
        raise ValueError("n must be at least 1")
    items = list(seq)
    return [items[i : i + n] for i in range(0, len(items), n)]


def slugify(text):
    """Lower-case words joined by single dashes."""
    return re.sub(r"[^a-z0-9]", "-", text.lower()).strip("-")
'''

MATHX_PY = '''\
"""Number helpers."""


def clamp(x, lo, hi):
    """x limited to the closed range [lo, hi]."""
    return max(lo, min(x, hi))


def mean(xs):
    """Arithmetic mean of a non-empty sequence."""
    xs = list(xs)
    if not xs:
        raise ValueError("mean of an empty sequence")
    return sum(xs) / len(xs)
'''

INIT_PY = '''\
"""minilib: a tiny library gated by andgate."""

from minilib.mathx import clamp, mean
from minilib.text import chunk, slugify

__all__ = ["chunk", "clamp", "mean", "slugify"]
'''

TEXT_ORACLE = '''\
"""Human-owned oracle (owner: alice)."""

import pytest

from minilib import chunk, slugify


def test_chunk_even():
    assert chunk([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_chunk_keeps_short_tail():
    assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunk_rejects_zero():
    with pytest.raises(ValueError):
        chunk([1], 0)


def test_slugify_words():
    assert slugify("Hello World") == "hello-world"
'''

MATH_ORACLE = '''\
"""Human-owned oracle (owner: alice): recorded cases live in fixtures/cases.json."""

import json
import pathlib

import pytest

from minilib import clamp, mean

CASES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "cases.json").read_text())


@pytest.mark.parametrize("x, lo, hi, expected", CASES["clamp"])
def test_clamp_cases(x, lo, hi, expected):
    assert clamp(x, lo, hi) == expected


def test_mean():
    assert mean([1, 2, 3, 6]) == 3
'''

CASES_JSON = '{"clamp": [[5, 0, 10, 5], [-1, 0, 10, 0], [11, 0, 10, 10]]}\n'

INVARIANT = (
    "chunk(seq, n) returns pieces of exactly n items except a shorter last piece, "
    "and joining them gives seq back"
)

PROPERTY_TEST = f'''\
"""Seeded property for minilib.chunk."""

import random

import pytest

from minilib import chunk

# INVARIANT: {INVARIANT}
SEEDS = [1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS)
def test_chunk_roundtrip(seed):
    rng = random.Random(seed)
    for _ in range(30):
        n = rng.randint(1, 5)
        seq = [rng.randint(0, 9) for _ in range(rng.randint(0, 15))]
        pieces = chunk(seq, n)
        assert [x for piece in pieces for x in piece] == seq
        assert all(len(piece) == n for piece in pieces[:-1])
'''

TIMING_TEST = '''\
"""Timing budget (owner: platform-tests); too tight for shared runners."""

import time

from minilib import mean


def test_mean_is_fast():
    started = time.perf_counter()
    mean(range(10000))
    assert time.perf_counter() - started < 0, "budget calibrated on the dedicated runner"
'''

MISC_TEST = '''\
"""An ordinary, untrusted test."""

from minilib import clamp


def test_clamp_inside_range():
    assert clamp(3, 0, 5) == 3
'''

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
oracle_must_fail_known_bad: true
known_bad_dir: tests/oracles/known_bad
owners: [alice]
lock_file: tests/oracles/locks.sha256
fixtures_dir: tests/oracles/fixtures
max_freeze_days: 28
require_property_class: true
"""

FREEZE = """\
freezes:
  - id: "tests/test_timing.py::test_mean_is_fast"
    reason: "timing depends on shared runner load"
    first_seen: "2026-11-20"
    expires: "2026-12-10"
    owner: "platform-tests"
"""

BASE_FILES: dict[str, str] = {
    ".gitignore": "__pycache__/\n*.pyc\nartifacts/\n",
    "pytest.ini": "[pytest]\ntestpaths = tests\n",
    "minilib/__init__.py": INIT_PY,
    "minilib/text.py": TEXT_PY,
    "minilib/mathx.py": MATHX_PY,
    "tests/trust_manifest.yaml": MANIFEST,
    "tests/oracles/test_text_oracle.py": TEXT_ORACLE,
    "tests/oracles/test_math_oracle.py": MATH_ORACLE,
    "tests/oracles/fixtures/cases.json": CASES_JSON,
    "tests/properties/INVARIANTS.md": f"# Accepted invariants (owner: alice)\n\n- {INVARIANT}\n",
    "tests/properties/test_chunk_property.py": PROPERTY_TEST,
    "tests/flakes/freeze.yaml": FREEZE,
    "tests/test_timing.py": TIMING_TEST,
    "tests/test_misc.py": MISC_TEST,
}

# Known-bad fixtures: (path, search, replace) edits of production code, turned
# into real `git diff` output when the repository is built.
KNOWN_BAD: dict[str, tuple[str, str, str]] = {
    "kb_chunk_drops_tail": (
        "minilib/text.py",
        "range(0, len(items), n)]",
        "range(0, len(items) - len(items) % n, n)]",
    ),
    "kb_clamp_ignores_lo": ("minilib/mathx.py", "max(lo, min(x, hi))", "min(x, hi)"),
}


def git_identity_env(
    who: tuple[str, str], date: str = "2026-11-24T10:00:00+00:00"
) -> dict[str, str]:
    name, email = who
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }


@dataclass
class SampleRepo:
    """A git repository under construction, with helpers for writing commits."""

    path: Path

    @property
    def git(self) -> Git:
        return Git(self.path)

    def run(self, *args: str, who: tuple[str, str] = OWNER) -> str:
        return self.git.out(*args, env=git_identity_env(who))

    def write(self, files: Mapping[str, str | bytes]) -> None:
        for rel, content in files.items():
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")

    def edit(self, rel: str, search: str, replace: str) -> None:
        target = self.path / rel
        text = target.read_text(encoding="utf-8")
        if text.count(search) != 1:
            raise ValueError(f"{rel}: {search!r} found {text.count(search)} times, want 1")
        target.write_text(text.replace(search, replace), encoding="utf-8")

    def delete(self, *rels: str) -> None:
        for rel in rels:
            (self.path / rel).unlink()

    def commit(self, message: str, who: tuple[str, str] = OWNER) -> str:
        self.run("add", "-A", who=who)
        self.run("commit", "-q", "--no-verify", "--allow-empty", "-m", message, who=who)
        return self.run("rev-parse", "HEAD")

    def diff_of(self, edits: list[tuple[str, str, str]]) -> str:
        """Apply edits, capture `git diff`, restore the files: a real patch."""
        for rel, search, replace in edits:
            self.edit(rel, search, replace)
        patch = self.run("diff", "--no-color", "--no-ext-diff")
        self.run("checkout", "--", ".")
        return patch + "\n"


def lock_text(root: Path) -> str:
    lines = [
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(root).as_posix()}"
        for p in sorted(root.rglob("*"))
        if p.is_file()
    ]
    return "".join(line + "\n" for line in lines)


def init_repo(path: Path) -> SampleRepo:
    path.mkdir(parents=True, exist_ok=True)
    repo = SampleRepo(path)
    repo.run("init", "-q", "-b", "main")
    repo.run("config", "user.name", OWNER[0])
    repo.run("config", "user.email", OWNER[1])
    repo.run("config", "commit.gpgsign", "false")
    return repo


def build_sample(path: Path, files: Mapping[str, str] | None = None) -> tuple[SampleRepo, str]:
    """The sample project as a repository: an upstream commit, then the trust
    overlay as the base commit. Returns the repository and the base sha."""
    repo = init_repo(path)
    files = dict(BASE_FILES if files is None else files)
    repo.write({k: v for k, v in files.items() if k.startswith("minilib/") or k == ".gitignore"})
    repo.commit("minilib upstream")
    patches = {name: repo.diff_of([edit]) for name, edit in KNOWN_BAD.items()}
    repo.write(files)
    repo.write({f"tests/oracles/known_bad/{name}.patch": p for name, p in patches.items()})
    repo.write({"tests/oracles/locks.sha256": lock_text(path / "tests/oracles/fixtures")})
    base = repo.commit("trust overlay (owner: alice)")
    return repo, base
