"""Known-bad fixtures from the project's own history.

A commit that changed production code is, often enough, a fix (the way
SWE-bench builds its instances). The reverse of its production diff brings the
bug back: re-targeted to HEAD (`git apply --3way` in a pooled worktree of HEAD;
only what applies cleanly is kept) it is a candidate known-bad fixture, and
replaying it in that worktree (`replay.replay_applied`, likely killers first)
says whether the oracle class would notice. A revert the oracle kills is
proposed as a fixture. One it lets through is a *missed* bug only with evidence
that the commit fixed something: the tests the commit itself added or changed
(outside the oracle class, which already passed) fail on the revert and pass on
HEAD. The rest are listed as "not shown to be a fix" (refactors, features).

At history speed: what cannot be a fix is skipped before anything runs (merges,
commits without production code, and those whose production code keeps its AST:
docstrings, comments, layout); reverts run in parallel (`--jobs`); and a revert
the oracle class let through under the same oracle files is remembered
(`cache.GreenCache`) and not replayed again: a hint that can only make a revert
look *not* caught, never caught.

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
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from andgate.check.cache import GreenCache, KillerCache, patched_files
from andgate.check.discrimination.changed_tests import changed_tests, item_name
from andgate.check.oracle.replay import BITES, refusal, replay_applied, replay_fixture
from andgate.git import Git
from andgate.process.limits import PlainRun
from andgate.process.requests import RunRequest
from andgate.process.results import RunResult
from andgate.process.run import run_pytest
from andgate.process.worktree import Worktree, WorktreePool
from andgate.records import Outcome, ReplayFacts, ReplayStatus, Role
from andgate.trust.authorship import is_oracle_side, is_trust_root
from andgate.trust.config import BaseConfig, KnownBad
from andgate.trust.paths import matches

SEP = "\x1f"
DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
DOC_DIRS = frozenset({"doc", "docs"})
COSMETIC = "changes only docstrings, comments or layout: no behaviour for an oracle to catch"


class Fate(enum.Enum):
    KILLED = "killed"  # an oracle item failed under the revert: a candidate fixture
    # every oracle item passed, and the commit's own tests fail on the revert: the
    # oracles would let a bug the project once fixed back in
    MISSED = "missed"
    UNPROVEN = "not shown to be a fix"  # every oracle item passed; no evidence of a fix
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
    tests: tuple[str, ...] = ()  # the test-side Python files it changed


@dataclass(frozen=True)
class Harvested:
    """What became of one commit's reverted production diff."""

    commit: FixCommit
    fate: Fate
    killers: tuple[str, ...] = ()
    seconds: float = 0.0
    problem: str = ""
    patch: bytes = b""  # the revert, re-targeted to HEAD
    evidence: tuple[str, ...] = ()  # MISSED: the commit's own tests that fail on the revert
    remembered: bool = False  # the oracle's pass was remembered from an earlier run

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


def test_side_filter(config: BaseConfig) -> Callable[[str], bool]:
    """Test-side Python files (where a fix's own tests are)."""
    return lambda path: path.endswith(".py") and config.test_side.holds(path)


def fix_commits(
    git: Git,
    head: str,
    *,
    since: str | None,
    limit: int,
    is_production: Callable[[str], bool],
    is_test: Callable[[str], bool] = lambda _path: False,
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
        changed = changed_files(git, sha)
        files = tuple(p for p in changed if is_production(p))
        if files:
            found.append(FixCommit(sha, subject, files, tuple(p for p in changed if is_test(p))))
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
    # A fix's own tests: run as untrusted items of head, outside the oracle files.
    evidence: RunRequest | None = None
    oracle_files: frozenset[str] = frozenset()
    greens: GreenCache = field(default_factory=lambda: GreenCache(None))
    # HEAD's green oracle run: what each item took there bounds its limit in a replay
    plain: PlainRun | None = None


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
        plain=replayer.plain,
    )


def harvest_commit(fix: FixCommit, index: int, replayer: Replayer) -> Harvested:
    """Revert one fix on HEAD and replay the oracle class against it, in the
    worktree where the revert was re-targeted (one checkout per commit)."""
    if replayer.deadline <= time.monotonic():
        return Harvested(fix, Fate.OVER_BUDGET)
    started = time.monotonic()
    if keeps_its_code(replayer.git, fix):  # before any worktree: it cannot be a fix
        return Harvested(fix, Fate.COSMETIC, problem=COSMETIC)
    reverse = reverse_patch(replayer.git, fix)
    with replayer.pool.lease(replayer.commit) as worktree:
        patch = retarget(replayer, worktree, reverse, index)
        if isinstance(patch, str):
            fate = Fate.COSMETIC if patch == COSMETIC else Fate.STALE
            return Harvested(fix, fate, problem=patch, seconds=time.monotonic() - started)
        result = _judge(fix, index, patch, worktree, replayer)
    return replace(result, seconds=time.monotonic() - started)


def _judge(
    fix: FixCommit, index: int, patch: bytes, worktree: Worktree, replayer: Replayer
) -> Harvested:
    """Killed, missed (with the fix's own tests as evidence), or not shown to be a fix."""
    remembered = replayer.greens.get(patch, replayer.oracle_digest)
    if not remembered:
        refused = refusal(patch)
        if refused is not None:
            return Harvested(fix, Fate.STALE, problem=refused)
        facts = _replay_here(f"revert {fix.sha[:10]}", patch, index, worktree, replayer)
        if facts is None:
            return Harvested(fix, Fate.OVER_BUDGET)
        status = facts.status
        if status is ReplayStatus.BITES:
            return Harvested(fix, Fate.KILLED, facts.failed, patch=patch)
        if status is not ReplayStatus.GREEN:
            return Harvested(fix, Fate.ERROR, problem=facts.error or facts.problem)
        replayer.greens.put(patch, replayer.oracle_digest)
    evidence = fix_evidence(fix, index, worktree, replayer)
    fate = Fate.MISSED if evidence else Fate.UNPROVEN
    return Harvested(fix, fate, patch=patch, evidence=evidence, remembered=remembered)


def _replay_here(
    name: str, patch: bytes, index: int, worktree: Worktree, replayer: Replayer
) -> ReplayFacts | None:
    left = replayer.deadline - time.monotonic()
    if left <= 0:
        return None
    return replay_applied(
        KnownBad(name, "", patch),
        index,
        worktree.path,
        oracle_request=replayer.request,
        scratch=replayer.scratch,
        timeout=min(replayer.timeout, max(left, 1.0)),
        cache=replayer.cache,
        oracle_digest=replayer.oracle_digest,
        plain=replayer.plain,
    )


def keeps_its_code(git: Git, fix: FixCommit) -> bool:
    """Whether every production file the commit changed parses to the same code
    before and after it (docstrings, comments, layout): nothing to revert."""
    return all(
        same_code(path, git.read_blob(f"{fix.sha}^", path), git.read_blob(fix.sha, path))
        for path in fix.files
    )


def retarget(replayer: Replayer, worktree: Worktree, reverse: bytes, index: int) -> bytes | str:
    """The revert as a patch against HEAD, applied three-way in `worktree` (left
    applied there); or why it does not apply cleanly."""
    if not reverse.strip():
        return "the commit's production diff is empty (a mode change or a binary file only)"
    source = replayer.scratch / f"revert-{index}.patch"
    source.write_bytes(reverse)
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


def fix_evidence(
    fix: FixCommit, index: int, worktree: Worktree, replayer: Replayer
) -> tuple[str, ...]:
    """The tests the commit added or changed (outside the oracle files, which already
    passed) that fail with the revert applied in `worktree` and pass on HEAD: the
    evidence that the commit fixed a bug. None: not shown to be a fix."""
    names = fixed_tests(replayer.git, fix)
    files = tuple(
        sorted(
            p
            for p, changed in names.items()
            if changed and p not in replayer.oracle_files and (worktree.path / p).is_file()
        )
    )
    if replayer.evidence is None or not files:
        return ()
    request = replace(
        replayer.evidence, label=f"fix tests {index}", allow_files=files, failures_expected=True
    )
    failing = _failing(request, worktree.path, replayer, names)
    if not failing:
        return ()
    # A test that fails on HEAD too says nothing about the revert.
    with replayer.pool.lease(replayer.commit) as clean:
        head = _run_evidence(replace(request, label=f"{request.label} head"), clean.path, replayer)
    if head is None:
        return ()
    return tuple(n for n in failing if head.outcome(n) is Outcome.PASSED)


def _run_evidence(request: RunRequest, where: Path, replayer: Replayer) -> RunResult | None:
    left = replayer.deadline - time.monotonic()
    if left <= 0:
        return None
    result = run_pytest(request, where, replayer.scratch, min(replayer.timeout, max(left, 1.0)))
    return None if result.error else result


def _failing(
    request: RunRequest, where: Path, replayer: Replayer, names: dict[str, frozenset[str]]
) -> tuple[str, ...]:
    result = _run_evidence(request, where, replayer)
    if result is None:
        return ()
    return tuple(
        i.facts.nodeid
        for i in result.selected(Role.UNTRUSTED)
        if result.outcome(i.facts.nodeid) in BITES
        and item_name(i.facts.nodeid) in names.get(i.facts.path, frozenset())
    )


def fixed_tests(git: Git, fix: FixCommit) -> dict[str, frozenset[str]]:
    """Per test file the commit changed: the test functions it added or changed
    (none for a file that does not parse: nothing to tell apart)."""
    out = {}
    for path in fix.tests:
        before, after = git.read_blob(f"{fix.sha}^", path), git.read_blob(fix.sha, path)
        out[path] = changed_tests(before, after) or frozenset()
    return out


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
            node.body = body[1:] or [ast.Pass()]
    return tree
