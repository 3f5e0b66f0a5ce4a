"""Which oracle files a cold known-bad replay runs first (`replay_order`), unit level."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from andgate.check.oracle import replay_order
from andgate.check.oracle.replay_order import (
    changed_names,
    first_files,
    module_names,
    patched_files,
)

MOD = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")


def patch_file(root: Path, rel: str, search: str, replace: str) -> bytes:
    """Edit `rel` in `root` as `git apply` would have, and return the patch (git's format)."""
    path = root / rel
    old = path.read_text(encoding="utf-8")
    assert old.count(search) == 1
    new = old.replace(search, replace)
    path.write_text(new, encoding="utf-8")
    body = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{rel}", f"b/{rel}"
    )
    return f"diff --git a/{rel} b/{rel}\nindex 1111111..2222222 100644\n{''.join(body)}".encode()


@pytest.fixture(autouse=True)
def fresh_summaries(monkeypatch):
    monkeypatch.setattr(replay_order, "_SUMMARIES", {})


# -- the patch ----------------------------------------------------------------------


def test_paths_come_from_headers_never_from_hunk_bodies():
    patch = (
        b"diff --git a/pkg/core.py b/pkg/core.py\n"
        b"index 1..2 100644\n"
        b"--- a/pkg/core.py\n"
        b"+++ b/pkg/core.py\n"
        b"@@ -1,2 +1,2 @@\n"
        b" x = 1\n"
        b"--- a/pkg/evil.py\n"  # a removed line "-- a/pkg/evil.py"
        b"+++ b/pkg/evil.py\n"
        b"@@ -8 +8 @@ def f():\n"
        b"-    return 1\n"
        b"+    return 2\n"
        b"diff --git a/docs/a b.md b/docs/a b.md\n"
        b"--- a/docs/a b.md\t\n"
        b"+++ b/docs/a b.md\t\n"
        b"@@ -1 +1 @@\n"
        b"-old\n"
        b"+new\n"
        b"-- \n"  # git format-patch's signature
        b"2.43.0\n"
    )
    files = patched_files(patch)
    assert [f.paths for f in files] == [("pkg/core.py",), ("docs/a b.md",)]
    assert files[0].ranges == ((1, 2), (2, 2), (7, 8), (8, 8))


def test_a_truncated_hunk_ends_at_the_next_header():
    patch = (
        b"diff --git a/pkg/one.py b/pkg/one.py\n"
        b"@@ -1,5 +1,5 @@\n"
        b"-x = 1\n"
        b"diff --git a/pkg/two.py b/pkg/two.py\n"
        b"@@ -1 +1 @@\n"
        b"-y = 1\n"
        b"+y = 2\n"
    )
    assert [f.paths for f in patched_files(patch)] == [("pkg/one.py",), ("pkg/two.py",)]


def test_a_plain_unified_diff_without_git_headers():
    patch = (
        b"--- a/pkg/core.py\n"
        b"+++ b/pkg/core.py\n"
        b"@@ -1,1 +1,1 @@\n"
        b"-x = 1\n"
        b"+x = 2\n"
        b"--- a/pkg/other.py\n"
        b"+++ b/pkg/other.py\n"
        b"@@ -3,3 +3,3 @@\n"
        b"\n"  # a blank context line whose space an editor stripped
        b"-y = 1\n"
        b"+y = 2\n"
        b" z = 3\n"
    )
    assert [(f.paths, f.ranges) for f in patched_files(patch)] == [
        (("pkg/core.py",), ((1, 1), (1, 1))),
        (("pkg/other.py",), ((3, 4), (4, 4))),
    ]


def test_renames_deletions_new_and_quoted_files():
    patch = (
        b"diff --git a/pkg/old.py b/pkg/new.py\n"
        b"similarity index 90%\n"
        b"rename from pkg/old.py\n"
        b"rename to pkg/new.py\n"
        b"diff --git a/pkg/gone.py b/pkg/gone.py\n"
        b"deleted file mode 100644\n"
        b"--- a/pkg/gone.py\n"
        b"+++ /dev/null\n"
        b"@@ -1 +0,0 @@\n"
        b"-x = 1\n"
        b"diff --git a/pkg/born.py b/pkg/born.py\n"
        b"new file mode 100644\n"
        b"--- /dev/null\n"
        b"+++ b/pkg/born.py\n"
        b"@@ -0,0 +1,2 @@\n"
        b"+x = 1\n"
        b"+y = 2\n"
        b'diff --git "a/pkg/t\\303\\251st.py" "b/pkg/t\\303\\251st.py"\n'
        b"diff --git a/pkg/empty.py b/pkg/empty.py\n"
        b"deleted file mode 100644\n"
        b"index e69de29..0000000\n"
    )
    files = patched_files(patch)
    assert [(f.paths, f.new_path) for f in files] == [
        (("pkg/old.py", "pkg/new.py"), "pkg/new.py"),
        (("pkg/gone.py",), None),
        (("pkg/born.py",), "pkg/born.py"),
        (("pkg/tést.py",), "pkg/tést.py"),
        (("pkg/empty.py",), None),
    ]
    assert files[2].ranges == ((1, 1), (2, 2))


def test_changed_lines_are_the_added_lines_and_both_sides_of_a_removed_one(tmp_path):
    write(tmp_path, {"m.py": MOD})
    patch = patch_file(tmp_path, "m.py", "return a - b\n", "return a + b\n    # wrong\n")
    (changed,) = patched_files(patch)
    assert changed.ranges == ((5, 6), (6, 6), (7, 7))


def test_module_names_src_layout_flat_layout_init_and_namespace(tmp_path):
    write(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/sub/__init__.py": "",
            "flat/__init__.py": "",
            "src/ns/inner/__init__.py": "",  # ns: a namespace package
        },
    )
    assert module_names("src/pkg/sub/mod.py", tmp_path) == (
        "pkg.sub.mod",
        "src.pkg.sub.mod",
    )
    assert module_names("src/pkg/__init__.py", tmp_path) == ("pkg", "src.pkg")
    assert module_names("flat/core.py", tmp_path) == ("flat.core",)
    assert module_names("flat/__init__.py", tmp_path) == ("flat",)
    assert module_names("top.py", tmp_path) == ("top",)
    assert module_names("src/ns/inner/m.py", tmp_path) == (
        "inner.m",
        "ns.inner.m",
        "src.ns.inner.m",
    )
    assert module_names("my-scripts/run.py", tmp_path) == ("run",)
    assert module_names("README.md", tmp_path) == ()
    assert module_names("pkg/data.json", tmp_path) == ()


def test_changed_names_are_the_definitions_the_hunks_touch():
    source = (
        b"import os\n"  # 1
        b"LIMIT = 3\n"  # 2
        b"\n"
        b"@decorate\n"  # 4
        b"def first():\n"  # 5
        b"    return 1\n"  # 6
        b"\n"
        b"class Box:\n"  # 8
        b"    size = 2\n"  # 9
        b"    def __init__(self):\n"  # 10
        b"        pass\n"  # 11
        b"    def open(self):\n"  # 12
        b"        pass\n"  # 13
        b"if os.name:\n"  # 14
        b"    def later():\n"  # 15
        b"        pass\n"  # 16
    )
    assert changed_names(source, [(2, 2)]) == {"LIMIT"}
    assert changed_names(source, [(4, 4)]) == {"first"}  # a decorator line
    assert changed_names(source, [(11, 11)]) == {"Box"}  # __init__ says nothing
    assert changed_names(source, [(13, 13)]) == {"Box", "open"}
    assert changed_names(source, [(9, 9)]) == {"Box", "size"}
    assert changed_names(source, [(16, 16)]) == {"later"}
    assert changed_names(source, [(3, 3), (7, 7)]) == set()
    assert changed_names(b"def broken(:\n", [(1, 1)]) == set()


# -- ranking oracle files --------------------------------------------------------------

ORACLES = [f"tests/oracles/test_{n}.py" for n in ("a", "b", "c", "d")]


def project(root: Path, package: str, imports: list[str]) -> None:
    """A package `pkg` (under `package`) with core.py and other.py, and one oracle
    file per import line, in ORACLES order."""
    write(
        root,
        {
            f"{package}/__init__.py": "from pkg.core import add, sub\n",
            f"{package}/core.py": MOD,
            f"{package}/other.py": "def mul(a, b):\n    return a * b\n",
        },
    )
    for path, line in zip(ORACLES, imports, strict=True):
        write(root, {path: f"{line}\n\n\ndef test_it():\n    assert True\n"})


@pytest.mark.parametrize("package", ["src/pkg", "pkg"], ids=["src-layout", "flat-layout"])
@pytest.mark.parametrize(
    "line",
    [
        "import pkg.core",
        "import pkg.core as c",
        "from pkg import core",
        "from pkg.core import sub",
        "from pkg.core import *",
        "def test_lazy():\n    from pkg.core import add",
    ],
)
def test_a_file_that_imports_the_patched_module_goes_first(tmp_path, package, line):
    project(tmp_path, package, ["import os", "import pkg.other", line, "from pkg import other"])
    patch = patch_file(tmp_path, f"{package}/core.py", "return a + b", "return a - b")
    assert first_files(patch, tmp_path, ORACLES) == (ORACLES[2],)


def test_a_file_that_names_what_the_hunk_changes_through_its_package_goes_first(tmp_path):
    project(
        tmp_path,
        "src/pkg",
        [
            "from pkg import sub  # re-exported, not changed (unlike add)",
            "from pkg import add",  # re-exported and changed
            "import pkg\n\ndef test_attr():\n    assert pkg.add(1, 1) == 2",
            "from other_project import add",  # the name, not the package
        ],
    )
    patch = patch_file(tmp_path, "src/pkg/core.py", "return a + b", "return a - b")
    assert first_files(patch, tmp_path, ORACLES) == (ORACLES[1], ORACLES[2])


@pytest.mark.parametrize(
    "line", ["from pkg import add", "import pkg", "import pkg.other", "from pkg.other import mul"]
)
def test_a_patched_package_init_is_the_package(tmp_path, line):
    project(tmp_path, "src/pkg", ["import os", line, "import json", "import pytest"])
    patch = patch_file(
        tmp_path, "src/pkg/__init__.py", "from pkg.core import add, sub", "from pkg.core import sub"
    )
    assert first_files(patch, tmp_path, ORACLES) == (ORACLES[1],)


def test_relative_imports_strings_and_comments_do_not_count(tmp_path):
    project(
        tmp_path,
        "pkg",
        [
            "from .pkg.core import add",
            "# import pkg.core",
            "NAME = 'pkg.core'",
            "from pkg import core",
        ],
    )
    patch = patch_file(tmp_path, "pkg/core.py", "return a + b", "return a - b")
    assert first_files(patch, tmp_path, ORACLES) == (ORACLES[3],)


def test_a_file_that_does_not_parse_keeps_its_place(tmp_path):
    project(tmp_path, "pkg", ["import pkg.core", "import os", "from pkg import core", "x"])
    write(tmp_path, {ORACLES[0]: "import pkg.core\ndef broken(:\n"})
    write(tmp_path, {ORACLES[3]: b"import pkg.core\x00\n"})  # null byte: ValueError
    write(tmp_path, {ORACLES[1]: b"\xff\xfe import pkg.core\n"})  # not UTF-8
    patch = patch_file(tmp_path, "pkg/core.py", "return a + b", "return a - b")
    assert first_files(patch, tmp_path, ORACLES) == (ORACLES[2],)


def test_missing_and_oversized_oracle_files_keep_their_place(tmp_path, monkeypatch):
    project(tmp_path, "pkg", ["import pkg.core", "import os", "from pkg import core", "x"])
    (tmp_path / ORACLES[0]).unlink()
    (tmp_path / ORACLES[1]).unlink()
    (tmp_path / ORACLES[1]).symlink_to(tmp_path / ORACLES[2])
    monkeypatch.setattr(replay_order, "MAX_FILE_BYTES", 100)
    write(tmp_path, {ORACLES[3]: "import pkg.core\n" + "#" * 200})
    patch = patch_file(tmp_path, "pkg/core.py", "return a + b", "return a - b")
    assert first_files(patch, tmp_path, ORACLES) == (ORACLES[2],)


def test_a_patch_of_no_python_module_reorders_nothing(tmp_path):
    project(tmp_path, "pkg", ["import pkg.core", "import os", "import json", "import pytest"])
    write(tmp_path, {"pkg/data.txt": "one\ntwo\n", "README.md": "# pkg\n"})
    patch = patch_file(tmp_path, "pkg/data.txt", "two", "three")
    patch += patch_file(tmp_path, "README.md", "# pkg", "# pkg!")
    assert first_files(patch, tmp_path, ORACLES) == ()
    assert first_files(b"not a patch", tmp_path, ORACLES) == ()
    assert first_files(b"", tmp_path, ORACLES) == ()


def test_paths_outside_the_worktree_are_never_read(tmp_path):
    project(tmp_path / "tree", "pkg", ["import os", "import pkg.core", "import json", "x = 1"])
    for path in ("../tree/pkg/core.py", "/abs/pkg/core.py", ".git/pkg/core.py"):
        patch = (
            f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            "@@ -1 +1 @@\n-def add(a, b):\n+def add(b, a):\n"
        ).encode()
        assert first_files(patch, tmp_path / "tree", ORACLES) == (), path
    patch = patch.replace(b".git/", b"")
    assert first_files(patch, tmp_path / "tree", ORACLES) == (ORACLES[1],)


def test_nothing_is_first_when_every_file_would_be(tmp_path):
    project(tmp_path, "pkg", ["import pkg.core"] * 4)
    patch = patch_file(tmp_path, "pkg/core.py", "return a + b", "return a - b")
    assert first_files(patch, tmp_path, ORACLES) == ()


def test_first_files_keep_the_order_they_were_given_in(tmp_path):
    project(tmp_path, "pkg", ["import pkg.core", "import os", "from pkg import core", "x = 1"])
    patch = patch_file(tmp_path, "pkg/core.py", "return a + b", "return a - b")
    assert first_files(patch, tmp_path, ORACLES[::-1]) == (ORACLES[2], ORACLES[0])


def test_a_patched_oracle_file_goes_first(tmp_path):
    project(tmp_path, "pkg", ["import os", "import json", "import pytest", "import re"])
    patch = patch_file(tmp_path, ORACLES[2], "assert True", "assert False")
    assert first_files(patch, tmp_path, ORACLES) == (ORACLES[2],)


def test_the_scan_stops_at_its_budget_and_the_rest_keep_their_place(tmp_path):
    project(tmp_path, "pkg", ["import pkg.core", "import os", "from pkg import core", "x"])
    patch = patch_file(tmp_path, "pkg/core.py", "return a + b", "return a - b")
    assert first_files(patch, tmp_path, ORACLES, budget=-1) == ()
    assert first_files(patch, tmp_path, ORACLES) == (ORACLES[0], ORACLES[2])


def test_summaries_are_shared_by_content_across_worktrees(tmp_path, monkeypatch):
    calls = []
    real = replay_order._summarize
    monkeypatch.setattr(replay_order, "_summarize", lambda s: calls.append(s) or real(s))
    for tree in ("one", "two"):
        project(
            tmp_path / tree, "pkg", ["import pkg.core", "import os", "from pkg import core", "x"]
        )
        patch = patch_file(tmp_path / tree, "pkg/core.py", "return a + b", "return a - b")
        assert first_files(patch, tmp_path / tree, ORACLES) == (ORACLES[0], ORACLES[2])
    assert len(calls) == 2  # the files that mention `core` or `add`, read once


# -- which files a replay runs first, and what a part of the class proves -----------

TWO_ORACLES = ("tests/oracles/test_a.py", "tests/oracles/test_b.py")


@pytest.mark.parametrize(
    ("killers", "files"),
    [
        (("tests/oracles/test_a.py::test_x",), ("tests/oracles/test_a.py",)),
        (("tests/oracles/test_b.py::TestC::test_y",), ("tests/oracles/test_b.py",)),
        (("tests/oracles/test_a.py::test_p[a::b]",), ("tests/oracles/test_a.py",)),
        (
            (
                "tests/oracles/test_b.py::t",
                "tests/oracles/test_a.py::t",
                "tests/oracles/test_b.py::u",
            ),
            TWO_ORACLES,
        ),
        (("tests/test_misc.py::test_x",), ()),  # not an oracle file: never run as one
        (("tests/oracles/test_gone.py::test_x", "", "collection error in x"), ()),
        (("/abs/tests/oracles/test_a.py::t", "../tests/oracles/test_a.py::t"), ()),
    ],
)
def test_the_remembered_killers_name_only_oracle_files(killers, files):
    from andgate.check.oracle.replay import _files_of

    assert _files_of(killers, TWO_ORACLES) == files


def test_a_part_of_the_class_proves_a_bite_only_with_no_collection_error():
    from andgate.check.oracle.replay import COLLECTION_ERROR, _proves
    from andgate.records import ReplayFacts

    def part(*failed: str) -> ReplayFacts:
        return ReplayFacts("kb", applied=True, failed=failed)

    assert _proves(part("tests/oracles/test_a.py::test_x"))
    assert not _proves(part())
    assert not _proves(part(f"{COLLECTION_ERROR}tests/oracles/test_b.py"))
    # An item that failed beside a file that did not collect may have missed it.
    assert not _proves(part("tests/oracles/test_a.py::t", f"{COLLECTION_ERROR}tests/oracles/b.py"))
