"""The project's own pytest plugin declarations (`pytest11` entry points), as a
build backend would read them from `pyproject.toml`, `setup.cfg` or `setup.py`.

A plugin the project declares is loaded into every pytest process of an environment
that installed it, before any conftest: it is as much a trust root as a conftest. So
a change to what a build file declares under `pytest11` is a trust-root change, and
any other edit of the same file (a version bump, a dependency) is not.

Build backends spell the table differently (`[project.entry-points.pytest11]`,
`[tool.poetry.plugins."pytest11"]`, `[tool.flit.entrypoints.pytest11]`, ...), so a
pyproject's declarations are every table named `pytest11` at any depth. `setup.py` is
code: its declarations cannot be read without running it, so any change to its syntax
tree counts (comments and formatting do not). A file that cannot be read counts as
changed: fail closed.

`declared_entries` reads the same tables and sections as (name, target) pairs: what
`project_plugins` lets a trusted run load. One reader for both questions, so what counts
as a declaration never differs between them.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import Any

GROUP = "pytest11"
BUILD_FILES = frozenset({"pyproject.toml", "setup.cfg", "setup.py"})
MAX_DEPTH = 64
# "name = target" inside setup.py's strings: setup.py is code, read here for its literals only
SETUP_PY_ENTRY = re.compile(
    r"""["']\s*([\w.\-]+)\s*=\s*([\w.]+(?:\s*:\s*[\w.]+)?)\s*(?:\[[^\]]*\])?\s*["']"""
)


class Unreadable(ValueError):
    """A version of a build file that cannot be read with certainty."""


def is_build_file(path: str) -> bool:
    return PurePosixPath(path).name in BUILD_FILES


def declarations(path: str, data: bytes | None) -> str:
    """A canonical text of what one version of a build file declares as pytest
    plugins ("" for none or no file); Unreadable when it cannot be known."""
    if data is None:
        return ""
    name = PurePosixPath(path).name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("not UTF-8") from None
    if name == "pyproject.toml":
        return _pyproject(text)
    if name == "setup.cfg":
        return _setup_cfg(text)
    if name == "setup.py":
        return _setup_py(text)
    return ""


def change(path: str, old: bytes | None, new: bytes | None) -> str | None:
    """Why the pytest plugins a build file declares differ (one line), or None."""
    if not is_build_file(path) or old == new:
        return None
    try:
        before, after = declarations(path, old), declarations(path, new)
    except Unreadable as exc:
        return f"its pytest plugin declarations ({GROUP}) cannot be read: {exc}"
    if before == after:
        return None
    if PurePosixPath(path).name == "setup.py":
        return (
            f"setup.py is code: the {GROUP} plugins it declares cannot be read without running it"
        )
    return f"the pytest plugins it declares ({GROUP} entry points) differ"


def declared_entries(path: str, data: bytes | None) -> frozenset[tuple[str, str]]:
    """The (name, target) pairs one version of a build file declares in the `pytest11`
    group, targets written as `normal` writes them; Unreadable when it cannot be known."""
    if data is None or not is_build_file(path):
        return frozenset()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable("not UTF-8") from None
    name = PurePosixPath(path).name
    pairs: Iterable[tuple[str, str]]
    if name == "pyproject.toml":
        pairs = _pyproject_entries(text)
    elif name == "setup.cfg":
        pairs = _setup_cfg_entries(text)
    else:
        pairs = ((m[1], m[2]) for m in SETUP_PY_ENTRY.finditer(text)) if GROUP in text else ()
    return frozenset((entry, normal(target)) for entry, target in pairs)


def normal(target: str) -> str:
    """`pkg.plugin : attr [extra]` and `pkg.plugin:attr` are the same target."""
    return re.sub(r"\s+", "", target.split("[", 1)[0])


def _pyproject_groups(text: str) -> list[tuple[str, Any]]:
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise Unreadable(f"invalid TOML ({exc})") from None
    found: list[tuple[str, Any]] = []
    _collect_groups(doc, (), found, 0)
    return found


def _pyproject(text: str) -> str:
    found = _pyproject_groups(text)
    return json.dumps(sorted(found, key=lambda f: f[0]), sort_keys=True, default=str)


def _pyproject_entries(text: str) -> Iterator[tuple[str, str]]:
    # Declared means installed: importlib.metadata reads the group `pytest11` exactly,
    # where any spelling of it counts as a change (`_is_group`).
    for where, table in _pyproject_groups(text):
        if where.rpartition(".")[2] == GROUP and isinstance(table, dict):
            yield from ((k, v) for k, v in table.items() if isinstance(v, str))


def _collect_groups(
    node: Any, where: tuple[str, ...], found: list[tuple[str, Any]], depth: int
) -> None:
    if depth > MAX_DEPTH:
        raise Unreadable("nested too deeply")
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if _is_group(key):
            found.append((".".join((*where, key)), value))
        _collect_groups(value, (*where, key), found, depth + 1)


def _is_group(key: str) -> bool:
    # importlib.metadata compares group names exactly; quotes and case are a backend's business
    return key.strip().strip("\"'").casefold() == GROUP


def _setup_cfg_groups(text: str) -> list[tuple[str, str]]:
    """(where, value) of every `pytest11` option setuptools reads, and of an
    `entry_points = file: ...` that moves them into another file."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep case, as setuptools
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise Unreadable(f"invalid setup.cfg ({exc.__class__.__name__})") from None
    found = []
    for section in parser.sections():
        normal_name = section.strip().casefold().replace("-", "_")
        if normal_name == "options":
            value = parser.get(section, "entry_points", fallback=None)
            if value is not None:
                found.append(("options.entry_points", value.strip()))
        if normal_name == "options.entry_points":
            found += [
                (f"{section}.{key}", value)
                for key, value in parser.items(section)
                if _is_group(key)
            ]
    return found


def _setup_cfg(text: str) -> str:
    # whitespace and line breaks inside a value are layout, not declarations
    found = [
        # inside a pytest11 value, whitespace and line breaks are layout; a file name is not
        (where, value.strip() if where == "options.entry_points" else " ".join(value.split()))
        for where, value in _setup_cfg_groups(text)
    ]
    return json.dumps(sorted(found))


def _setup_cfg_entries(text: str) -> Iterator[tuple[str, str]]:
    for where, value in _setup_cfg_groups(text):
        if where.rpartition(".")[2] != GROUP:
            continue  # `entry_points = file:` (nothing here to trust), or not spelled as installed
        for line in value.splitlines():
            name, sep, target = line.partition("=")
            if sep and name.strip():
                yield name.strip(), target.strip()


def _setup_py(text: str) -> str:
    try:
        return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise Unreadable(f"setup.py does not parse ({exc.__class__.__name__})") from None
