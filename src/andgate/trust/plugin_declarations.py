"""The project's own pytest plugin declarations (`pytest11` entry points), as a
build backend would read them from `pyproject.toml`, `setup.cfg` or `setup.py`.

A plugin the project declares is loaded into every pytest process of an environment
that installed it, before any conftest: it is as much a trust root as a conftest. So
a change to what a build file declares under `pytest11` is a trust-root change, and
any other edit of the same file (a version bump, a dependency) is not (contract
section 2, "Trust-root files"). What one version of a build file declares:

- **Nothing**, for no file and for a file that declares no `pytest11` entry point
  alike: adding or deleting a packaging-only `pyproject.toml`, `setup.cfg` or
  `setup.py` changes nothing a pytest process loads.
- `pyproject.toml`: build backends spell the table differently
  (`[project.entry-points.pytest11]`, `[tool.poetry.plugins."pytest11"]`,
  `[tool.flit.entrypoints.pytest11]`, ...), so its declarations are every table named
  `pytest11` at any depth, and setuptools' `[tool.setuptools.dynamic]` `entry-points`
  (which moves them into another file).
- `setup.cfg`: every `pytest11` option of an `[options.entry_points]` section, and an
  `[options]` `entry_points = file: ...` that moves them into another file.
- `setup.py` is code: what it declares cannot be read without running it. One that
  *mentions* `pytest11` (below) is compared by its syntax tree (comments and formatting
  aside); one that mentions it on neither side declares nothing here.

A UTF-8 byte-order mark is dropped before parsing, as an editor that wrote it means the
file (`utf-8-sig`). setuptools 84 (configparser, "no section headers") and pip 23
(tomllib, "Invalid statement") refuse such a file, so reading it can only show the
gate declarations no build installs, never hide one that a build does.

A version that cannot be parsed (not UTF-8, invalid TOML or INI, a setup.py syntax
error) is `Unreadable`. A change with an unreadable side counts only when the text of
either side *mentions* `pytest11`, or its readable side declares something: no build
backend reads a file its parser rejects, so a broken file that never names the group
declares no plugin. *Mentions*: the group's name in any case, also spelt with `\\x`,
`\\u` or `\\U` escapes (TOML keys and Python strings read them) and, in a setup.py, in a
string constant (adjacent literals joined, `"pytest" "11"`).

Why a setup.py that never mentions `pytest11` is not a trust root, though code can
compute the group's name (`"pytest" + "1" * 2`) or read its entry points from a file,
an `exec`, another module: such a declaration is never trusted. `declared_entries`
reads a setup.py's literal `"name = target"` strings only, and only in a file that
names `pytest11` literally, so the oracle, property and replay processes block
(`-p no:NAME`) every entry point a setup.py computes, and an installed plugin that
base does not declare is `PRODUCTION_SUSPICIOUS` (`check.production.phase.
with_installed_hooks`). Counting every setup.py edit instead would block each
version bump of the many projects that keep one, without closing any door.

`declared_entries` reads the same tables and sections as (name, target) pairs: what
`project_plugins` lets a trusted run load. One reader for both questions, so what counts
as a declaration never differs between them; where the two could differ they fail
closed on both sides: an unreadable file declares nothing a trusted run may load, and
counts as a change when it may declare one.
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
NOTHING = ""  # what no file, or a file that declares no pytest plugin, declares
# "name = target" inside setup.py's strings: setup.py is code, read here for its literals only
SETUP_PY_ENTRY = re.compile(
    r"""["']\s*([\w.\-]+)\s*=\s*([\w.]+(?:\s*:\s*[\w.]+)?)\s*(?:\[[^\]]*\])?\s*["']"""
)
# `\x31`, `\u0031`, `\U00000031`: how TOML keys and Python strings can spell a character
ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))")
# setuptools' `[tool.setuptools.dynamic]` field that reads entry points from a file
DYNAMIC_ENTRY_POINTS = ("tool", "setuptools", "dynamic", "entry-points")


class Unreadable(ValueError):
    """A version of a build file that cannot be read with certainty."""


def is_build_file(path: str) -> bool:
    return PurePosixPath(path).name in BUILD_FILES


def declarations(path: str, data: bytes | None) -> str:
    """A canonical text of what one version of a build file declares as pytest
    plugins (`NOTHING` for none or no file); Unreadable when it cannot be known."""
    if data is None:
        return NOTHING
    name = PurePosixPath(path).name
    if name == "setup.py":
        return _setup_py(data)
    if name == "pyproject.toml":
        return _pyproject(_text(data))
    if name == "setup.cfg":
        return _setup_cfg(_text(data))
    return NOTHING


def change(path: str, old: bytes | None, new: bytes | None) -> str | None:
    """Why the pytest plugins a build file declares differ (one line), or None."""
    if not is_build_file(path) or old == new:
        return None
    before, after = _read_side(path, old), _read_side(path, new)
    unreadable = [side for side in (before, after) if isinstance(side, Unreadable)]
    if unreadable:
        declared = any(isinstance(side, str) and side != NOTHING for side in (before, after))
        if declared or mentions(path, old) or mentions(path, new):
            return f"its pytest plugin declarations ({GROUP}) cannot be read: {unreadable[0]}"
        return None  # no backend reads it, and it names no pytest plugin
    if before == after:
        return None
    if PurePosixPath(path).name == "setup.py":
        return (
            f"setup.py is code and names {GROUP}: the plugins it declares cannot be read "
            "without running it, so any change to its code counts"
        )
    return f"the pytest plugins it declares ({GROUP} entry points) differ"


def mentions(path: str, data: bytes | None) -> bool:
    """Does this version's text name the `pytest11` group (any case, escapes read;
    in a setup.py also its string constants)?"""
    if data is None:
        return False
    # ASCII survives any other encoding a backend might fall back to
    if _names_group(data.decode("utf-8", errors="replace")):
        return True
    if PurePosixPath(path).name != "setup.py":
        return False
    try:
        return _constants_name_group(ast.parse(data))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _constants_name_group(tree: ast.AST) -> bool:
    """Does a string constant name the group? Adjacent literals are one constant."""
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if isinstance(value, str) and _names_group(value):
            return True
    return False


def declared_entries(path: str, data: bytes | None) -> frozenset[tuple[str, str]]:
    """The (name, target) pairs one version of a build file declares in the `pytest11`
    group, targets written as `normal` writes them; Unreadable when it cannot be known."""
    if data is None or not is_build_file(path):
        return frozenset()
    text = _text(data)
    name = PurePosixPath(path).name
    pairs: Iterable[tuple[str, str]]
    if name == "pyproject.toml":
        pairs = _pyproject_entries(text)
    elif name == "setup.cfg":
        pairs = _setup_cfg_entries(text)
    else:
        # Trusted only as literally written: a group name or entry computed, escaped
        # or read from elsewhere is not declared, so its plugin stays blocked.
        pairs = ((m[1], m[2]) for m in SETUP_PY_ENTRY.finditer(text)) if GROUP in text else ()
    return frozenset((entry, normal(target)) for entry, target in pairs)


def normal(target: str) -> str:
    """`pkg.plugin : attr [extra]` and `pkg.plugin:attr` are the same target."""
    return re.sub(r"\s+", "", target.split("[", 1)[0])


def _read_side(path: str, data: bytes | None) -> str | Unreadable:
    try:
        return declarations(path, data)
    except Unreadable as exc:
        return exc


def _text(data: bytes) -> str:
    """A build file's text, a UTF-8 byte-order mark dropped (`utf-8-sig`)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Unreadable("not UTF-8") from None


def _names_group(text: str) -> bool:
    return GROUP in ESCAPE.sub(_unescaped, text).casefold()


def _unescaped(match: re.Match[str]) -> str:
    code = int(match[1] or match[2] or match[3], 16)
    return chr(code) if code <= 0x10FFFF else match[0]


def _canonical(found: list[tuple[str, Any]]) -> str:
    if not found:
        return NOTHING
    return json.dumps(sorted(found, key=lambda f: f[0]), sort_keys=True, default=str)


def _pyproject_doc(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise Unreadable(f"invalid TOML ({exc})") from None


def _pyproject_groups(text: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    _collect_groups(_pyproject_doc(text), (), found, 0)
    return found


def _pyproject(text: str) -> str:
    doc = _pyproject_doc(text)
    found: list[tuple[str, Any]] = []
    _collect_groups(doc, (), found, 0)
    dynamic = _dig(doc, DYNAMIC_ENTRY_POINTS)
    if dynamic is not None:
        found.append((".".join(DYNAMIC_ENTRY_POINTS), dynamic))
    return _canonical(found)


def _dig(node: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


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
    found: list[tuple[str, Any]] = [
        # inside a pytest11 value, whitespace and line breaks are layout; a file name is not
        (where, value.strip() if where == "options.entry_points" else " ".join(value.split()))
        for where, value in _setup_cfg_groups(text)
    ]
    return _canonical(found)


def _setup_cfg_entries(text: str) -> Iterator[tuple[str, str]]:
    for where, value in _setup_cfg_groups(text):
        if where.rpartition(".")[2] != GROUP:
            continue  # `entry_points = file:` (nothing here to trust), or not spelled as installed
        for line in value.splitlines():
            name, sep, target = line.partition("=")
            if sep and name.strip():
                yield name.strip(), target.strip()


def _setup_py(data: bytes) -> str:
    # From the bytes, as Python reads a source file: a byte-order mark and a coding
    # declaration are honoured.
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise Unreadable(f"setup.py does not parse ({exc.__class__.__name__})") from None
    text = data.decode("utf-8", errors="replace")
    if not (_names_group(text) or _constants_name_group(tree)):
        return NOTHING  # it names no pytest plugin group: see the module's docstring
    return ast.dump(tree)
