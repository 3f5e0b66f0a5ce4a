"""`andgate init` on a flat layout (issue 43, items 5 and 8): the trust folders go where
pytest collects (`testpaths`), benchmark scripts and files outside `testpaths` are never
proposed as oracles, a folder suggestion leaves the property folder out, and the
known-bad README names a module of this project, not `src/`."""

from __future__ import annotations

import contextlib
import io

import pytest

from andgate.commands.init import run_init
from andgate.commands.layout import PytestTestpaths, not_proposed, trust_home
from andgate.trust.manifest import parse_manifest
from flat import MANIFEST, upstream_flat

pytestmark = pytest.mark.slow  # builds a git repository


def test_init_on_a_flat_layout_places_and_proposes_by_testpaths(tmp_path):
    repo, _ = upstream_flat(tmp_path / "flat")
    repo.write({"tools/test_release.py": "def test_release():\n    pass\n"})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run_init(repo.path) == 0
    report = out.getvalue()
    text = (repo.path / MANIFEST).read_text(encoding="utf-8")
    manifest = parse_manifest(text, MANIFEST)
    assert manifest.oracle.globs == (
        "flatlib/tests/oracles/**/*.py",
        "flatlib/tests/test_dicttoolz.py",
        "flatlib/tests/test_itertoolz.py",
    )
    assert manifest.property.globs == ("flatlib/tests/properties/**/*.py",)
    assert manifest.property.invariants_file == "flatlib/tests/properties/INVARIANTS.md"
    assert manifest.known_bad_dir == "flatlib/tests/oracles/known_bad"
    assert '#   globs: ["flatlib/tests/**/*.py", "!flatlib/tests/properties/**"]' in text
    assert "test folders found (suggested in the manifest, commented): flatlib/tests (2)" in report
    assert "pytest collects only testpaths = [flatlib] in pyproject.toml" in report
    assert "  bench/test_take.py (a benchmark script)" in report
    outside = "outside testpaths = [flatlib] in pyproject.toml: pytest never collects it"
    assert f"  tools/test_release.py ({outside})" in report
    readme = (repo.path / "flatlib/tests/oracles/known_bad/README.md").read_text("utf-8")
    assert "git diff -- flatlib/dicttoolz.py > flatlib/tests/oracles/known_bad/" in readme
    assert "src/" not in readme


def test_trust_home_and_what_is_not_proposed():
    toolz = PytestTestpaths("pyproject.toml", ("toolz",))
    files = [
        "toolz/tests/test_a.py",
        "toolz/tests/test_b.py",
        "toolz/sandbox/tests/test_c.py",
        "bench/test_curry.py",
    ]
    assert trust_home(files, toolz) == "toolz/tests"
    assert trust_home([], toolz) == "toolz/tests"
    assert trust_home(files, PytestTestpaths()) is None  # no testpaths: tests/ is collected
    assert trust_home(files, PytestTestpaths("pytest.ini", ("tests", "toolz"))) is None
    assert not_proposed(files, toolz) == {"bench/test_curry.py": "a benchmark script"}
    assert PytestTestpaths("pytest.ini", ("src/*/tests",)).collects("src/pkg/tests/test_x.py")
    # an entry that names nothing in the tree: pytest collects from the root
    assert PytestTestpaths("pytest.ini", ("nowhere",)).in_tree(files) == PytestTestpaths()
    assert toolz.in_tree(files) == toolz
