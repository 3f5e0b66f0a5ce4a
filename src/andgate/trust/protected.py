"""The protected diff: what an owner's approval is about, bound by bytes, not by SHA.

An approval lets a change edit what the gate trusts: oracle files, fixtures, known-bad
fixtures, the lock, the manifest, freeze file and invariants, conftest files, pytest
configuration and the project's pytest plugin declarations (`[tool.andgate]` too),
everything under `.github/`, CODEOWNERS, the files `trust_root_globs` names, and every
test-side file the oracle process takes from head once approved. The protected diff of
(base, commit) lists, for every such path in either tree, what it is on each side.

An owner who approved commit R of a pull request approved the protected diff of
(merge-base(R, base), R). When head's protected diff against base is the same, on both
sides, path by path, the approval still says what it said: a merge of base that touches
none of those files, or a production-only commit, keeps it; any other change drops it,
naming the paths. Exactness: a path is compared by its git mode and blob id (renames,
deletions and mode changes all show), except build and configuration files that also
hold other things (pyproject.toml, setup.cfg, tox.ini, setup.py), which are compared by
what pytest and a build backend read from them, so a version bump does not churn the
approval; a version pytest cannot read is compared byte for byte.

The predicate (which paths are protected) comes from base's manifest and test side,
never from the commit under review.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from andgate.git import Git, TreeEntry
from andgate.trust import plugin_declarations, pytest_config
from andgate.trust.authorship import is_oracle_side, is_trust_root
from andgate.trust.config import BaseConfig
from andgate.trust.paths import is_pytest_config_name, is_under, matches

# Files that hold more than pytest's or the build's view of plugins: compared by reading.
READ_FILES = frozenset({"pyproject.toml", "setup.cfg", "tox.ini", "setup.py"})
NOTHING = "nothing"  # a shared file that declares nothing pytest or a plugin loader reads
Side = str  # one path's state on one side: "absent", "<mode> <blob>" or a reading's digest


@dataclass(frozen=True)
class ProtectedDiff:
    """Every protected path of (base, commit): path -> (base side, commit side)."""

    base: str
    commit: str
    entries: Mapping[str, tuple[Side, Side]]

    @property
    def digest(self) -> str:
        text = json.dumps(sorted(self.entries.items()), separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def differing(self, other: ProtectedDiff) -> tuple[str, ...]:
        """The protected paths whose base or commit side differs between two diffs."""
        paths = set(self.entries) | set(other.entries)
        return tuple(sorted(p for p in paths if self.entries.get(p) != other.entries.get(p)))


def protection_rule(config: BaseConfig) -> Callable[[str], bool]:
    """Is a path protected? Read from base's manifest and test side."""
    manifest = config.manifest

    def protected(path: str) -> bool:
        return (
            is_oracle_side(path, manifest, lambda p: matches(p, manifest.oracle.globs))
            or is_trust_root(path, manifest, lambda _p: True)
            or is_under(path, ".github")
            or plugin_declarations.is_build_file(path)
            or config.test_side.holds(path)
        )

    return protected


class ProtectedReader:
    """Protected diffs of one check's commits, with listings and readings cached."""

    def __init__(self, git: Git, config: BaseConfig) -> None:
        self.git = git
        self._protected = protection_rule(config)
        self._listings: dict[str, dict[str, TreeEntry]] = {}

    def diff(self, base: str, commit: str) -> ProtectedDiff:
        old, new = self._listing(base), self._listing(commit)
        paths = {p for p in (*old, *new) if self._protected(p)}
        entries = {p: (self._side(old.get(p), p), self._side(new.get(p), p)) for p in paths}
        return ProtectedDiff(base, commit, entries)

    def _listing(self, commit: str) -> dict[str, TreeEntry]:
        if commit not in self._listings:
            tree = self.git.ls_tree(commit)
            self._listings[commit] = {e.path: e for e in tree if e.kind in ("blob", "commit")}
        return self._listings[commit]

    def _side(self, entry: TreeEntry | None, path: str) -> Side:
        if entry is None:
            return "absent"
        name = PurePosixPath(path).name
        if name in READ_FILES and entry.kind == "blob" and entry.mode != "120000":
            data = self.git.read_blobs([entry.sha]).get(entry.sha)
            reading = _reading(path, data)
            if reading == NOTHING:
                return "absent"  # a pyproject.toml with no pytest or plugin table added by base
            if reading is not None:
                return f"{entry.mode} read:{reading}"
        return f"{entry.mode} {entry.sha}"


def _reading(path: str, data: bytes | None) -> str | None:
    """What pytest and a build backend read from a shared file, as a digest; None
    when it cannot be read with certainty (then its bytes are compared)."""
    try:
        plugins = plugin_declarations.declarations(path, data)
    except plugin_declarations.Unreadable:
        return None
    read: object = None
    if is_pytest_config_name(path):
        reading = pytest_config.read(PurePosixPath(path).name, data)
        if reading.problem is not None:
            return None
        if reading.used or reading.settings or reading.andgate is not None:
            read = [reading.used, reading.settings, reading.andgate]
    if plugins in ("", "[]") and read is None:
        return NOTHING
    text = json.dumps([plugins, read], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
