"""Whether a trusted run ran the test side it was given (contract section 4, step 4).

A trusted process (oracle, property, known-bad replay, every run of base) compiles
every module of its worktree from bytes it read itself and records their git blob
id (`andgate.plugin.integrity`). Here the gate holds those records against the
tree the run checked out: every test-side module must have been compiled from that
tree's bytes (base's test side, head's once an owner approved), every module under
a name base's test side provides must come from the test side, and no bytecode
cache of a test-side file may hold other code. Anything else is production code
reaching into the run, `PRODUCTION_SUSPICIOUS` naming the file and the module, and
the run's results do not count (`records.Tampering`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from andgate.git import Git, TreeEntry, blob_id
from andgate.trust.paths import TestSide

SYMLINK_MODE = "120000"
MAX_LINK_HOPS = 40  # as the kernel's limit on links followed in one path


@dataclass(frozen=True)
class ExpectedTestSide:
    """What one trusted run may load from the test side."""

    tree: str  # the tree the run checked out, as messages name it ("base")
    # each Python file of that tree -> its blob id (a link's: what it leads to's); the
    # test-side ones are what the plugin watches, the others what a link may lead to
    blobs: Mapping[str, str]
    side: TestSide = field(default_factory=TestSide)
    # module names base's test side provides -> the test-side path providing each
    names: Mapping[str, str] = field(default_factory=dict)
    # base's files: a production file base already had took no name from the change
    base_files: frozenset[str] = frozenset()
    algorithm: str = "sha1"

    def spec(self) -> dict[str, Any]:
        """What the plugin is told (`plugin.integrity.install`)."""
        test_files = sorted(p for p in self.blobs if self.side.holds(p))
        return {"algorithm": self.algorithm, "test_files": test_files}

    def patched(self, worktree: Path, paths: Iterable[str]) -> ExpectedTestSide:
        """After a known-bad fixture was applied to the worktree (before any test ran
        in it): the Python files it wrote have the bytes it gave them."""
        blobs = dict(self.blobs)
        for path in paths:
            if not path.endswith(".py"):
                continue
            try:
                blobs[path] = blob_id((worktree / path).read_bytes(), "0" * _HEX[self.algorithm])
            except OSError:
                blobs.pop(path, None)  # the fixture deleted it
        return replace(self, blobs=blobs)


_HEX = {"sha1": 40, "sha256": 64}


@dataclass(frozen=True, slots=True)
class Load:
    """A module a trusted process compiled from a worktree file's bytes."""

    module: str
    path: str
    blob: str
    blob_lf: str = ""  # of the bytes with CRLF line ends made LF (an eol checkout)
    real: str = ""  # the file it leads to, when a symlink (a file or a folder) is on the way
    loader: str = ""  # a SourceFileLoader subclass that compiled it
    loader_path: str = ""  # the worktree file that subclass comes from


@dataclass(frozen=True)
class Imported:
    """What a trusted process recorded about its worktree's modules."""

    loads: tuple[Load, ...] = ()
    unverified: tuple[tuple[str, str, str], ...] = ()  # (module, path, how it was loaded)
    # (cache file, source, module, what is wrong with it)
    bytecode: tuple[tuple[str, str, str, str], ...] = ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Imported:
        return cls(
            loads=tuple(
                Load(
                    str(e["module"]),
                    str(e["path"]),
                    str(e["blob"]),
                    str(e.get("blob_lf", "")),
                    str(e.get("real", "")),
                    str(e.get("loader", "")),
                    str(e.get("loader_path", "")),
                )
                for e in data.get("loads", ())
            ),
            unverified=tuple(
                (str(e["module"]), str(e["path"]), str(e["why"]))
                for e in data.get("unverified", ())
            ),
            bytecode=tuple(
                (str(e["path"]), str(e["source"]), str(e["module"]), str(e["why"]))
                for e in data.get("bytecode", ())
            ),
        )


def judge(label: str, imported: Imported, expected: ExpectedTestSide) -> tuple[str, ...]:
    """What the `label` process loaded that is not the test side it was given: one
    line per file, naming the module (empty: nothing)."""
    found: dict[str, None] = {}
    for load in imported.loads:
        why = _load_problem(load, expected)
        if why is not None:
            found[f"{load.path}: the {label} process loaded {load.module} {why}"] = None
    for module, path, how in imported.unverified:
        if expected.side.holds(path):
            found[
                f"{path}: the {label} process loaded {module} {how}, not compiled from "
                f"{expected.tree}'s source"
            ] = None
        elif (taken := _taken_name(module, path, expected)) is not None:
            found[f"{path}: the {label} process loaded {module} {how}; {taken}"] = None
    for cache, source, module, why in imported.bytecode:
        found[
            f"{cache}: bytecode for {source} (module {module}) appeared during the {label} "
            f"run and {why}"
        ] = None
    return tuple(found)


def _load_problem(load: Load, expected: ExpectedTestSide) -> str | None:
    """Why a compiled module is not the test side the run was given, or None."""
    if not expected.side.holds(load.path):
        taken = _taken_name(load.module, load.path, expected)
        return None if taken is None else f"from this production file; {taken}"
    want = expected.blobs.get(load.path) or expected.blobs.get(load.real)
    if want is None:
        return f"from a test-side file {expected.tree} does not have: it was written during the run"
    if want not in (load.blob, load.blob_lf):
        return (
            f"from bytes other than {expected.tree}'s (blob {load.blob[:12]}, "
            f"{expected.tree}'s {want[:12]}): the test-side file changed during the run"
        )
    if load.loader_path and not expected.side.holds(load.loader_path):
        return (
            f"compiled by the loader {load.loader} of the production file "
            f"{load.loader_path}, not as Python compiles {expected.tree}'s source"
        )
    return None


def _taken_name(module: str, path: str, expected: ExpectedTestSide) -> str | None:
    """When `module` is a name base's test side provides and the production file
    `path` it came from is new with the change: why that is a shadowing."""
    if path in expected.base_files:
        return None  # base had it: the name was taken before this change
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        provider = expected.names.get(name)
        if provider is not None:
            return f"it takes the test-side name {name} ({provider} on base's test side)"
    return None


def expected_files(
    git: Git,
    tree: str,
    listing: Mapping[str, TreeEntry],
    side: TestSide,
    names: Mapping[str, str],
    base_files: frozenset[str],
) -> ExpectedTestSide:
    """The test side a trusted run of a tree with these files may load: each
    Python file's blob (a symbolic link's: the blob of the file it leads to, since
    Python reads through it)."""
    blobs: dict[str, str] = {}
    links: dict[str, str] = {}
    for path, entry in listing.items():
        if path.endswith(".py"):
            (links if entry.mode == SYMLINK_MODE else blobs)[path] = entry.sha
    if links:
        blobs.update(_through_links(git, listing, links))
    any_sha = next(iter(listing.values())).sha if listing else ""
    return ExpectedTestSide(
        tree=tree,
        blobs=blobs,
        side=side,
        names=names,
        base_files=base_files,
        algorithm="sha256" if len(any_sha) == 64 else "sha1",
    )


def _through_links(
    git: Git, listing: Mapping[str, TreeEntry], links: Mapping[str, str]
) -> dict[str, str]:
    """The blob each link leads to within the tree (none for one that leaves it)."""
    targets = git.read_blobs(links.values())
    found = {}
    for path, sha in links.items():
        here: str | None = path
        data = targets.get(sha)
        for _ in range(MAX_LINK_HOPS):
            if data is None:
                break
            here = _joined(here or "", data.decode("utf-8", "surrogateescape"))
            entry = listing.get(here) if here is not None else None
            if entry is None:
                break
            if entry.mode != SYMLINK_MODE:
                found[path] = entry.sha
                break
            data = git.read_blobs([entry.sha]).get(entry.sha)
    return found


def _joined(link: str, target: str) -> str | None:
    """Where a link's relative target leads in the tree (None: out of it)."""
    if target.startswith("/"):
        return None
    parts: list[str] = []
    for part in (*PurePosixPath(link).parent.parts, *PurePosixPath(target).parts):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)
