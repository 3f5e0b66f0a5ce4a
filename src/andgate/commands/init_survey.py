"""What `andgate init` finds in the repository before it writes anything: the test
modules and their folders, the markers pytest registers, `testpaths`, the build
backend's generated files and install line, test files with xfail items, and the
modules of the project's own pytest plugins."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from andgate.commands.common import read_file
from andgate.commands.init_build import (
    generated_by_backend,
    install_command,
    is_utf8,
    read_pyproject,
)
from andgate.commands.layout import (
    PytestTestpaths,
    example_module,
    not_proposed,
    read_testpaths,
)
from andgate.commands.xfails import Xfail, xfails_in
from andgate.errors import AndgateError
from andgate.git import Git, decode_path
from andgate.trust import project_plugins, pytest_config
from andgate.trust.paths import is_under

MARKER_NAME = re.compile(r"\s*([A-Za-z_]\w*)")


ENVIRONMENT_PARTS = frozenset({"site-packages", "dist-packages", ".tox", ".nox"})


@dataclass(frozen=True)
class Survey:
    """What the repository already has: test folders and pytest markers."""

    test_dirs: dict[str, int]
    markers: dict[str, tuple[str, ...]]
    unreadable: tuple[str, ...] = ()
    test_files: tuple[str, ...] = ()  # the test modules the project has today
    generated: tuple[str, ...] = ()  # files the build backend writes (generated_files)
    install: str = ""  # how CI installs the project with its test dependencies
    # Test files that make items xfail, with where: never proposed as oracles.
    xfails: Mapping[str, tuple[Xfail, ...]] = field(default_factory=dict)
    testpaths: PytestTestpaths = field(default_factory=PytestTestpaths)
    # Test modules never proposed as oracles, with why: benchmark scripts, and files
    # outside `testpaths` (pytest never collects them).
    left_out: Mapping[str, str] = field(default_factory=dict)
    example_module: str = "mypkg/core.py"  # a production module, for the known-bad README
    # The modules of the project's own pytest plugins (`pytest11` entry points its
    # build files declare): their hooks are allowed there (production_scan.allow).
    plugin_files: tuple[str, ...] = ()
    unfound_plugins: tuple[str, ...] = ()  # "name = target" whose module no file holds

    @property
    def marker_names(self) -> tuple[str, ...]:
        return tuple(sorted({m for names in self.markers.values() for m in names}))


def survey_repo(git: Git) -> Survey:
    # A name that is not UTF-8 (decoded with surrogateescape) cannot be written
    # into the manifest, a UTF-8 file: it is not suggested.
    files = [f for f in _repo_files(git) if is_utf8(f)]
    tests = [f for f in files if _is_test_module(PurePosixPath(f).name)]
    folders = sorted({str(PurePosixPath(f).parent) for f in tests})
    # A folder's glob covers its subfolders, so its count includes their files.
    counts = {d: sum(d == "." or is_under(f, d) for f in tests) for d in folders}
    markers: dict[str, tuple[str, ...]] = {}
    unreadable = []
    for name in pytest_config.CANDIDATES:
        raw = read_file(git.repo, name)
        if raw is None:
            continue
        try:
            found = _markers_of(name, raw)
        except pytest_config.Unreadable:
            unreadable.append(name)
            continue
        if found:
            markers[name] = found
    pyproject = read_pyproject(git.repo)
    testpaths = read_testpaths(lambda name: read_file(git.repo, name)).in_tree(files)
    build_files = {name: read_file(git.repo, name) for name in project_plugins.BUILD_FILES}
    plugin_files, unfound = plugin_modules(files, project_plugins.declared_plugins(build_files))
    return Survey(
        counts,
        markers,
        tuple(unreadable),
        test_files=tuple(sorted(tests)),
        generated=generated_by_backend(pyproject),
        install=install_command(git.repo, pyproject),
        xfails=_xfails(git.repo, tests),
        testpaths=testpaths,
        left_out=not_proposed(tests, testpaths),
        example_module=example_module(files),
        plugin_files=plugin_files,
        unfound_plugins=unfound,
    )


def plugin_modules(
    files: Iterable[str], declared: Iterable[tuple[str, str]]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The repository files that hold the modules of the declared pytest plugins (under
    any source folder: `src/pkg/plugin.py` holds `pkg.plugin`), and each declaration
    (`name = target`) whose module no file holds."""
    files = list(files)
    found: list[str] = []
    unfound = []
    for name, target in sorted(declared):
        module = target.split(":", 1)[0].strip().replace(".", "/")
        tails = (f"{module}.py", f"{module}/__init__.py")
        hits = [f for f in files if any(f == t or f.endswith(f"/{t}") for t in tails)]
        if hits:
            found += hits
        else:
            unfound.append(f"{name} = {target}")
    return tuple(dict.fromkeys(found)), tuple(unfound)


def _xfails(root: Path, tests: Iterable[str]) -> dict[str, tuple[Xfail, ...]]:
    """The test files that make items xfail (an oracle item that xfails never passes)."""
    found = {}
    for rel in sorted(tests):
        try:
            source = read_file(root, rel)
        except (AndgateError, OSError):
            continue  # unreadable here: pytest reports it, doctor names it
        places = xfails_in(source or b"")
        if places:
            found[rel] = places
    return found


def _repo_files(git: Git) -> list[str]:
    """Tracked files and untracked ones git does not ignore, outside virtualenvs
    (a `.venv/` the project's .gitignore does not name holds other packages' tests)."""
    raw = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    files = [decode_path(p) for p in raw.split(b"\0") if p]
    envs = {PurePosixPath(f).parent for f in files if PurePosixPath(f).name == "pyvenv.cfg"}
    return [f for f in files if not _in_environment(PurePosixPath(f), envs)]


def _in_environment(path: PurePosixPath, envs: set[PurePosixPath]) -> bool:
    if any(part in ENVIRONMENT_PARTS for part in path.parts[:-1]):
        return True
    return any(env in path.parents for env in envs)


def _is_test_module(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _markers_of(name: str, raw: bytes) -> tuple[str, ...]:
    """Registered marker names, read as pytest reads the file."""
    names = (MARKER_NAME.match(line) for line in pytest_config.markers(name, raw))
    return tuple(dict.fromkeys(m.group(1) for m in names if m))
