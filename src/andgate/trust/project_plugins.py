"""The project's own pytest plugins, and which of them the trusted runs may load.

An installed project can register a pytest plugin (a `pytest11` entry point): every
pytest process of the environment then loads its module, the oracle's included. CI
installs head (`pip install -e .`), so a change that adds such an entry point, or
points an existing one at another module, would run its own hooks inside the oracle
process (a `pytest_runtest_makereport` that turns a failing report into a pass).

So the oracle, property and replay processes load only the project's entry points
that base's build configuration declares, name and target alike; the others are
blocked there with `-p no:NAME` (pytest never imports a blocked entry point). The
untrusted processes load them all: they are head's tests, and a pass there never
helps. The declarations are read from `pyproject.toml` (any backend's table: a
`pytest11` table of names to targets at any depth), `setup.cfg` (a `pytest11` option
in any section) and `setup.py` (the `"name = target"` strings of a file that names
`pytest11`), at the repository's top.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, cast

GROUP = "pytest11"
BUILD_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
ENTRY = re.compile(
    r"""["']\s*([\w.\-]+)\s*=\s*([\w.]+(?:\s*:\s*[\w.]+)?)\s*(?:\[[^\]]*\])?\s*["']"""
)

Declared = frozenset[tuple[str, str]]  # (name, target)


def normal(target: str) -> str:
    """`pkg.plugin : attr [extra]` and `pkg.plugin:attr` are the same target."""
    return re.sub(r"\s+", "", target.split("[", 1)[0])


def installed_plugins(distributions: Iterable[str]) -> dict[str, str]:
    """name -> target of the `pytest11` entry points these distributions installed."""
    found = {}
    for name in distributions:
        try:
            points = metadata.distribution(name).entry_points
        except (metadata.PackageNotFoundError, OSError, ValueError):
            continue
        for point in points.select(group=GROUP):
            found[point.name] = normal(point.value)
    return found


def declared_plugins(files: Mapping[str, bytes | None]) -> Declared:
    """The (name, target) pairs these build files declare in the `pytest11` group.
    A file that does not parse declares nothing: a plugin it meant stays blocked."""
    pairs: set[tuple[str, str]] = set()
    for path, data in files.items():
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        if GROUP not in text:
            continue
        if path == "pyproject.toml":
            pairs.update(_from_toml(text))
        elif path == "setup.cfg":
            pairs.update(_from_cfg(text))
        elif path == "setup.py":
            pairs.update((m[1], normal(m[2])) for m in ENTRY.finditer(text))
    return frozenset(pairs)


def _from_toml(text: str) -> Iterator[tuple[str, str]]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return
    for table in _tables_named(data, GROUP):
        for name, target in table.items():
            if isinstance(target, str):
                yield name, normal(target)


def _tables_named(data: Any, key: str) -> Iterator[dict[str, Any]]:
    if isinstance(data, dict):
        for name, value in data.items():
            if name == key and isinstance(value, dict):
                yield value
            else:
                yield from _tables_named(value, key)


def _from_cfg(text: str) -> Iterator[tuple[str, str]]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    for section in parser.sections():
        value = parser.get(section, GROUP, fallback=None)
        for line in (value or "").splitlines():
            name, sep, target = line.partition("=")
            if sep and name.strip():
                yield name.strip(), normal(target)


def blocked_plugins(installed: Mapping[str, str], declared: Declared) -> tuple[str, ...]:
    """The installed entry points the trusted runs must not load: every one whose
    name and target base does not declare."""
    return tuple(sorted(n for n, t in installed.items() if (n, t) not in declared))


STARTUP_MODULES = frozenset({"sitecustomize.py", "usercustomize.py"})
# The standard editable hooks' `.pth` lines (setuptools, editables/hatchling): import
# the finder module, and install it. Any other line Python runs at start-up is not one.
EDITABLE_IMPORT = re.compile(
    r"import\s+(?P<m>(?:__editable__|_editable_impl_)\w*)\s*(?:;\s*(?P=m)\.install\(\s*\)\s*)?"
)


def startup_hooks(distributions: Iterable[str]) -> list[str]:
    """What the project's installed distributions run at interpreter start besides
    the standard editable hook (contract section 4): a `.pth` file with a line that
    imports anything but an editable finder, or a `sitecustomize`/`usercustomize`
    module. Each: `<distribution>: <file> (why)`."""
    found = []
    for name in distributions:
        try:
            dist = metadata.distribution(name)
            files = list(dist.files or ())
        except (metadata.PackageNotFoundError, OSError, ValueError):
            continue
        for file in files:
            why = _startup_hook(dist, file)
            if why is not None:
                found.append(f"{name}: {file} ({why})")
    return found


def _startup_hook(dist: metadata.Distribution, file: Any) -> str | None:
    base = str(file).rsplit("/", 1)[-1]
    if "/" not in str(file) and base in STARTUP_MODULES:
        return "a start-up module Python imports in every process"
    if not base.endswith(".pth"):
        return None
    try:
        # typeshed's SimplePath (3.11) has a read_text() without arguments; the
        # path finders' PathDistribution returns a pathlib.Path, which takes them.
        path = cast(Path, dist.locate_file(file))
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "a .pth file andgate cannot read (it cannot be shown to be the editable hook)"
    for line in text.splitlines():
        if line.startswith(("import ", "import\t")) and not EDITABLE_IMPORT.fullmatch(line.strip()):
            return f"a .pth file that runs code at start-up: {line.strip()[:60]}"
    return None
