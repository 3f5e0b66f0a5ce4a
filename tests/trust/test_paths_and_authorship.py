"""Path kinds, pytest-config comparison and the authorship sort (no git needed)."""

from __future__ import annotations

import pytest

from andgate.errors import ManifestError
from andgate.git import Change, parse_raw_diff
from andgate.trust.authorship import sort_changes
from andgate.trust.manifest import parse_manifest
from andgate.trust.paths import (
    config_changes,
    is_test_file,
    matches,
    matching,
    pytest_config_differs,
)
from andgate.verdict import authorship_findings
from harness import MANIFEST

M = parse_manifest(MANIFEST, "tests/trust_manifest.yaml")


def test_globs_have_gitignore_semantics():
    assert matches("tests/oracles/test_a.py", ["tests/oracles/**/*.py"])
    assert matches("tests/oracles/deep/er/test_a.py", ["tests/oracles/**/*.py"])
    assert not matches("pkg/tests/oracles/test_a.py", ["tests/oracles/**/*.py"])
    assert matches("pkg/sub/test_a.py", ["test_*.py"])  # no slash: any depth
    assert not matches("tests/x.py", ["tests/**/*.py", "!tests/x.py"])
    assert matching(["a.py", "b.txt"], ["*.py"]) == frozenset({"a.py"})
    assert matching(["a.py"], []) == frozenset()


def test_test_files():
    for path in (
        "conftest.py",
        "pkg/conftest.py",
        "test_a.py",
        "pkg/a_test.py",
        "tests/data.json",
        "pkg/test/helpers.py",
        "testing/a.py",
    ):
        assert is_test_file(path), path
    for path in ("pkg/a.py", "pkg/testing_utils.py", "pkg/contest.py", "pytest.ini"):
        assert not is_test_file(path), path


def test_pyproject_compares_parsed_pytest_and_andgate_tables():
    old = b'[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    reordered = b'[tool.pytest.ini_options]\naddopts   =  "-q"\n\n[project]\nname = "y"\n'
    assert not pytest_config_differs("pyproject.toml", old, reordered)
    assert pytest_config_differs("pyproject.toml", old, old.replace(b"-q", b"-x"))
    assert pytest_config_differs("pyproject.toml", old, old + b"[tool.andgate]\nx = 1\n")
    assert pytest_config_differs("pyproject.toml", old, b"not toml [")
    assert pytest_config_differs("pyproject.toml", None, old)


def test_ini_files_compare_only_their_pytest_sections():
    old = b"[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n"
    assert not pytest_config_differs("setup.cfg", old, old.replace(b"name = x", b"name = y"))
    assert pytest_config_differs("setup.cfg", old, old.replace(b"-q", b"-x"))
    tox = b"[tox]\nenvlist = py\n[pytest]\nmarkers = a\n"
    assert not pytest_config_differs("tox.ini", tox, tox.replace(b"py\n", b"py311\n"))
    assert pytest_config_differs("tox.ini", tox, tox.replace(b"= a", b"= b"))
    assert pytest_config_differs("pytest.ini", b"[pytest]\n", b"[pytest]\n\n")


def change(status: str, old: str | None, new: str | None) -> Change:
    return Change(status, old, new, "100644", "100644")


def sort(*changes: Change, approved: tuple[str, ...] = (), differs: set[str] = frozenset()):
    return sort_changes(
        changes,
        M,
        is_oracle_file=lambda p: matches(p, M.oracle.globs),
        config_differs=set(differs).__contains__,
        approved_by=approved,
    )


def test_sort_changes_by_kind():
    facts = sort(
        change("M", "minilib/text.py", "minilib/text.py"),
        change("M", "tests/oracles/test_text_oracle.py", "tests/oracles/test_text_oracle.py"),
        change("A", None, "tests/oracles/fixtures/new.json"),
        change("D", "tests/oracles/known_bad/kb.patch", None),
        change("M", "tests/oracles/locks.sha256", "tests/oracles/locks.sha256"),
        change("M", "tests/flakes/freeze.yaml", "tests/flakes/freeze.yaml"),
        change("A", None, "pkg/conftest.py"),
        change("M", "pyproject.toml", "pyproject.toml"),
        change("M", "pytest.ini", "pytest.ini"),
        change("A", None, "tests/test_new.py"),
        differs={"pytest.ini"},
    )
    assert facts.oracle_paths == (
        "tests/oracles/fixtures/new.json",
        "tests/oracles/known_bad/kb.patch",
        "tests/oracles/locks.sha256",
        "tests/oracles/test_text_oracle.py",
    )
    assert facts.trust_root_paths == ("pkg/conftest.py", "pytest.ini", "tests/flakes/freeze.yaml")
    assert facts.production_paths == ("minilib/text.py", "pyproject.toml")
    assert facts.test_paths == ("tests/test_new.py",)
    assert facts.case == "mixed change: production code and trust-root files together"


def test_config_changes_say_why_and_reach_the_trust_root_detail():
    base = {"setup.cfg": b"[metadata]\nversion = 1\n[tool:pytest]\n", "pkg/tox.ini": b"[tox]\n"}
    head = {
        "setup.cfg": b"[metadata]\nversion = 2\n[tool:pytest]\n# x\raddopts = -p evil\n",
        "pkg/tox.ini": b"[tox]\nenvlist = py\n",
        "minilib/text.py": b"",
    }
    changes = [change("M", p, p) for p in head] + [
        Change("A", None, "pytest.ini", "000000", "120000")  # a symlink: its target decides
    ]
    found = config_changes(changes, base.get, head.get)
    assert found == {
        "setup.cfg": "pytest settings differ (addopts)",
        "pytest.ini": "a symbolic link: pytest would read the file it points to",
    }
    assert found("setup.cfg") and not found("pkg/tox.ini")
    facts = sort_changes(
        changes,
        M,
        is_oracle_file=lambda p: False,
        config_differs=found,
        approved_by=(),
    )
    assert [f.detail for f in authorship_findings(facts)] == [
        "pytest.ini changed without owner approval (mixed change: production code and "
        "trust-root files together): a symbolic link: pytest would read the file it points to",
        "setup.cfg changed without owner approval (mixed change: production code and "
        "trust-root files together): pytest settings differ (addopts)",
    ]


def test_a_rename_counts_both_paths():
    facts = sort(change("R", "tests/oracles/test_text_oracle.py", "tests/test_moved.py"))
    assert facts.oracle_paths == ("tests/oracles/test_text_oracle.py",)
    assert facts.test_paths == ("tests/test_moved.py",)
    assert facts.case == "trust-root-only change"


def test_production_globs_limit_what_counts_as_production():
    m = parse_manifest(MANIFEST + 'production_globs: ["minilib/*.py"]\n', "m.yaml")
    facts = sort_changes(
        [change("M", "README.md", "README.md"), change("M", "minilib/a.py", "minilib/a.py")],
        m,
        is_oracle_file=lambda p: False,
        config_differs=lambda p: False,
        approved_by=(),
    )
    assert facts.production_paths == ("minilib/a.py",)


def test_parse_raw_diff_with_renames_modes_and_odd_names():
    raw = (
        b":100644 100644 aaa bbb M\0a b.py\0"
        b":100644 100755 aaa aaa M\0run.sh\0"
        b":100644 100644 aaa bbb R087\0old.py\0new.py\0"
        b":000000 100644 000 bbb A\0caf\xe9.py\0"
        b":100644 000000 aaa 000 D\0gone.py\0"
    )
    changes = parse_raw_diff(raw)
    assert [(c.status, c.old_path, c.new_path) for c in changes] == [
        ("M", "a b.py", "a b.py"),
        ("M", "run.sh", "run.sh"),
        ("R", "old.py", "new.py"),
        ("A", None, "caf\udce9.py"),
        ("D", "gone.py", None),
    ]
    assert changes[1].new_mode == "100755"


def test_a_lock_file_inside_fixtures_dir_is_refused():
    text = MANIFEST.replace("lock_file: tests/oracles/locks.sha256", "lock_file: f/locks.sha256")
    text = text.replace("fixtures_dir: tests/oracles/fixtures", "fixtures_dir: f")
    with pytest.raises(ManifestError, match=r"lock_file 'f/locks\.sha256' is inside fixtures_dir"):
        parse_manifest(text, "m.yaml")


# -- rows of tests/end_to_end/test_check.py decided here, without a gate run ---------------


def _findings(base: dict[str, bytes], head: dict[str, bytes]) -> list[tuple[str, str]]:
    """The authorship findings of base -> head (every path modified or added)."""
    changes = [change("M" if p in base else "A", p, p) for p in head]
    facts = sort_changes(
        changes,
        M,
        is_oracle_file=lambda p: False,
        config_differs=config_changes(changes, base.get, head.get),
        approved_by=(),
    )
    return [(f.code.value, f.detail) for f in authorship_findings(facts)]


def test_pyproject_counts_only_through_pytest_and_andgate_tables():
    base = {"pyproject.toml": b'[project]\nname = "minilib"\nversion = "1"\n'}
    bumped = {"pyproject.toml": b'[project]\nname = "minilib"\nversion = "2"\n'}
    addopts = {
        "pyproject.toml": base["pyproject.toml"]
        + b'\n[tool.pytest.ini_options]\naddopts = "-k not chunk"\n'
    }
    assert _findings(base, bumped) == []
    [(code, detail)] = _findings(base, addopts)
    assert code == "TRUST_ROOT_CHANGED"
    assert detail.startswith("pyproject.toml changed without owner approval")


def test_a_conftest_alone_is_a_trust_root_change():
    [(code, detail)] = _findings({}, {"tests/conftest.py": b"# harmless?\n"})
    assert code == "TRUST_ROOT_CHANGED"
    assert detail.startswith("tests/conftest.py changed")
