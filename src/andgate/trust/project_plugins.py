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

import re
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, cast

from andgate.trust import plugin_declarations

# Read from base's build files at the repository's top.
BUILD_FILES = tuple(sorted(plugin_declarations.BUILD_FILES))

Declared = frozenset[tuple[str, str]]  # (name, target)


def installed_plugins(distributions: Iterable[str]) -> dict[str, str]:
    """name -> target of the `pytest11` entry points these distributions installed."""
    found = {}
    for name in distributions:
        try:
            points = metadata.distribution(name).entry_points
        except (metadata.PackageNotFoundError, OSError, ValueError):
            continue
        for point in points.select(group=plugin_declarations.GROUP):
            found[point.name] = plugin_declarations.normal(point.value)
    return found


def declared_plugins(files: Mapping[str, bytes | None]) -> Declared:
    """The (name, target) pairs these build files declare in the `pytest11` group,
    read as the trust-root check reads them (`plugin_declarations`). A file that
    cannot be read declares nothing: a plugin it meant stays blocked."""
    pairs: set[tuple[str, str]] = set()
    for path, data in files.items():
        try:
            pairs |= plugin_declarations.declared_entries(path, data)
        except plugin_declarations.Unreadable:
            continue
    return frozenset(pairs)


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
