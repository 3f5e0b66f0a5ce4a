"""pytest's configuration, read the way the installed pytest reads it.

The gate gives every pytest process its config file explicitly (`-c`), so it
must pick the same file pytest would pick in the worktree's root, and never
one from a folder above it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

# pytest 9's search order (`_pytest.config.findpaths.CONFIG_LOADERS_BY_NAME`).
CONFIG_NAMES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


def _names() -> tuple[str, ...]:
    try:
        from _pytest.config.findpaths import CONFIG_LOADERS_BY_NAME
    except ImportError:
        return CONFIG_NAMES
    return tuple(CONFIG_LOADERS_BY_NAME)


def _load(path: Path) -> object | None:
    from _pytest.config.findpaths import load_config_dict_from_file

    return load_config_dict_from_file(path)


def root_config_file(folder: Path) -> str | None:
    """The name of the config file pytest would use in `folder` itself (a
    `pyproject.toml` without pytest tables when nothing else has any), or None.
    A file pytest cannot read is chosen too: pytest then reports the problem."""
    pyproject = None
    real = folder.resolve()
    for name in _names():
        path = folder / name
        if not path.is_file() or not path.resolve().is_relative_to(real):
            continue  # a link out of the worktree is not the worktree's config
        if name == "pyproject.toml":
            pyproject = name
        try:
            if _load(path) is not None:
                return name
        except BaseException as exc:  # pytest's fail() raises a BaseException
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            return name
    return pyproject


def testpaths(folder: Path) -> tuple[str, ...]:
    """The `testpaths` setting of the config file pytest would use in `folder`
    (ini mode: a whitespace-separated string; toml mode: a list)."""
    name = root_config_file(folder)
    if name is None:
        return ()
    try:
        config = _load(folder / name) or {}
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return ()
    value = config.get("testpaths") if isinstance(config, dict) else None
    value = getattr(value, "value", value)
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return ()


def base_testpaths(blobs: dict[str, bytes]) -> tuple[str, ...]:
    """`testpaths` as pytest reads it from a tree's root config files (their bytes)."""
    with tempfile.TemporaryDirectory(prefix="andgate-config-") as tmp:
        folder = Path(tmp)
        for name, data in blobs.items():
            (folder / name).write_bytes(data)
        return testpaths(folder)
