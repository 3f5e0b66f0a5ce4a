"""Every shape a change can take, on the tests' sample project (`harness.py`).

A shape is one kind of git change (added, deleted, renamed with and without
edits, copied, mode-only, symlink, binary, empty, file to folder and back) at
one kind of path (production, test, trust root). `SHAPES` names each with what
the gate should decide; `PRIMITIVES` are the building blocks the Hypothesis test
combines into random change sets. Both edit a checkout of the sample's base.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from andgate.commands.sample import SampleRepo, init_repo
from harness import BASE_FILES

# Base files beyond the sample's own, so that a file can become a folder (and a
# folder a file) without breaking an import the oracles rely on.
EXTRA_BASE_FILES = {
    "minilib/VERSION": "1.0\n",
    "tests/data/words.txt": "alpha\nbeta\n",
    "tests/data_notes": "notes kept beside the tests\n",
}
SHAPES_BASE_FILES = {**BASE_FILES, **EXTRA_BASE_FILES}

NEW_MODULE = '"""A helper the change adds."""\n\n\ndef twice(x):\n    return 2 * x\n'


def module_test(module: str) -> str:
    """A test of NEW_MODULE imported as `module`."""
    return f"from {module} import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n"


NEW_MODULE_TEST = module_test("minilib.newmod")
# Bytes no decoder takes for text: a NUL, invalid UTF-8, a lone continuation byte.
BINARY = bytes(range(256)) + b"\x00\xff\xfe\x80"

Apply = Callable[[SampleRepo], None]


def rename(repo: SampleRepo, old: str, new: str) -> None:
    target = repo.path / new
    target.parent.mkdir(parents=True, exist_ok=True)
    (repo.path / old).rename(target)


def copy(repo: SampleRepo, old: str, new: str) -> None:
    target = repo.path / new
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(repo.path / old, target)


def make_executable(repo: SampleRepo, rel: str) -> None:
    path = repo.path / rel
    path.chmod(path.stat().st_mode | 0o111)


def symlink(repo: SampleRepo, rel: str, target: str) -> None:
    """`rel` becomes a symbolic link to `target` (relative to rel's folder)."""
    path = repo.path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    os.symlink(target, path)


def to_folder(repo: SampleRepo, rel: str, inner: str = "inside.txt", text: str = "x\n") -> None:
    """The file at `rel` becomes a folder holding one file."""
    (repo.path / rel).unlink()
    repo.write({f"{rel}/{inner}": text})


def to_file(repo: SampleRepo, rel: str, text: str = "now a file\n") -> None:
    """The folder at `rel` becomes a file."""
    shutil.rmtree(repo.path / rel)
    repo.write({rel: text})


def gitlink(repo: SampleRepo, rel: str) -> None:
    """A repository of its own at `rel`: `git add` records it as a submodule's commit."""
    inner = init_repo(repo.path / rel)
    inner.write({"lib.py": "x = 1\n"})
    inner.commit("vendored")


def append(repo: SampleRepo, rel: str, text: str) -> None:
    path = repo.path / rel
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@dataclass(frozen=True)
class Shape:
    """One change shape, and what the gate decides on it (`approved`: an owner
    approved it, so a trust-root change can allow and every phase reads head)."""

    name: str
    apply: Apply
    codes: frozenset[str] = frozenset()  # the block's reason codes (none: an allow)
    approved: bool = False

    @property
    def decision(self) -> str:
        return "block" if self.codes else "allow"


def codes(*names: str) -> frozenset[str]:
    return frozenset(names)


def _all(*steps: Apply) -> Apply:
    def apply(repo: SampleRepo) -> None:
        for step in steps:
            step(repo)

    return apply


# -- production ---------------------------------------------------------------------------

DEAD_IMPORTS = {"COLLECTION_ERROR", "ORACLE_FAILED", "NO_SEEDS"}  # every class breaks

PRODUCTION: list[Shape] = [
    Shape(
        "production module added, with its test",
        lambda r: r.write(
            {"minilib/newmod.py": NEW_MODULE, "tests/test_newmod.py": NEW_MODULE_TEST}
        ),
    ),
    Shape("production file deleted", lambda r: r.delete("minilib/VERSION")),
    Shape(
        "production module deleted (its importers break)",
        lambda r: r.delete("minilib/mathx.py"),
        codes(*DEAD_IMPORTS),
    ),
    Shape("production renamed", lambda r: rename(r, "minilib/VERSION", "minilib/VERSION.txt")),
    Shape(
        "production module renamed, its importer edited",
        _all(
            lambda r: rename(r, "minilib/mathx.py", "minilib/numbers.py"),
            lambda r: r.edit("minilib/__init__.py", "minilib.mathx", "minilib.numbers"),
        ),
    ),
    Shape(
        "production renamed with edits (the known-bad fixture no longer applies)",
        _all(
            lambda r: rename(r, "minilib/text.py", "minilib/strings.py"),
            lambda r: append(r, "minilib/strings.py", "\n\ndef shout(s):\n    return s.upper()\n"),
            lambda r: r.edit("minilib/__init__.py", "minilib.text", "minilib.strings"),
        ),
        codes("KNOWN_BAD_STALE"),
    ),
    Shape("production copied", lambda r: copy(r, "minilib/text.py", "minilib/text_copy.py")),
    Shape("production mode only", lambda r: make_executable(r, "minilib/text.py")),
    # A symlink in production code is a construct of the scan (Python imports the file
    # it leads to, not what the scan read as the link).
    Shape(
        "production symlink added",
        lambda r: symlink(r, "minilib/alias.py", "text.py"),
        codes("PRODUCTION_SUSPICIOUS"),
    ),
    Shape(
        "production file becomes a symlink",
        lambda r: symlink(r, "minilib/VERSION", "text.py"),
        codes("PRODUCTION_SUSPICIOUS"),
    ),
    Shape(
        "production module becomes a symlink (the fixture's file is one)",
        _all(
            lambda r: copy(r, "minilib/text.py", "minilib/text_impl.py"),
            lambda r: symlink(r, "minilib/text.py", "text_impl.py"),
        ),
        codes("KNOWN_BAD_STALE", "PRODUCTION_SUSPICIOUS"),
    ),
    Shape(
        "production binary added",
        lambda r: r.write({"minilib/blob.bin": BINARY}),
        codes("PRODUCTION_SUSPICIOUS"),
    ),
    Shape(
        "production binary Python file",
        lambda r: r.write({"minilib/compiled.py": BINARY}),
        codes("PRODUCTION_SUSPICIOUS"),
    ),
    Shape("production empty module added", lambda r: r.write({"minilib/empty.py": ""})),
    Shape("production file emptied", lambda r: r.write({"minilib/VERSION": ""})),
    Shape("production file to folder", lambda r: to_folder(r, "minilib/VERSION")),
    Shape(
        "production module to folder",
        lambda r: to_folder(r, "minilib/text.py", "__init__.py", "x = 1\n"),
        codes(*DEAD_IMPORTS, "KNOWN_BAD_STALE"),
    ),
    Shape(
        "production paths with odd names",
        lambda r: r.write(
            {
                "minilib/with space.py": NEW_MODULE,
                "minilib/tab\there.py": "x = 1\n",
                'minilib/quo"te.py': "x = 1\n",
                "minilib/new\nline.py": NEW_MODULE,
                "-dash.py": "x = 1\n",
            }
        ),
    ),
    Shape("submodule added", lambda r: gitlink(r, "vendor/lib")),
]

# -- test side ----------------------------------------------------------------------------

TESTS: list[Shape] = [
    Shape(
        "test added",
        lambda r: r.write({"tests/test_added.py": "def test_added():\n    assert True\n"}),
    ),
    Shape("test deleted", lambda r: r.delete("tests/test_misc.py")),
    Shape("test renamed", lambda r: rename(r, "tests/test_misc.py", "tests/test_misc_renamed.py")),
    Shape(
        "test renamed with edits",
        _all(
            lambda r: rename(r, "tests/test_misc.py", "tests/test_clamp.py"),
            lambda r: append(r, "tests/test_clamp.py", "\n\ndef test_more():\n    assert 1\n"),
        ),
    ),
    Shape("test copied", lambda r: copy(r, "tests/test_misc.py", "tests/test_misc_copy.py")),
    Shape("test mode only", lambda r: make_executable(r, "tests/test_misc.py")),
    Shape("test symlink added", lambda r: symlink(r, "tests/test_linked.py", "test_misc.py")),
    Shape(
        "test file becomes a symlink",
        lambda r: symlink(r, "tests/data/words.txt", "../data_notes"),
    ),
    Shape("test binary added", lambda r: r.write({"tests/data/blob.bin": BINARY})),
    Shape("test empty file added", lambda r: r.write({"tests/test_empty.py": ""})),
    Shape("test file emptied", lambda r: r.write({"tests/test_misc.py": ""})),
    Shape("test file to folder", lambda r: to_folder(r, "tests/data_notes")),
    Shape("test folder to file", lambda r: to_file(r, "tests/data")),
    Shape(
        "test paths with odd names",
        lambda r: r.write(
            {
                "tests/test_ünï cödé.py": "def test_x():\n    assert 1\n",
                "tests/test_new\nline.py": "def test_y():\n    assert 1\n",
            }
        ),
    ),
    Shape("submodule among the tests", lambda r: gitlink(r, "tests/vendored")),
]

# -- trust root and oracle side (unapproved: a block; approved: every phase reads head) --

UNAPPROVED_ORACLE = codes("ORACLE_AUTHORSHIP")
UNAPPROVED_ROOT = codes("TRUST_ROOT_CHANGED")

TRUST_ROOT: list[Shape] = [
    Shape(
        # a test file the change adds under an oracle glob is its own: untrusted
        "oracle-glob file added (the change's own test)",
        lambda r: r.write(
            {"tests/oracles/test_added_oracle.py": "def test_new():\n    assert True\n"}
        ),
    ),
    Shape(
        "oracle deleted",
        lambda r: r.delete("tests/oracles/test_text_oracle.py"),
        UNAPPROVED_ORACLE,
    ),
    Shape(
        "oracle renamed, approved",
        lambda r: rename(r, "tests/oracles/test_math_oracle.py", "tests/oracles/test_math2.py"),
        approved=True,
    ),
    Shape(
        "oracle file to folder",
        lambda r: to_folder(r, "tests/oracles/test_math_oracle.py"),
        UNAPPROVED_ORACLE,
    ),
    Shape(
        "oracle symlink added, approved",
        lambda r: symlink(r, "tests/oracles/test_linked_oracle.py", "test_text_oracle.py"),
        approved=True,
    ),
    Shape(
        "fixture renamed",
        lambda r: rename(r, "tests/oracles/fixtures/cases.json", "tests/oracles/fixtures/c.json"),
        codes("ORACLE_AUTHORSHIP", "LOCK_MISMATCH"),
    ),
    Shape(
        "fixture binary added, approved (approval does not re-lock)",
        lambda r: r.write({"tests/oracles/fixtures/blob.bin": BINARY}),
        codes("LOCK_MISMATCH"),
        approved=True,
    ),
    Shape(
        "fixture to folder",
        lambda r: to_folder(r, "tests/oracles/fixtures/cases.json"),
        codes("ORACLE_AUTHORSHIP", "LOCK_MISMATCH"),
    ),
    Shape(
        "fixtures folder to file",
        lambda r: to_file(r, "tests/oracles/fixtures"),
        codes("ORACLE_AUTHORSHIP", "LOCK_MISMATCH"),
    ),
    Shape("lock deleted", lambda r: r.delete("tests/oracles/locks.sha256"), UNAPPROVED_ORACLE),
    Shape(
        # approved head: head's fixtures replay, and an empty one proves nothing
        "known-bad fixture emptied, approved",
        lambda r: r.write({"tests/oracles/known_bad/kb_chunk_drops_tail.patch": ""}),
        codes("KNOWN_BAD_STALE"),
        approved=True,
    ),
    Shape(
        "manifest mode only",
        lambda r: make_executable(r, "tests/trust_manifest.yaml"),
        UNAPPROVED_ROOT,
    ),
    Shape(
        "pytest.ini becomes a symlink",
        _all(
            lambda r: copy(r, "pytest.ini", "pytest-real.ini"),
            lambda r: symlink(r, "pytest.ini", "pytest-real.ini"),
        ),
        UNAPPROVED_ROOT,
    ),
    Shape("pytest.ini deleted", lambda r: r.delete("pytest.ini"), UNAPPROVED_ROOT),
    Shape(
        "conftest.py added empty, approved",
        lambda r: r.write({"tests/conftest.py": ""}),
        approved=True,
    ),
    Shape(
        ".gitattributes added, binary",
        lambda r: r.write({".gitattributes": BINARY}),
        UNAPPROVED_ROOT,
    ),
    Shape(
        "invariants renamed",
        lambda r: rename(r, "tests/properties/INVARIANTS.md", "tests/properties/INV.md"),
        UNAPPROVED_ROOT,
    ),
    Shape(
        "property file symlinked",
        lambda r: symlink(r, "tests/properties/test_linked.py", "test_chunk_property.py"),
    ),
    Shape(
        "freeze file to folder", lambda r: to_folder(r, "tests/flakes/freeze.yaml"), UNAPPROVED_ROOT
    ),
]

SHAPES: list[Shape] = PRODUCTION + TESTS + TRUST_ROOT


# -- primitives for random change sets -----------------------------------------------------

NEW_PRODUCTION = ["minilib/new.py", "minilib/sub/new.py", "new.py", "minilib/blob.bin"]
NEW_TEST_SIDE = [
    "tests/test_new.py",
    "tests/conftest.py",
    "tests/data/notes.txt",
    "tests/oracles/test_new.py",
    "tests/properties/test_new.py",
]
NEW_PATHS = NEW_PRODUCTION + NEW_TEST_SIDE
CONTENTS: dict[str, str | bytes] = {
    "module": NEW_MODULE,
    "test": NEW_MODULE_TEST,
    "passing test": "def test_passes():\n    assert True\n",
    "failing test": "def test_fails():\n    assert False\n",
    "empty": "",
    "binary": BINARY,
    "not python": "this is not ( python\n",
}
# The steps on an existing file; a write takes a content name instead of a second path,
# and "add module" writes a module and a test of it (the change agents make most).
OPERATIONS = ("delete", "rename", "copy", "chmod", "symlink", "to folder", "append")


@dataclass(frozen=True)
class Operation:
    """One step of a random change: `kind` on `path`, with `other` (a second path or
    a content name) when the kind needs one."""

    kind: str
    path: str
    other: str

    def apply(self, repo: SampleRepo) -> None:
        """Do the step whatever the tree looks like by now (a file in the way is
        replaced, a missing one skipped), so any sequence of steps is a change."""
        path = repo.path / self.path
        if self.kind == "write":
            _clear_for_file(repo, self.path)
            _write(path, CONTENTS[self.other])
        elif self.kind == "add module":
            module = self.path.removesuffix(".py").replace("/", ".")
            test = f"tests/test_{module.replace('.', '_')}.py"
            for rel, text in ((self.path, NEW_MODULE), (test, module_test(module))):
                _clear_for_file(repo, rel)
                _write(repo.path / rel, text)
        elif not path.is_file() or path.is_symlink():
            return  # every other step starts from a regular file
        elif self.kind == "delete":
            path.unlink()
        elif self.kind in ("rename", "copy") and self.other != self.path:
            data = path.read_bytes()
            if self.kind == "rename":
                path.unlink()
            _clear_for_file(repo, self.other)
            _write(repo.path / self.other, data)
        elif self.kind == "chmod":
            make_executable(repo, self.path)
        elif self.kind == "symlink" and self.other != self.path:
            _clear_for_file(repo, self.other)
            link = repo.path / self.other
            os.symlink(os.path.relpath(path, link.parent), link)
        elif self.kind == "to folder":
            to_folder(repo, self.path)
        elif self.kind == "append":
            with path.open("ab") as file:
                file.write(b"\n# appended by the change\n")

    def __str__(self) -> str:
        return f"{self.kind} {self.path!r} {self.other!r}"


def _write(path: Path, data: str | bytes) -> None:
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def _clear_for_file(repo: SampleRepo, rel: str) -> None:
    """Make room for a regular file at `rel`: a file or link where a folder of its
    path should be goes (file to folder), as does a folder or link at `rel` itself."""
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        folder = repo.path.joinpath(*parts[:depth])
        if folder.is_symlink() or folder.is_file():
            folder.unlink()
    target = repo.path / rel
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
