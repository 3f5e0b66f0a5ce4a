"""The test suite's own sample project and how to build repositories from it.

The tree under `tests/resources/minilib/` is the tests' copy of a small project
with a full trust overlay. It is deliberately not the demo's (package data in
`andgate/samples/`): a change to the demo never changes what the tests exercise.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from andgate.sample import SampleRepo, build_sample, load_tree

RESOURCES = Path(__file__).parent / "resources"
BASE_FILES: dict[str, str] = load_tree(RESOURCES / "minilib")
MANIFEST = BASE_FILES["tests/trust_manifest.yaml"]
FREEZE = BASE_FILES["tests/flakes/freeze.yaml"]
INVARIANT = (
    "chunk(seq, n) returns pieces of exactly n items except a shorter last piece, "
    "and joining them gives seq back"
)


def build_test_sample(path: Path, files: Mapping[str, str] | None = None) -> tuple[SampleRepo, str]:
    """The tests' sample project as a repository (upstream, then the trust overlay)."""
    return build_sample(path, BASE_FILES if files is None else files)
