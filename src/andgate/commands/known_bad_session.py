"""What `known-bad harvest` and `known-bad mutants` start from: the tree they judge
(the working tree, or `--rev`), its trust config, the proposals folder claimed
before any test runs, and the replayer, once the oracle class is proven green on
that tree (a patch that "bites" an oracle which already fails proves nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from andgate import writer
from andgate.check.cache import GreenCache, SharedKillers
from andgate.check.oracle.phase import judged_against_itself
from andgate.check.plan.trees import Plan
from andgate.commands import proposals
from andgate.commands.common import Target, generated_notes, head_plan, open_target, run_environment
from andgate.commands.harvest import Replayer
from andgate.errors import AndgateError
from andgate.git import Git
from andgate.process.limits import PlainRun
from andgate.process.requests import DEFAULT_ITEM_TIMEOUT, RunRequest
from andgate.process.results import RunResult
from andgate.process.run import run_pytest
from andgate.process.worktree import WorktreePool
from andgate.records import Outcome, Role
from andgate.trust.config import BaseConfig


@dataclass(frozen=True)
class Session:
    """What is judged, its config, and where the output goes: what both commands
    start from. `head` is the judged tree's commit."""

    target: Target
    out: Path
    # claimed before any test runs, written at the end through its descriptor;
    # None when the command writes nothing (`mutants` without `--write`)
    folder: writer.Folder | None

    @property
    def git(self) -> Git:
        return self.target.git

    @property
    def head(self) -> str:
        return self.target.commit

    @property
    def config(self) -> BaseConfig:
        return self.target.config


def open_session(
    repo: Path, manifest: str, out: Path | None, rev: str | None, *, writes: bool = True
) -> Session:
    target = open_target(repo, manifest, rev)
    folder = proposals.proposals_folder(target.git.repo, out, target.config.manifest.known_bad_dir)
    claimed = proposals.claim(target.git.repo, folder) if writes else None
    return Session(target, folder, claimed)


def oracle_replayer(
    session: Session,
    pool: WorktreePool,
    scratch: Path,
    *,
    deadline: float,
    timeout: float,
    cache_dir: Path | None,
    item_timeout: float | None = DEFAULT_ITEM_TIMEOUT,
) -> Replayer:
    """The plan of HEAD, with the oracle class proven green there first: that run
    is the plain run the candidates' replays learn their item limit from."""
    plan = head_plan(session.git, session.head, session.config, scratch)
    environment = run_environment(session.target, plan, item_timeout)
    for note in generated_notes(session.target, environment):
        print(note)
    request = RunRequest(
        "oracle",
        Role.ORACLE,
        plan.trusted_oracle_rules,
        allow_files=plan.trusted_oracle_files,
        environment=environment,
    )
    plain = PlainRun()
    plain.ended([_require_green_oracle(session, plan, pool, request, scratch, timeout)])
    # A fix's own tests, outside the oracle files: untrusted items of HEAD.
    evidence = RunRequest("fix tests", Role.UNTRUSTED, plan.head_rules, environment=environment)
    return Replayer(
        git=session.git,
        pool=pool,
        commit=plan.trusted,
        request=request,
        scratch=scratch,
        timeout=timeout,
        cache=SharedKillers(cache_dir),
        oracle_digest=plan.trusted_oracle_digest,
        deadline=deadline,
        evidence=evidence,
        oracle_files=frozenset(plan.trusted_oracle_files),
        greens=GreenCache(cache_dir),
        plain=plain,
    )


def _require_green_oracle(
    session: Session,
    plan: Plan,
    pool: WorktreePool,
    request: RunRequest,
    scratch: Path,
    timeout: float,
) -> RunResult:
    # The tree judged: the working tree's snapshot (its sha means nothing to the user).
    head, manifest = tree_name(session), session.config.manifest
    if not plan.trusted_oracle_files:
        raise AndgateError(
            f"{head} has no file matching classes.oracle.globs in {manifest.path}: "
            "nothing can kill a candidate; point the globs at human-owned tests"
        )
    with pool.lease(plan.trusted) as worktree:
        result = run_pytest(request, worktree.path, scratch, timeout)
    if result.error:
        raise AndgateError(f"the oracle class could not run on {head}: {result.error}")
    items = result.selected("oracle")
    # judged as check judges it: a platform skip is no failure here either
    failing = [r.nodeid for r in judged_against_itself(result) if r.outcome is not Outcome.PASSED]
    failing += [f"{n or '<session>'} (collection error)" for n, _ in result.collection_errors]
    if failing:
        raise AndgateError(
            f"the oracle class does not pass on {head} ({failing[0]}"
            f"{f' and {len(failing) - 1} more' if len(failing) > 1 else ''}), so a failure "
            "under a candidate would prove nothing; fix the oracle first"
        )
    if not items:
        raise AndgateError(f"no oracle item was collected on {head} (NO_ORACLE)")
    return result


def tree_name(session: Session) -> str:
    """How messages name what is judged: the working tree, or --rev's commit."""
    target = session.target
    if target.commit == target.history:
        return f"HEAD {target.commit[:12]}" if "working tree" in target.what else target.what
    return "the working tree (uncommitted edits included)"
