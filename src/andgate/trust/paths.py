"""What a repository path is: test file, trust-root file, production file.

Globs use gitignore semantics (pathspec), because `fnmatch` gets `**` wrong:
`tests/oracles/**/*.py` must match `tests/oracles/test_a.py` too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

import pathspec

from andgate.git import Change
from andgate.trust import plugin_declarations, pytest_config

TEST_DIRS = frozenset({"tests", "test", "testing"})
GLOB_MAGIC = frozenset("*?[")
PYTEST_CONFIG_NAMES = frozenset(pytest_config.CANDIDATES)


@lru_cache(maxsize=64)
def _spec(globs: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(globs)


def matches(path: str, globs: Iterable[str]) -> bool:
    globs = tuple(globs)
    return bool(globs) and _spec(globs).match_file(path)


def matching(paths: Iterable[str], globs: Iterable[str]) -> frozenset[str]:
    globs = tuple(globs)
    if not globs:
        return frozenset()
    spec = _spec(globs)
    return frozenset(p for p in paths if spec.match_file(p))


def is_under(path: str, folder: str) -> bool:
    folder = folder.rstrip("/")
    return path == folder or path.startswith(folder + "/")


def is_test_module(path: str) -> bool:
    """A file pytest collects tests from by default: `test_*.py` or `*_test.py`."""
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def is_test_file(path: str) -> bool:
    """conftest.py, test_*.py, *_test.py, or anything under a `tests`, `test` or
    `testing` folder."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    if name == "conftest.py" or (
        name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    ):
        return True
    return any(part in TEST_DIRS for part in parts[:-1])


def glob_folder(glob: str, *, names_folder: bool = False) -> str | None:
    """The folder a glob starts in (`tests/oracles` for `tests/oracles/**/*.py`,
    `tests` for `tests/test_api.py`); None for a glob that starts at the root.
    With `names_folder`, a glob without wildcards names a folder (`testpaths`)."""
    parts = PurePosixPath(glob.strip("/")).parts
    static = []
    for part in parts:
        if GLOB_MAGIC & set(part):
            break
        static.append(part)
    if len(static) == len(parts) and not names_folder:
        static = static[:-1]  # no wildcard at all: the glob names one file
    folder = "/".join(static)
    return None if folder in ("", ".") else folder


@dataclass(frozen=True)
class TestSide:
    """Which paths are the test side (contract section 2): test files by name,
    the folders of base's pytest `testpaths` and of the oracle and property
    globs, and `test_support_globs`."""

    folders: tuple[str, ...] = ()
    support_globs: tuple[str, ...] = ()

    def holds(self, path: str) -> bool:
        return (
            is_test_file(path)
            or any(is_under(path, folder) for folder in self.folders)
            or matches(path, self.support_globs)
        )


def test_side(
    files: Iterable[str],
    *,
    testpaths: Iterable[str],
    trusted_globs: tuple[str, ...],
    support_globs: tuple[str, ...],
) -> TestSide:
    """The test side of a tree. A `testpaths` folder or a glob's folder counts
    only when it is a folder of tests, not of code: every Python file under it
    is a test file by name or matches an oracle or property glob. Otherwise
    `testpaths = src` (doctests) would make head's production code base's."""
    files = list(files)
    candidates = {glob_folder(g, names_folder=True) for g in testpaths}
    candidates |= {glob_folder(g) for g in trusted_globs}
    candidates.discard(None)
    folders = []
    for folder in sorted(c for c in candidates if c):
        code = [
            p for p in files if is_under(p, folder) and p.endswith(".py") and not is_test_file(p)
        ]
        if not any(not matches(p, trusted_globs) for p in code):
            folders.append(folder)
    return TestSide(tuple(folders), support_globs)


def is_pytest_config_name(path: str) -> bool:
    return PurePosixPath(path).name in PYTEST_CONFIG_NAMES


def pytest_config_differs(path: str, old: bytes | None, new: bytes | None) -> bool:
    """Would pytest see a difference between two versions of a config file?"""
    return pytest_config_change(path, old, new) is not None


def pytest_config_change(path: str, old: bytes | None, new: bytes | None) -> str | None:
    """Why pytest would see a difference (one line), or None when it would not.

    Each version is read by pytest's own reader (see `andgate.trust.pytest_config`):
    pyproject.toml counts only through its pytest tables and `[tool.andgate]`,
    tox.ini/setup.cfg only through their pytest sections, pytest's own files
    byte for byte. A version pytest cannot read counts as changed.
    """
    return pytest_config.change(path, old, new)


SYMLINK_MODE = "120000"


class ConfigChanges(dict[str, str]):
    """Config files pytest would read differently, path -> why (one line).

    Called with a path it answers "did pytest's view of it change?", the
    `config_differs` callable the plan and the authorship sort take. `plugins` holds
    the build files whose `pytest11` declarations changed (path -> why): trust roots,
    but not pytest configuration, so the plan keeps head's copy of them.
    """

    def __init__(self, *args: object, **kwargs: str) -> None:
        super().__init__(*args, **kwargs)
        self.plugins: dict[str, str] = {}

    def __call__(self, path: str) -> bool:
        return path in self


def config_changes(
    changes: Iterable[Change],
    read_old: Callable[[str], bytes | None],
    read_new: Callable[[str], bytes | None],
) -> ConfigChanges:
    """Every changed pytest config file (by name, at any depth) that pytest would see changed."""
    found = ConfigChanges()
    for change in changes:
        for path in change.paths:
            if plugin_declarations.is_build_file(path):
                why = _build_file_change(change, path, read_old, read_new)
                if why is not None:
                    found.plugins[path] = why
            if not is_pytest_config_name(path):
                continue
            if SYMLINK_MODE in (change.old_mode, change.new_mode):
                # pytest follows the link in the worktree; the blob is only its target's name
                found[path] = "a symbolic link: pytest would read the file it points to"
                continue
            why = pytest_config_change(path, read_old(path), read_new(path))
            if why is not None:
                found[path] = why
    return found


def _build_file_change(
    change: Change,
    path: str,
    read_old: Callable[[str], bytes | None],
    read_new: Callable[[str], bytes | None],
) -> str | None:
    if SYMLINK_MODE in (change.old_mode, change.new_mode):
        # a backend reads the file it points to; the blob is only its target's name
        return (
            "a symbolic link: a build backend would read the pytest11 plugins it "
            "declares from the file it points to"
        )
    return plugin_declarations.change(path, read_old(path), read_new(path))


def is_gitattributes(path: str) -> bool:
    """`.gitattributes` at any depth: it can rewrite files (eol, filters) on checkout."""
    return PurePosixPath(path).name == ".gitattributes"
