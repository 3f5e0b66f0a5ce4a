"""A real large suite for the benchmark: packaging's own tests (about 64,000 items).

The sdist of `packaging==26.4` is downloaded from PyPI at benchmark time
(`pip download --no-binary :all: --no-deps`; kept in `~/.cache/andgate-bench`, or
`$ANDGATE_BENCH_CACHE`), unpacked and committed as it is. On top, one owner commit is
the trust overlay: `andgate init`, then the manifest's oracle glob names every test
file (`tests/**/*.py`: packaging's tests are the oracle class), `owners: [alice]`, no
property class. The suite is otherwise as released: on Python < 3.13 its two
`copy.replace` tests skip themselves with `pytest.skip()`, andgate runs those two
items again on base, which skips them for the same reason, and reports them as
ORACLE_SKIPPED (a warning). Base adds two known-bad fixtures, each the real `git diff`
of a bug put back into packaging's code; head is an honest change by another author
(a docstring).

Test processes import packaging from the tree they run in: `PYTHONPATH=<tree>/src`
for plain pytest, `PYTHONPATH=<checkout>/src` for the gate, which points every pytest
process at its own worktree (`andgate.plugin.redirect`). pytest imports `packaging.version`
itself (for `minversion`), so without that the suite would test the installed copy.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sample_repo import AGENT, base_env, commit, diff_of, git, write

VERSION = "26.4"
MIN_ITEMS = 50_000
TEST_DEPENDENCIES = ("pretend", "tomli_w")  # packaging's test group, beyond pytest/hypothesis

# Real bugs, put back: (fixture name, file, search, replace, what it breaks).
KNOWN_BAD = (
    (
        "kb_empty_arbitrary_version",
        "src/packaging/specifiers.py",
        r"[^\s;)]++ # The arbitrary version",
        r"[^\s;)]*+ # The arbitrary version",
        "`===` with an empty version parses again (fixed in 26.4, pypa/packaging#1430)",
    ),
    (
        "kb_dev_release_sorts_as_final",
        "src/packaging/version.py",
        "pre_rank, pre_n = _PRE_RANK_DEV_ONLY, 0",
        "pre_rank, pre_n = _PRE_RANK_STABLE, 0",
        "a dev-only release (1.0.dev1) sorts after 1.0a1 again (PEP 440 order)",
    ),
)
HONEST_CHANGE = (
    "src/packaging/utils.py",
    "A wheel build tag: an empty tuple, or a ``(build number, build tag suffix)`` pair.",
    "A wheel build tag: an empty tuple (the wheel has none), or a\n"
    "``(build number, build tag suffix)`` pair.",
)
# The oracle globs stay as init proposes them: every test file of packaging's, named one
# by one, but tests/test_manylinux.py, whose xfail item could never pass as an oracle.
MANIFEST_EDITS = (
    ("owners: []\n", "owners: [alice]\n"),
    ("require_property_class: true\n", "require_property_class: false\n"),
)


def cache_dir() -> Path:
    explicit = os.environ.get("ANDGATE_BENCH_CACHE")
    return Path(explicit) if explicit else Path.home() / ".cache" / "andgate-bench"


def missing_dependencies() -> list[str]:
    return [name for name in TEST_DEPENDENCIES if importlib.util.find_spec(name) is None]


def fetch_sdist(log) -> tuple[Path, str]:
    """packaging's sdist from PyPI (once; then from the cache) and its sha256."""
    folder = cache_dir()
    target = folder / f"packaging-{VERSION}.tar.gz"
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        log(f"downloading the packaging {VERSION} sdist from PyPI into {folder}")
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            argv = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:"]
            argv += ["--no-deps", "--quiet", f"packaging=={VERSION}", "-d", tmp]
            proc = subprocess.run(argv, capture_output=True, timeout=600, check=False)
            got = Path(tmp) / target.name
            if proc.returncode != 0 or not got.is_file():
                raise SystemExit(
                    f"pip download packaging=={VERSION} failed (or pass --no-real):\n"
                    f"{proc.stdout.decode()[-2000:]}{proc.stderr.decode()[-2000:]}"
                )
            got.replace(target)
    return target, hashlib.sha256(target.read_bytes()).hexdigest()


@dataclass
class RealRepo:
    path: Path  # the repository the gate runs in (main = head)
    tree: Path  # a clean clone of head, for plain pytest
    base: str
    head: str
    sdist_sha256: str
    fixtures: dict[str, str]  # fixture name -> what it breaks

    def gate_env(self) -> dict[str, str]:
        return _with_pythonpath(self.path / "src")

    def tree_env(self) -> dict[str, str]:
        return _with_pythonpath(self.tree / "src")


def _with_pythonpath(src: Path) -> dict[str, str]:
    env = base_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    return env


def build(root: Path, log) -> RealRepo:
    sdist, sha256 = fetch_sdist(log)
    repo = root / "packaging"
    with tarfile.open(sdist) as tar:
        tar.extractall(root / "unpacked", filter="data")
    shutil.move(root / "unpacked" / f"packaging-{VERSION}", repo)
    for cache in repo.rglob("__pycache__"):
        shutil.rmtree(cache)
    write(repo, {".gitignore": "__pycache__/\n*.pyc\n/artifacts/\n"})
    git(repo, "init", "-q", "-b", "main")
    commit(repo, f"packaging {VERSION} (sdist from PyPI)")
    _overlay(repo)
    overlay = commit(repo, "andgate trust overlay: packaging's tests are the oracles (alice)")
    patches = {name: diff_of(repo, path, s, r) for name, path, s, r, _ in KNOWN_BAD}
    known_bad = repo / "tests/oracles/known_bad"
    write(known_bad, {f"{name}.patch": patch for name, patch in patches.items()})
    base = commit(repo, "two known-bad fixtures (alice)")
    path, search, replace = HONEST_CHANGE
    _edit(repo / path, search, replace)
    head = commit(repo, "utils: say what an empty build tag means", who=AGENT)
    assert git(repo, "rev-parse", "HEAD^").strip() == base != overlay
    tree = root / "packaging-tree"
    git(root, "clone", "-q", str(repo), str(tree))
    return RealRepo(repo, tree, base, head, sha256, {n: why for n, *_, why in KNOWN_BAD})


def _overlay(repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "andgate", "init", "--repo", str(repo)],
        env=base_env(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"andgate init failed: {proc.stderr.decode()[-2000:]}")
    manifest = repo / "tests/trust_manifest.yaml"
    for search, replace in MANIFEST_EDITS:
        _edit(manifest, search, replace)


def _edit(path: Path, search: str, replace: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    if text.count(search) != count:
        raise SystemExit(f"{path}: expected {count} x {search!r}, found {text.count(search)}")
    path.write_text(text.replace(search, replace), encoding="utf-8")


def passed_count(pytest_output: str) -> int:
    """The number of passed items in pytest's summary line."""
    found = re.search(
        r"(\d+) passed", pytest_output.strip().splitlines()[-1] if pytest_output.strip() else ""
    )
    return int(found.group(1)) if found else 0
