"""Where a project keeps its tests and code, for the commands that place or look for
test files (`init`, `doctor`, `classify`): the project's `testpaths`, read as pytest
reads them, benchmark scripts named like tests, and a production module to show.

A folder outside `testpaths` is never collected when pytest runs without arguments, as
every andgate process does: an oracle or property folder there holds tests that never run
(a flat-layout project such as toolz has `testpaths = ["toolz"]` and its tests in
`toolz/tests/`). `init` puts the trust folders under `testpaths`; `doctor` and `classify`
name a trusted file outside them as "not collected: outside testpaths", not as a missing
invariant.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from andgate.git import Git
from andgate.trust import pytest_config
from andgate.trust.config import BaseConfig
from andgate.trust.manifest import Manifest
from andgate.trust.paths import (
    GLOB_MAGIC,
    TEST_DIRS,
    is_test_file,
    is_test_module,
    is_under,
    matching,
)

MAX_LISTED = 12  # files named one per line in init's report

# Folders of benchmark scripts (toolz's `bench/`, asv's `benchmarks/`): their files are
# named like tests, but they time code rather than check it, and are no oracle.
BENCHMARK_DIRS = frozenset({"bench", "benches", "benchmark", "benchmarks", "asv_bench"})


@dataclass(frozen=True)
class PytestTestpaths:
    """The `testpaths` of the config file pytest would pick at the repository's root
    (`source`), or none: then pytest collects from the root, everywhere."""

    source: str = ""
    paths: tuple[str, ...] = ()

    def collects(self, path: str) -> bool:
        """Whether pytest, run without arguments at the root, reaches `path`."""
        if not self.paths:
            return True
        return any(_under(path, entry.strip("/")) for entry in self.paths)

    def in_tree(self, files: Iterable[str]) -> PytestTestpaths:
        """As pytest reads them in a tree holding `files`: when no entry names anything
        there, pytest collects from the root instead."""
        files = list(files)
        if any(self.collects(f) for f in files) or not self.paths:
            return self
        return PytestTestpaths()

    def describe(self) -> str:
        shown = ", ".join(self.paths)
        return f"testpaths = [{shown}] in {self.source}"


def _under(path: str, entry: str) -> bool:
    if entry in ("", "."):
        return True
    if not GLOB_MAGIC & set(entry):
        return is_under(path, entry)
    # pytest expands a glob in testpaths against the root: any folder it names
    parents = [str(p) for p in PurePosixPath(path).parents if str(p) != "."]
    return any(fnmatchcase(folder, entry) for folder in [path, *parents])


def read_testpaths(read: Callable[[str], bytes | None]) -> PytestTestpaths:
    """`read(name)`: a root file's bytes, or None. An unreadable config names none."""
    files = {name: data for name in pytest_config.CANDIDATES if (data := read(name)) is not None}
    name = pytest_config.chosen(files)
    if name is None:
        return PytestTestpaths()
    try:
        return PytestTestpaths(name, pytest_config.testpaths(name, files[name]))
    except pytest_config.Unreadable:
        return PytestTestpaths()


def is_benchmark(path: str) -> bool:
    return any(part.lower() in BENCHMARK_DIRS for part in PurePosixPath(path).parts[:-1])


def not_proposed(test_files: Iterable[str], testpaths: PytestTestpaths) -> dict[str, str]:
    """Test modules `init` never proposes as oracles, each with why."""
    found = {}
    for path in test_files:
        if is_benchmark(path):
            found[path] = "a benchmark script"
        elif not testpaths.collects(path):
            found[path] = f"outside {testpaths.describe()}: pytest never collects it"
    return found


def trust_home(test_files: Iterable[str], testpaths: PytestTestpaths) -> str | None:
    """Where `init` puts the oracle and property folders when `tests/` is not collected:
    the test folder under `testpaths` that holds the most test modules (`toolz/tests`),
    else `tests/` inside the first plain `testpaths` entry. None: `tests/` is collected."""
    if testpaths.collects("tests/oracles/test_x.py"):
        return None
    folders: Counter[str] = Counter()
    for path in test_files:
        parts = PurePosixPath(path).parts
        for depth in range(len(parts) - 1, 0, -1):
            if parts[depth - 1] in TEST_DIRS:
                folder = "/".join(parts[:depth])
                if testpaths.collects(f"{folder}/x.py") and not is_benchmark(path):
                    folders[folder] += 1
                break
    if folders:
        # the most test modules; on a tie the shallowest, then the first by name
        return min(folders, key=lambda f: (-folders[f], f.count("/"), f))
    plain = [p.strip("/") for p in testpaths.paths if not GLOB_MAGIC & set(p)]
    plain = [p for p in plain if p not in ("", ".")]
    return f"{plain[0]}/tests" if plain else None


NOT_COLLECTED_FIX = "move it under a testpaths folder, or add its folder to testpaths"


def uncollected_trusted(
    git: Git, commit: str, manifest: Manifest, collected: Iterable[str]
) -> dict[str, str]:
    """The test modules matching an oracle or property glob at `commit` that pytest
    never reaches (outside `testpaths`), each with why: they hold tests that never run,
    which `doctor` and `classify` say instead of blaming the invariant."""
    files = [e.path for e in git.ls_tree(commit) if e.kind == "blob"]
    testpaths = read_testpaths(lambda name: git.read_blob(commit, name)).in_tree(files)
    if not testpaths.paths:
        return {}
    globs = (*manifest.oracle.globs, *manifest.property.globs)
    seen = set(collected)
    return {
        path: f"not collected: outside {testpaths.describe()}"
        for path in sorted(matching(files, globs))
        if is_test_module(path) and path not in seen and not testpaths.collects(path)
    }


def collection_lines(
    testpaths: PytestTestpaths, trust_dirs: tuple[str, str], left_out: Mapping[str, str]
) -> list[str]:
    """For init's report, what `testpaths` decides: where the trust folders (oracle,
    property) went, a trust folder pytest would never collect, and the test files not
    proposed as oracles."""
    lines = []
    oracle_dir, _ = trust_dirs
    if not testpaths.collects("tests/oracles/test_x.py") and testpaths.collects(
        f"{oracle_dir}/test_x.py"
    ):
        home = str(PurePosixPath(oracle_dir).parent)
        lines.append(
            f"pytest collects only {testpaths.describe()}: the oracle and property folders "
            f"are under {home}/"
        )
    for folder in trust_dirs:
        if not testpaths.collects(f"{folder}/test_x.py"):
            lines.append(
                f"{folder}/ is outside {testpaths.describe()}: its tests are never "
                "collected; move it under a testpaths folder, or add it to testpaths"
            )
    if left_out:
        count = len(left_out)
        lines.append(f"not proposed as oracles, {count} test file{'s' if count != 1 else ''}:")
        lines += [f"  {path} ({why})" for path, why in list(left_out.items())[:MAX_LISTED]]
        if count > MAX_LISTED:
            lines.append(f"  ... and {count - MAX_LISTED} more")
    return lines


def example_module(files: Iterable[str]) -> str:
    """A production module of the project (in `src/`, or a flat layout's package at
    the root), so the known-bad README's commands name a real file."""
    files = list(files)
    packages = {f.rsplit("/", 1)[0] for f in files if f.endswith("/__init__.py")}
    candidates = [
        f
        for f in files
        if f.endswith(".py")
        and "/" in f
        and f.rsplit("/", 1)[0] in packages
        and not f.endswith("__init__.py")
        and not is_test_file(f)
        and not is_benchmark(f)
    ]
    in_src = [f for f in candidates if f.startswith("src/")]
    chosen = sorted(in_src or candidates, key=lambda f: (f.count("/"), f))
    return chosen[0] if chosen else "mypkg/core.py"


def property_empty_because(config: BaseConfig, missing: Mapping[str, str]) -> str:
    """Why the property class is empty: property files pytest never reaches (before
    the invariant text is blamed), the invariants file, or no accepted invariant."""
    globs = config.manifest.property.globs
    unreached = [p for p in missing if matching([p], globs)]
    if unreached:
        return f"{unreached[0]} is {missing[unreached[0]]}"
    return config.invariants_problem() or "no property file declares an accepted invariant"
