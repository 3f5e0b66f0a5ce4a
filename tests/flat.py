"""A flat-layout sample project, adopted the way a new user adopts andgate.

`tests/resources/flatlib/` is laid out like toolz: the package at the root, its tests
inside it (`flatlib/tests/`), `testpaths = ["flatlib"]` in pyproject.toml, and
benchmark scripts named like tests in `bench/`. `build_flat` commits it as upstream, then
adopts andgate in an owner's commit with what `andgate init` itself writes and suggests
(the folder glob it proposes for `flatlib/tests`, owners, one accepted property, one
known-bad fixture), the way issue 43's new user did, with only the README and `--help`.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from andgate.commands.init import run_init
from andgate.commands.sample import SampleRepo, init_repo, load_tree

RESOURCES = Path(__file__).parent / "resources"
FLAT_FILES: dict[str, str] = load_tree(RESOURCES / "flatlib")
MANIFEST = "tests/trust_manifest.yaml"
HOME = "flatlib/tests"  # where init puts the oracle and property folders (testpaths)
KNOWN_BAD_DIR = f"{HOME}/oracles/known_bad"
INVARIANTS = f"{HOME}/properties/INVARIANTS.md"
PROPERTY_FILE = f"{HOME}/properties/test_partition_property.py"
INVARIANT = (
    "partition_all(n, seq) gives tuples of n items except a shorter last one, "
    "and joining them gives seq back"
)
PROPERTY_TEST = f'''\
"""Seeded property of flatlib.partition_all."""

import random

import pytest

from flatlib import partition_all

# INVARIANT: {INVARIANT}
SEEDS = [1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS)
def test_partition_all_roundtrip(seed):
    rng = random.Random(seed)
    for _ in range(20):
        n = rng.randint(1, 4)
        seq = [rng.randint(0, 9) for _ in range(rng.randint(0, 12))]
        pieces = list(partition_all(n, seq))
        assert [x for piece in pieces for x in piece] == seq
        assert all(len(piece) == n for piece in pieces[:-1])
'''
# The known-bad fixture: `take` one item short.
TAKE_LINE = "    return list(itertools.islice(seq, n))"
KB_TAKE = ("flatlib/itertoolz.py", TAKE_LINE, "    return list(itertools.islice(seq, n - 1))")
KB_NAME = "kb_take_one_short"
# What init suggests (commented) for the package's test folder: the folder glob.
FOLDER_SUGGESTION = re.compile(r'^\s*#\s+globs: (\["flatlib/tests/\*\*/\*\.py".*?\])', re.M)


@dataclass(frozen=True)
class Flat:
    repo: SampleRepo
    upstream: str  # the project before andgate
    base: str  # the owner's adoption commit
    init_output: str


def build_flat(path: Path, *, agents: bool = False, folder_glob: bool = True) -> Flat:
    """The flat project adopted by its owner (alice), as base. `folder_glob`: the oracle
    globs are init's commented folder suggestion for flatlib/tests (else what init
    proposed: its test files one by one). `agents`: `init --agents AGENTS.md` too."""
    key = (agents, folder_glob)
    if key not in _BUILT:
        template = _templates() / str(len(_BUILT))
        _BUILT[key] = _build(template, agents=agents, folder_glob=folder_glob)
    template, flat = _BUILT[key]
    shutil.copytree(template, path, symlinks=True, dirs_exist_ok=True)
    repo = SampleRepo(path)
    repo.run("update-index", "-q", "--refresh")
    return Flat(repo, flat.upstream, flat.base, flat.init_output)


_BUILT: dict[tuple[bool, bool], tuple[Path, Flat]] = {}


@functools.cache
def _templates() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="andgate-test-flat-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def upstream_flat(path: Path) -> tuple[SampleRepo, str]:
    """The project as its authors have it, before andgate."""
    repo = init_repo(path)
    repo.write(FLAT_FILES)
    return repo, repo.commit("flatlib upstream")


def adopt(repo: SampleRepo, *, agents: bool = False, folder_glob: bool = True) -> str:
    """What a new user does after `andgate init` (its output returned): owners, the
    oracle globs, one property, one known-bad fixture. Nothing is committed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run_init(repo.path, agents="AGENTS.md" if agents else None)
    assert code == 0, out.getvalue()
    text = (repo.path / MANIFEST).read_text(encoding="utf-8")
    if folder_glob:
        suggestion = FOLDER_SUGGESTION.search(text)
        assert suggestion is not None, text
        proposed = next(line for line in text.splitlines() if line.startswith("    globs: "))
        text = text.replace(proposed, f"    globs: {suggestion.group(1)}", 1)
    repo.write({MANIFEST: text.replace("owners: []", "owners: [alice]")})
    accepted = (repo.path / INVARIANTS).read_text(encoding="utf-8") + f"- {INVARIANT}\n"
    repo.write({PROPERTY_FILE: PROPERTY_TEST, INVARIANTS: accepted})
    repo.write({f"{KNOWN_BAD_DIR}/{KB_NAME}.patch": repo.diff_of([KB_TAKE])})
    return out.getvalue()


def _build(path: Path, *, agents: bool, folder_glob: bool) -> tuple[Path, Flat]:
    repo, upstream = upstream_flat(path)
    output = adopt(repo, agents=agents, folder_glob=folder_glob)
    base = repo.commit("adopt andgate (owner: alice)")
    return path, Flat(repo, upstream, base, output)
