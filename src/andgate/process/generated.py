"""Generated files: what the project's install wrote into the checkout without git.

A build backend such as setuptools-scm or hatch-vcs writes a version module
(`src/pkg/_version.py`) at install time and the project's `.gitignore` keeps it
out of git. A worktree of any commit lacks it, so every test that imports the
package fails to collect. The manifest's `generated_files` globs name such
files: the ones that exist in the checkout but not in git are read once, before
any test runs, and copied into every worktree of the gated head (only when the
checkout's HEAD is the gated head: the files belong to the checkout's own build).
They are production code the change's build produced, so the production scan reads
them and `verdict.json` lists them.

A run of base (the collection that pins the oracle set, the rerun that judges a
skip) gets those of them that are data only (`data_only.why_not_data`: what
setuptools-scm and hatch-vcs write), and never one on base's test side: a project
that imports its version file unguarded then pins its oracles on base as on head.
Any other generated file stays out of base's runs, named in the warning
GENERATED_FILES with what in it is code.

An installed project whose package folder holds untracked files that no glob
names gets the warning GENERATED_FILES, naming them and the key to add.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

from andgate.errors import AndgateError
from andgate.git import Git
from andgate.process.data_only import why_not_data
from andgate.process.installed import InstalledProject
from andgate.records import Finding, Warning_
from andgate.trust.paths import TestSide, glob_folder, is_under, matching

# Untracked files in a package folder that are no install's output.
NOT_GENERATED_PARTS = ("__pycache__",)
NOT_GENERATED_SUFFIXES = (".pyc", ".pyo", ".orig", ".rej", ".swp", "~")
MAX_NAMED = 5


@dataclass(frozen=True)
class GeneratedFile:
    path: str
    data: bytes
    mode: int = 0o644

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @cached_property
    def not_data(self) -> str | None:
        """Why a run of base may not have it (it holds code); None when data only."""
        return why_not_data(self.path, self.data)


@dataclass(frozen=True)
class Generated:
    """The generated files carried into the worktrees of one gated head."""

    files: tuple[GeneratedFile, ...] = ()

    def to_json(self) -> list[dict[str, str]]:
        return [{"path": f.path, "sha256": f.sha256} for f in self.files]

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def for_base(self, side: TestSide) -> tuple[Generated, tuple[tuple[str, str], ...]]:
        """What base's runs get (the files that are data only, none on base's test
        side, which base's runs take from base alone), and (path, why) of the rest."""
        given, kept_out = [], []
        for file in self.files:
            why = "it is on the test side" if side.holds(file.path) else file.not_data
            if why is None:
                given.append(file)
            else:
                kept_out.append((file.path, why))
        return Generated(tuple(given)), tuple(kept_out)


NONE = Generated()


def _folders(globs: Sequence[str]) -> list[str]:
    """Where to look: each glob's starting folder, or everywhere when one has none."""
    folders = [glob_folder(g) for g in globs]
    return [] if None in folders else sorted({f for f in folders if f})


def read_generated(git: Git, globs: Sequence[str], head: str) -> Generated:
    """The files `globs` name that exist in the checkout but not in git, when the
    checkout's HEAD is `head`; none otherwise."""
    if not globs or git.resolve("HEAD", what="HEAD") != head:
        return NONE
    found = matching(git.untracked_files(_folders(globs)), globs)
    return Generated(tuple(_read(git.repo, path) for path in sorted(found)))


def _read(root: Path, rel: str) -> GeneratedFile:
    """A regular file of the checkout (never through a symlink, never outside it)."""
    if ".." in PurePosixPath(rel).parts:
        raise AndgateError(f"{rel}: a generated file outside the repository; fix generated_files")
    path = root / rel
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise AndgateError(
                f"{rel}: generated_files names it, but it is not a regular file "
                "(a symlink or a folder); generate a plain file or narrow the glob"
            )
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise AndgateError(f"{rel}: cannot read the generated file ({exc.strerror})") from exc
    return GeneratedFile(rel, data, 0o755 if info.st_mode & 0o111 else 0o644)


def copy_into(worktree: Path, generated: Generated) -> None:
    """Write the generated files into a freshly checked-out worktree; a path the
    commit itself holds is left as committed."""
    for file in generated.files:
        target = worktree / file.path
        if os.path.lexists(target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(target, flags, file.mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(file.data)


def unnamed_generated(
    git: Git, project: InstalledProject, globs: Sequence[str], carried: Iterable[str] = ()
) -> list[str]:
    """Untracked files inside the installed project's packages that no glob names."""
    folders = [_package_folder(root, name) for root in project.roots for name in project.names]
    untracked = git.untracked_files(sorted(set(folders))) if folders else []
    named = set(carried) | matching(untracked, globs)
    return [p for p in untracked if p not in named and _may_be_generated(p, folders)]


def _package_folder(root: str, name: str) -> str:
    return name if root in ("", ".") else f"{root}/{name}"


def _may_be_generated(path: str, folders: Sequence[str]) -> bool:
    parts = PurePosixPath(path).parts
    if any(p in NOT_GENERATED_PARTS or p.endswith(".egg-info") for p in parts):
        return False
    return not path.endswith(NOT_GENERATED_SUFFIXES) and any(is_under(path, f) for f in folders)


def generated_warning(unnamed: Sequence[str]) -> Finding | None:
    if not unnamed:
        return None
    shown = ", ".join(unnamed[:MAX_NAMED])
    more = f" and {len(unnamed) - MAX_NAMED} more" if len(unnamed) > MAX_NAMED else ""
    return Finding(
        Warning_.GENERATED_FILES,
        f"the installed project's package holds files git does not track: {shown}{more}; "
        "worktrees lack them, so tests that need them fail to collect, fail or skip: name "
        f"them in the manifest's generated_files (e.g. generated_files: {suggested_glob(unnamed)})",
    )


def suggested_glob(paths: Sequence[str]) -> str:
    """A `generated_files` value naming `paths`: the one path, or one glob for many
    (their deepest common folder and, when they share it, their suffix: humanize's
    compiled catalogs are `src/humanize/locale/**/*.mo`)."""
    if len(paths) == 1:
        return f'["{paths[0]}"]'
    folders = [PurePosixPath(p).parent.parts for p in paths]
    common: list[str] = []
    for parts in zip(*folders, strict=False):
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    suffixes = {PurePosixPath(p).suffix for p in paths}
    name = f"*{suffixes.pop()}" if len(suffixes) == 1 and "" not in suffixes else "*"
    return f'["{"/".join([*common, "**", name])}"]'


def kept_from_base_warning(kept_out: Sequence[tuple[str, str]]) -> Finding | None:
    """GENERATED_FILES for the generated files base's runs do not get. Files that are
    not Python source (compiled message catalogs, data) are counted under one glob,
    with what they mean for base; the rest are named with the line that is code."""
    if not kept_out:
        return None
    code = [(path, why) for path, why in kept_out if PurePosixPath(path).suffix == ".py"]
    other = [path for path, _ in kept_out if PurePosixPath(path).suffix != ".py"]
    named = [f"{path} ({why})" for path, why in code[:MAX_NAMED]]
    if len(code) > MAX_NAMED:
        named.append(f"and {len(code) - MAX_NAMED} more")
    if other:
        shown = other[0] if len(other) == 1 else suggested_glob(other)[2:-2]
        named.append(f"{len(other)} not Python source ({shown})")
    detail = (
        "kept out of base's runs (the collection that pins the oracle set, the rerun "
        f"that judges a skip): {'; '.join(named)}. Base's runs get only generated Python "
        "files that are data only (docstrings, __future__ and typing imports, "
        "TYPE_CHECKING blocks, assignments of literals), since anything else is what this "
        "checkout's build produced"
    )
    if code:
        detail += (
            "; where base cannot import without it, its oracle files pin nothing "
            "(ORACLE_UNPINNED). Generate a plain version file (setuptools-scm's or "
            "hatch-vcs's default template), or guard the import"
        )
    else:
        detail += (
            ". Head's runs have them; base's runs do without them, which matters only where "
            "base then cannot collect an oracle file (ORACLE_UNPINNED) or judge an oracle "
            "item head skips"
        )
    return Finding(Warning_.GENERATED_FILES, detail)
