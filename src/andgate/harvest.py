"""Known-bad fixtures from the project's own history.

A commit that changed production code is, often enough, a fix (the way
SWE-bench builds its instances). The reverse of its production diff brings the
bug back: re-targeted to HEAD (`git apply --3way` in a pooled worktree of HEAD;
only what applies cleanly is kept) it is a candidate known-bad fixture, and
replaying it (`replay.replay_fixture`, killer first) says whether the oracle
class would notice. A revert the oracle kills is proposed as a fixture; one it
lets through is a bug the project once fixed and its oracles would let back in.

Nothing here writes into the repository: fixtures are proposals, and promoting
one into `known_bad_dir` is a trust-root change an owner makes.
"""

from __future__ import annotations

import ast
import enum
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from andgate.authorship import is_oracle_side, is_trust_root
from andgate.cache import KillerCache, patched_files
from andgate.config import BaseConfig, KnownBad
from andgate.git import Git
from andgate.paths import matches
from andgate.records import ReplayFacts, ReplayStatus
from andgate.replay import replay_fixture
from andgate.run import RunRequest
from andgate.worktree import WorktreePool

SEP = "\x1f"
DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
DOC_DIRS = frozenset({"doc", "docs"})
COSMETIC = "changes only docstrings, comments or layout: no behaviour for an oracle to catch"


class Fate(enum.Enum):
    KILLED = "killed"  # an oracle item failed under the revert: a candidate fixture
    MISSED = "missed"  # every oracle item passed: the oracles would let the bug back in
    STALE = "stale"  # the revert no longer applies cleanly to HEAD
    COSMETIC = "cosmetic"  # docstrings, comments or layout only: no behaviour to catch
    ERROR = "error"  # the oracle run itself failed (timeout, crash)
    OVER_BUDGET = "over budget"  # not tried: the time budget was spent


@dataclass(frozen=True)
class FixCommit:
    """A commit that changed production code, and which production files."""

    sha: str
    subject: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class Harvested:
    """What became of one commit's reverted production diff."""

    commit: FixCommit
    fate: Fate
    killers: tuple[str, ...] = ()
    seconds: float = 0.0
    problem: str = ""
    patch: bytes = b""  # the revert, re-targeted to HEAD

    @property
    def fixture_name(self) -> str:
        return f"kb_{self.commit.sha[:10]}_{slug(self.commit.subject)}"


def slug(text: str, limit: int = 40) -> str:
    words = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    return words[:limit].rstrip("_") or "change"


def production_filter(config: BaseConfig) -> Callable[[str], bool]:
    """Production code as the gate sees it: not the test side, not a trust-root file;
    the manifest's `production_globs` when set, else Python files outside doc
    folders (a reverted changelog line or Sphinx setting is not a bug)."""
    manifest = config.manifest

    def is_oracle_file(path: str) -> bool:
        return matches(path, manifest.oracle.globs)

    def is_production(path: str) -> bool:
        if config.test_side.holds(path) or is_oracle_side(path, manifest, is_oracle_file):
            return False
        if DOC_DIRS & set(PurePosixPath(path).parts[:-1]) or path == "setup.py":
            return False  # documentation and packaging scripts ship no behaviour
        if is_trust_root(path, manifest, lambda _path: True):
            return False
        if manifest.production_globs:
            return matches(path, manifest.production_globs)
        return path.endswith(".py")

    return is_production


def fix_commits(
    git: Git,
    head: str,
    *,
    since: str | None,
    limit: int,
    is_production: Callable[[str], bool],
) -> tuple[list[FixCommit], int]:
    """The newest `limit` non-merge commits (after `since`) that changed production
    code, and how many commits were looked at to find them. Root commits have no
    parent to revert to and are skipped."""
    revs = f"{since}..{head}" if since else head
    log = git.out("log", "--no-merges", "-z", f"--format=%H{SEP}%P{SEP}%s", revs)
    found: list[FixCommit] = []
    scanned = 0
    for record in filter(None, log.split("\0")):
        if len(found) >= limit:
            break
        scanned += 1
        sha, parents, subject = [*record.strip("\n").split(SEP, 2), "", ""][:3]
        if not parents:
            continue
        files = tuple(p for p in changed_files(git, sha) if is_production(p))
        if files:
            found.append(FixCommit(sha, subject, files))
    return found, scanned


def changed_files(git: Git, sha: str) -> list[str]:
    raw = git.run("diff-tree", "-r", "-z", "--no-commit-id", "--name-only", sha).stdout
    return [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]


def reverse_patch(git: Git, fix: FixCommit) -> bytes:
    """The commit's production diff, backwards: the bug it fixed, as a patch."""
    specs = [f":(literal){p}" for p in fix.files]
    return git.run(
        "diff", "--no-color", "--no-ext-diff", "--binary", fix.sha, f"{fix.sha}^", "--", *specs
    ).stdout


class Tally:
    """One line on stderr per finished task: `harvest: 12/50 commits, 3 killed, 2 missed, 41.2s`."""

    def __init__(self, label: str, total: int, unit: str, words: tuple[str, str]) -> None:
        self.label, self.total, self.unit, self.words = label, total, unit, words
        self.start = time.monotonic()
        self.done = 0
        self.counts = dict.fromkeys(words, 0)
        self._lock = threading.Lock()

    def record(self, word: str | None) -> None:
        with self._lock:
            self.done += 1
            if word in self.counts:
                self.counts[word] += 1
            tallies = ", ".join(f"{self.counts[w]} {w}" for w in self.words)
            print(
                f"{self.label}: {self.done}/{self.total} {self.unit}, {tallies}, "
                f"{time.monotonic() - self.start:.1f}s",
                file=sys.stderr,
                flush=True,
            )


@dataclass(frozen=True)
class Replayer:
    """Everything one replay needs, shared by every commit of a harvest."""

    git: Git
    pool: WorktreePool
    commit: str  # HEAD's trusted tree
    request: RunRequest
    scratch: Path
    timeout: float
    cache: KillerCache
    oracle_digest: str
    deadline: float


def replay_patch(name: str, patch: bytes, index: int, replayer: Replayer) -> ReplayFacts | None:
    """The oracle class against one candidate patch (killer first), or None when
    the time budget is spent."""
    left = replayer.deadline - time.monotonic()
    if left <= 0:
        return None
    return replay_fixture(
        KnownBad(name, "", patch),
        index,
        pool=replayer.pool,
        commit=replayer.commit,
        oracle_request=replayer.request,
        scratch=replayer.scratch,
        timeout=min(replayer.timeout, max(left, 1.0)),
        cache=replayer.cache,
        oracle_digest=replayer.oracle_digest,
    )


def harvest_commit(fix: FixCommit, index: int, replayer: Replayer) -> Harvested:
    """Revert one fix on HEAD and replay the oracle class against it."""
    if replayer.deadline <= time.monotonic():
        return Harvested(fix, Fate.OVER_BUDGET)
    started = time.monotonic()
    patch = retarget(replayer, reverse_patch(replayer.git, fix), index)
    if isinstance(patch, str):
        fate = Fate.COSMETIC if patch == COSMETIC else Fate.STALE
        return Harvested(fix, fate, problem=patch, seconds=time.monotonic() - started)
    facts = replay_patch(f"revert {fix.sha[:10]}", patch, index, replayer)
    seconds = time.monotonic() - started
    if facts is None:
        return Harvested(fix, Fate.OVER_BUDGET, seconds=seconds)
    status = facts.status
    if status is ReplayStatus.BITES:
        return Harvested(fix, Fate.KILLED, facts.failed, seconds, patch=patch)
    if status is ReplayStatus.GREEN:
        return Harvested(fix, Fate.MISSED, seconds=seconds, patch=patch)
    if status is ReplayStatus.STALE:
        return Harvested(fix, Fate.STALE, seconds=seconds, problem=facts.problem)
    return Harvested(fix, Fate.ERROR, seconds=seconds, problem=facts.error or "")


def retarget(replayer: Replayer, reverse: bytes, index: int) -> bytes | str:
    """The revert as a patch against HEAD, made in a worktree after a three-way
    apply; or why it does not apply cleanly there."""
    if not reverse.strip():
        return "the commit's production diff is empty (a mode change or a binary file only)"
    source = replayer.scratch / f"revert-{index}.patch"
    source.write_bytes(reverse)
    with replayer.pool.lease(replayer.commit) as worktree:
        problem = worktree.apply_3way(source)
        if problem is not None:
            return f"does not apply to HEAD: {problem}"
        patch = worktree.diff_head()
        changed = {p: _read(worktree.path / p) for p in patched_files(patch)}
    if not patch.strip():
        return "changes nothing at HEAD (the fix is already undone)"
    before = {p: replayer.git.read_blob(replayer.commit, p) for p in changed}
    if all(same_code(p, before[p], after) for p, after in changed.items()):
        return COSMETIC
    return patch


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def same_code(path: str, before: bytes | None, after: bytes | None) -> bool:
    """Do two versions of a Python file differ only in docstrings, comments and layout?"""
    if not path.endswith(".py") or before is None or after is None:
        return before == after
    try:
        old, new = ast.parse(before), ast.parse(after)
    except (SyntaxError, ValueError):
        return False
    return ast.dump(_without_docstrings(old)) == ast.dump(_without_docstrings(new))


def _without_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(node, DOCUMENTED) or not body:
            continue
        first = body[0]
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return tree
