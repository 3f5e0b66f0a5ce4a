"""Which installed distributions come from the repository being gated.

CI jobs install the project before they test it: `pip install -e .` (a `.pth`
path entry or an import finder pointing into the checkout) or `pip install .`
(a copy in site-packages). Either way, a pytest process started in a
temporary worktree would import the project from the checkout or from the
copy, not from the worktree: it would test the user's files instead of head.

The path entries and finders of editable installs are redirected inside each
pytest process (`andgate.plugin.redirect`), without having to know the distribution.
A copy in site-packages is found here, from its `direct_url.json` (written by
pip for every install from a local folder): its top-level import names, and
the folder of the repository each one lives in, go first on `sys.path` of
every pytest process, so the worktree's copy wins.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

# Files an editable install adds to site-packages; they are not the project's modules.
EDITABLE_HELPERS = ("__editable__", "_editable_impl_")
TEST_DIRS = frozenset({"tests", "test", "testing"})
METADATA = (".dist-info", ".data")


@dataclass(frozen=True)
class InstalledProject:
    """The project's import names and the repository folders they live in."""

    distributions: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        return {
            "names": list(self.names),
            "roots": list(self.roots),
            "distributions": list(self.distributions),
        }


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _local_source(dist: metadata.Distribution) -> str | None:
    """The folder a distribution was installed from, when pip recorded a local one."""
    try:
        text = dist.read_text("direct_url.json")
        data = json.loads(text) if text else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url.startswith("file:"):
        return None
    return os.path.realpath(unquote(urlparse(url).path))


def _top_level_names(dist: metadata.Distribution) -> set[str]:
    """Top-level importable names: `top_level.txt`, else the installed files, else
    (an editable install that is only a `.pth` path entry) the distribution's name."""
    try:
        listed = dist.read_text("top_level.txt")
    except (OSError, UnicodeDecodeError):
        listed = None
    if listed:
        return {line.strip() for line in listed.splitlines() if line.strip()}
    return _installed_module_names(dist) or _path_entry_names(dist)


def _installed_module_names(dist: metadata.Distribution) -> set[str]:
    names = set()
    for file in dist.files or ():
        parts = PurePosixPath(str(file)).parts
        if not parts or parts[0] in ("..", "__pycache__") or parts[0].endswith(METADATA):
            continue
        top = parts[0].removesuffix(".py") if len(parts) == 1 else parts[0]
        if len(parts) == 1 and not parts[0].endswith(".py"):
            continue  # a .pth file or another helper, not a module
        if not top.startswith(EDITABLE_HELPERS) and top.isidentifier():
            names.add(top)
    return names


def _path_entry_names(dist: metadata.Distribution) -> set[str]:
    """The import name of an editable install that put only a `.pth` path entry into
    site-packages (flit's `<name>.pth`, hatchling's `_editable_impl_<name>.pth`): its
    files name no module, and the folder the entry points at may hold others (a flat
    layout's `docs/`, `misc/`), so the name is the distribution's, normalised as
    packaging tools do (`more-itertools` -> `more_itertools`). `_root_of` keeps it only
    when the repository holds a package or module of that name."""
    files = [PurePosixPath(str(f)) for f in dist.files or ()]
    if not any(len(f.parts) == 1 and f.suffix == ".pth" for f in files):
        return set()
    # The metadata is an email Message, whose get() typeshed declares from 3.12 on only.
    name = re.sub(r"[-_.]+", "_", dist.metadata.get("Name", "")).lower()  # type: ignore[attr-defined]
    return {name} if name.isidentifier() else set()


def _root_of(name: str, paths: Iterable[str]) -> str | None:
    """The shallowest repository folder holding package or module `name`."""
    roots = []
    for path in paths:
        parts = PurePosixPath(path).parts
        if not path.endswith(".py"):
            continue
        for i, part in enumerate(parts):
            if part in TEST_DIRS:
                break  # a folder of the same name under tests/ is not the package
            last = i == len(parts) - 1
            if (part == name and not last) or (part == f"{name}.py" and last):
                roots.append(parts[:i])
                break
    if not roots:
        return None
    best = min(roots, key=lambda p: (len(p), p))
    return "/".join(best) or "."


def _installed_from(checkout: Path) -> Iterator[metadata.Distribution]:
    checkout_real = os.path.realpath(checkout)
    for dist in metadata.distributions():
        source = _local_source(dist)
        if source is None:
            continue
        if _inside(source, checkout_real) or _inside(checkout_real, source):
            yield dist


def find_installed_project(checkout: Path, tracked: Iterable[str]) -> InstalledProject:
    """Distributions installed from `checkout` (the repository's top level), with
    their import names and the tracked folders those names live in."""
    tracked = list(tracked)
    dists: list[str] = []
    names: set[str] = set()
    roots: set[str] = set()
    for dist in _installed_from(checkout):
        # The metadata is an email Message, whose get() typeshed declares from 3.12 on only.
        dists.append(dist.metadata.get("Name", "?"))  # type: ignore[attr-defined]
        for name in _top_level_names(dist):
            root = _root_of(name, tracked)
            if root is not None:
                names.add(name)
                roots.add(root)
    return InstalledProject(tuple(sorted(dists)), tuple(sorted(names)), tuple(sorted(roots)))
