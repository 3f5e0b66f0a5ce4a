"""The test suite's own sample project and how to build repositories from it.

The tree under `tests/resources/minilib/` is the tests' copy of a small project
with a full trust overlay. It is deliberately not the demo's (package data in
`andgate/commands/samples/`): a change to the demo never changes what the tests exercise.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path

from andgate.commands.sample import KNOWN_BAD, SampleRepo, init_repo, load_tree, lock_text

RESOURCES = Path(__file__).parent / "resources"
BASE_FILES: dict[str, str] = load_tree(RESOURCES / "minilib")
MANIFEST = BASE_FILES["tests/trust_manifest.yaml"]
FREEZE = BASE_FILES["tests/flakes/freeze.yaml"]
INVARIANT = (
    "chunk(seq, n) returns pieces of exactly n items except a shorter last piece, "
    "and joining them gives seq back"
)


# The known-bad fixture of the one-fixture sample (the `sample` fixture's default):
# weakened_oracle (stories.py) neutralizes it.
ONE_KNOWN_BAD = ("kb_chunk_drops_tail",)


def build_test_sample(
    path: Path, files: Mapping[str, str] | None = None, known_bad: Collection[str] = KNOWN_BAD
) -> tuple[SampleRepo, str]:
    """The tests' sample project as a repository: an upstream commit, then the trust
    overlay with the known-bad fixtures named (`andgate.commands.sample.build_sample`, with
    a choice of fixtures).

    Built once per test process for each set of files and fixtures, then copied:
    the commits' dates are fixed, so a copy has the very objects and shas a new
    build would (about 20 git calls saved for each test that builds one)."""
    files = BASE_FILES if files is None else files
    key = (tuple(sorted(files.items())), tuple(known_bad))
    if key not in _BUILT:
        template = _templates() / str(len(_BUILT))
        _BUILT[key] = _build(template, files, known_bad)
    template, base = _BUILT[key]
    shutil.copytree(template, path, symlinks=True, dirs_exist_ok=True)
    repo = SampleRepo(path)
    repo.run("update-index", "-q", "--refresh")  # the copy's stat data, as a build leaves it
    return repo, base


_BUILT: dict[tuple[object, ...], tuple[Path, str]] = {}


@functools.cache
def _templates() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="andgate-test-samples-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _build(path: Path, files: Mapping[str, str], known_bad: Collection[str]) -> tuple[Path, str]:
    repo = init_repo(path)
    repo.write({k: v for k, v in files.items() if k.startswith("minilib/") or k == ".gitignore"})
    repo.commit("minilib upstream")
    patches = {name: repo.diff_of([KNOWN_BAD[name]]) for name in known_bad}
    repo.write(dict(files))
    repo.write({f"tests/oracles/known_bad/{name}.patch": p for name, p in patches.items()})
    repo.write({"tests/oracles/locks.sha256": lock_text(path / "tests/oracles/fixtures")})
    return path, repo.commit("trust overlay (owner: alice)")
