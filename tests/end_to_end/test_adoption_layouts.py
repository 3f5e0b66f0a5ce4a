"""Adopting with init's proposal on the layouts of the real projects (issues 37 and 44),
end to end: `andgate init`, the README's edits, one known-bad fixture, a commit, then
agent changes checked against the adopted base.

six's shape: one module beside its test module at the repository's root. init proposed
the root's tests as `*.py`, which in gitignore semantics matches every Python file at any
depth: the production module became an oracle file, and every change to it
ORACLE_AUTHORSHIP. benchmarks/real_projects.py adopts the seven projects themselves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from andgate.commands.cli import main
from andgate.commands.sample import AGENT, SampleRepo

pytestmark = pytest.mark.slow

MANIFEST = "tests/trust_manifest.yaml"

SIXISH = """\
import operator

byte2int = operator.itemgetter(0)


def int2byte(i):
    return bytes((i,))
"""
TEST_SIXISH = """\
import sixish


def test_byte2int():
    assert sixish.byte2int(b"\\x03\\x04") == 3


def test_int2byte():
    assert sixish.int2byte(3) == b"\\x03"
"""
# More test files than init proposes one by one: it proposes them by folder.
MANY = {f"tests/test_part_{i}.py": f"def test_{i}():\n    assert {i} == {i}\n" for i in range(41)}


def check(repo: SampleRepo, base: str, out: Path) -> dict[str, Any]:
    options = ["--jobs", "2", "--no-discrimination", "--today", "2026-12-05"]
    code = main(
        ["check", "--repo", str(repo.path), "--base", base, "--artifacts", str(out), *options]
    )
    verdict = json.loads((out / "verdict.json").read_text(encoding="utf-8"))
    assert code == (0 if verdict["verdict"] == "allow" else 1), verdict
    return dict(verdict)


def codes(found: list[dict[str, str]]) -> list[str]:
    return sorted({f["code"] for f in found})


def test_a_single_module_project_adopted_with_inits_proposal_gates_its_module(make_repo, tmp_path):
    repo = make_repo({"sixish.py": SIXISH, "test_sixish.py": TEST_SIXISH, **MANY})
    upstream = repo.run("rev-parse", "HEAD").strip()
    assert main(["init", "--repo", str(repo.path)]) == 0
    manifest = (repo.path / MANIFEST).read_text(encoding="utf-8")
    proposed = '    globs: ["tests/oracles/**/*.py", "test_*.py", "*_test.py", "tests/**/*.py"]'
    assert proposed in manifest, manifest
    repo.edit(MANIFEST, "owners: []", "owners: [alice]")
    repo.edit(MANIFEST, "require_property_class: true", "require_property_class: false")
    bug = repo.diff_of([("sixish.py", "itemgetter(0)", "itemgetter(-1)")])
    repo.write({"tests/oracles/known_bad/kb_byte2int_last.patch": bug})
    assert main(["lock", "update", "--repo", str(repo.path)]) == 0
    adopted = repo.commit("adopt andgate")

    verdict = check(repo, upstream, tmp_path / "adoption")
    assert (verdict["verdict"], codes(verdict["warnings"])) == ("allow", ["ADOPTING"]), verdict
    assert verdict["counts"]["oracle"] == 43

    # An honest refactor of the module: production code, not an oracle file.
    repo.edit("sixish.py", "    return bytes((i,))", "    return i.to_bytes(1, 'big')")
    repo.commit("int2byte: int.to_bytes", who=AGENT)
    verdict = check(repo, adopted, tmp_path / "honest")
    assert (verdict["verdict"], verdict["reasons"]) == ("allow", []), verdict

    # The controls: a broken module fails its oracle; an edit of the test module beside
    # it is an oracle change.
    repo.run("reset", "-q", "--hard", adopted)
    repo.edit("sixish.py", "bytes((i,))", "bytes((i + 1,))")
    repo.commit("int2byte: off by one", who=AGENT)
    verdict = check(repo, adopted, tmp_path / "broken")
    assert codes(verdict["reasons"]) == ["ORACLE_FAILED"], verdict["reasons"]
    repo.edit("test_sixish.py", '    assert sixish.int2byte(3) == b"\\x03"\n', "    pass\n")
    repo.commit("int2byte: the test", who=AGENT)
    verdict = check(repo, adopted, tmp_path / "cheat")
    assert codes(verdict["reasons"]) == ["ORACLE_AUTHORSHIP", "ORACLE_FAILED"], verdict
