"""The test suite's own sample project and how to build repositories from it.

The tree under `tests/resources/minilib/` is the tests' copy of a small project
with a full trust overlay. It is deliberately not the demo's (package data in
`andgate/commands/samples/`): a change to the demo never changes what the tests exercise.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

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


# -- projects installed into a test virtualenv (the `project_venv` fixture) ------------


def pip_install(venv: Path, *target: str) -> None:
    """`pip install TARGET` into venv as CI runs it, without the network: no
    dependencies, and the build backends andgate's test environment has."""
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps"]
    done = subprocess.run(
        [*pip, "--no-build-isolation", *target], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"pip install {' '.join(target)}:\n{done.stderr}"


def pip_uninstall(venv: Path, name: str) -> None:
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "uninstall", "-q", "-y", name]
    subprocess.run(pip, capture_output=True, timeout=300)


class VenvProject:
    """A repository whose project is installed in a test virtualenv, with andgate run
    as its user runs it: the virtualenv's `python -m andgate`, in the repository."""

    def __init__(self, venv: Path, repo: SampleRepo, tmp: Path) -> None:
        self.venv, self.repo, self.tmp = venv, repo, tmp

    def andgate(
        self, *args: str, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        return subprocess.run(
            [str(self.venv / "bin" / "python"), "-m", "andgate", *args],
            cwd=self.repo.path,
            env={**environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=600,
        )

    def check(
        self, base: str, artifacts: Path | None = None, env: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """`andgate check --base BASE` of HEAD, as cheap as the verdict allows (two
        jobs, no discrimination report): verdict.json's payload."""
        out = artifacts or self.tmp / "check"
        shutil.rmtree(out, ignore_errors=True)
        done = self.andgate(
            "check", "--base", base, "--json", "--jobs", "2", "--no-discrimination",
            "--artifacts", str(out), "--today", "2026-12-01", env=env,
        )  # fmt: skip
        assert done.stdout, done.stderr
        return dict(json.loads(done.stdout))
