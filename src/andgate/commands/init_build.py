"""What `andgate init` reads from the project's build configuration: the line that
installs the project with its test dependencies (a test extra of `pyproject.toml`,
`setup.cfg` or `setup.py`, or a requirements file; a marked line to edit when
none names them) and the version files its build backend writes at install time."""

from __future__ import annotations

import ast
import configparser
import tomllib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from andgate.commands.common import read_file
from andgate.errors import AndgateError


def read_pyproject(root: Path) -> dict[str, Any]:
    raw = read_file(root, "pyproject.toml")
    try:
        return tomllib.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _table(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = data.get(key)
        if not isinstance(value, Mapping):
            return {}
        data = value
    return data


def generated_by_backend(pyproject: Mapping[str, Any]) -> tuple[str, ...]:
    """The version files setuptools-scm and hatch-vcs write at install time."""
    found = []
    scm = _table(pyproject, "tool", "setuptools_scm")
    found += [scm.get("version_file"), scm.get("write_to")]
    vcs_hook = _table(pyproject, "tool", "hatch", "build", "hooks", "vcs")
    found += [vcs_hook.get("version-file"), vcs_hook.get("version_file")]
    raw_options = _table(pyproject, "tool", "hatch", "version", "raw-options")
    found += [raw_options.get("version_file"), raw_options.get("write_to")]
    return tuple(dict.fromkeys(f for f in found if isinstance(f, str) and _safe_path(f)))


def _safe_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and ".." not in parts and is_utf8(path)


TEST_EXTRAS = ("test", "tests", "testing", "dev")
REQUIREMENT_FILES = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "test-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements-testing.txt",
    "requirements/testing.txt",  # more-itertools
    "requirements-dev.txt",
    "dev-requirements.txt",
    "requirements/dev.txt",
)
EDIT_ME = "  # andgate init: edit this line to install your test dependencies"


def install_command(root: Path, pyproject: Mapping[str, Any]) -> str:
    """The project and its test dependencies, from its extras or requirements
    files; a marked line to edit when neither names them."""
    extras = {*_table(pyproject, "project", "optional-dependencies"), *_setuptools_extras(root)}
    extra = next((e for e in TEST_EXTRAS if e in extras), None)
    if extra is not None:
        return f'python -m pip install -e ".[{extra}]"'
    requirements = next((r for r in REQUIREMENT_FILES if (root / r).is_file()), None)
    if requirements is not None:
        return f"python -m pip install -e . -r {requirements}"
    return f"python -m pip install -e . pytest{EDIT_ME}"


def _setuptools_extras(root: Path) -> set[str]:
    """The extras setuptools reads from `setup.cfg` (`[options.extras_require]`) and
    from `setup.py` (a literal `extras_require` dict, or a module-level name bound to
    one). A file that cannot be read names none: the install line is then marked."""
    return _setup_cfg_extras(_text(root, "setup.cfg")) | _setup_py_extras(_text(root, "setup.py"))


def _text(root: Path, rel: str) -> str:
    try:
        raw = read_file(root, rel)
        return "" if raw is None else raw.decode("utf-8-sig")
    except (AndgateError, OSError, UnicodeDecodeError):
        return ""


def _setup_cfg_extras(text: str) -> set[str]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return set()
    section = "options.extras_require"
    return set(parser[section]) if parser.has_section(section) else set()


def _setup_py_extras(text: str) -> set[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    bound = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        for keyword in node.keywords if isinstance(node, ast.Call) else ():
            value = keyword.value
            if keyword.arg == "extras_require" and isinstance(value, ast.Name):
                value = bound.get(value.id, value)
            if keyword.arg == "extras_require" and isinstance(value, ast.Dict):
                found |= {
                    k.value
                    for k in value.keys
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)
                }
    return found


def is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
