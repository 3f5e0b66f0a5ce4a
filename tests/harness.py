"""The test suite's own sample project and how to build repositories from it.

The tree under `tests/resources/minilib/` is the tests' copy of a small project
with a full trust overlay. It is deliberately not the demo's (package data in
`andgate/samples/`): a change to the demo never changes what the tests exercise.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from andgate.sample import KNOWN_BAD, SampleRepo, init_repo, load_tree, lock_text

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
    overlay with the known-bad fixtures named (`andgate.sample.build_sample`, with
    a choice of fixtures)."""
    files = BASE_FILES if files is None else files
    repo = init_repo(path)
    repo.write({k: v for k, v in files.items() if k.startswith("minilib/") or k == ".gitignore"})
    repo.commit("minilib upstream")
    patches = {name: repo.diff_of([KNOWN_BAD[name]]) for name in known_bad}
    repo.write(dict(files))
    repo.write({f"tests/oracles/known_bad/{name}.patch": p for name, p in patches.items()})
    repo.write({"tests/oracles/locks.sha256": lock_text(path / "tests/oracles/fixtures")})
    return repo, repo.commit("trust overlay (owner: alice)")
