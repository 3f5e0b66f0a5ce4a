"""`andgate check`: the whole gate, phase by phase (ARCHITECTURE.md names them).

config from base -> approvals -> production scan -> locks -> plan the trees ->
oracle phase (oracle, base pin, known-bad replays) -> property phase -> untrusted
phase (untrusted, frozen_flake) -> inventory, authorship, freezes -> AND -> artifacts.

Each phase's results are read into memory before the next, less trusted phase
starts: property files and untrusted tests are written by the change's author,
so nothing they do can reach a result read before them. Every failure of the
gate itself ends as a recorded GATE_ERROR, and the artifacts are always written.
The fork server (`run.prestart_fork_server`) starts importing pytest before the
scan, so the first pytest run need not wait for it; no repository code runs there.
The scan and the discrimination report read their inputs before any test runs
and do the rest in threads beside the oracle phase (a later read of base's files
is checked against the ids read before); both end before the first untrusted
test runs.
"""

from __future__ import annotations

import hashlib
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from andgate.check.context import PhaseContext
from andgate.check.discrimination.phase import prepare_discrimination, time_waited
from andgate.check.evidence.phase import prepare_evidence
from andgate.check.inventory.phase import run_inventory_phase
from andgate.check.options import CheckOptions
from andgate.check.oracle.phase import run_oracle_phase
from andgate.check.plan.phase import plan_phases
from andgate.check.production.phase import start_scan
from andgate.check.property.phase import run_property_phase
from andgate.check.state import CheckState, RunKey, RunName
from andgate.check.untrusted import run_untrusted_phase
from andgate.errors import AndgateError, Interrupted, ManifestError
from andgate.git import Change, Git
from andgate.process.forkclient import fork_server_session, prestart_fork_server
from andgate.process.generated import kept_from_base_warning, read_generated
from andgate.process.runner_files import Snapshot
from andgate.process.runner_files import restore as restore_runner_files
from andgate.process.runner_files import take as snapshot_runner_files
from andgate.process.signals import in_background, wait_future
from andgate.process.worktree import scratch_dir, worktree_pool
from andgate.records import Finding, Role, Warning_
from andgate.report.artifacts import Artifacts, write_artifacts
from andgate.report.folder import claim_artifacts_for
from andgate.trust.adoption import agent_block_files, config_source
from andgate.trust.approvals import ReviewBinder, gather_approvals
from andgate.trust.config import BaseConfig, known_bad_fixtures, load_base_config
from andgate.trust.disputes import judged, read_disputes
from andgate.trust.github import approved_logins, approves_head
from andgate.trust.locks import lock_facts
from andgate.trust.paths import ConfigChanges, config_changes
from andgate.trust.protected import ProtectedReader
from andgate.trust.refs import (
    refuse_empty_range,
    refuse_refs_other_than_the_event,
    resolve_base,
    uncommitted_warning,
)
from andgate.verdict import Verdict, decide

Outcome = TypeVar("Outcome")


def run_check(opts: CheckOptions) -> tuple[Verdict, Artifacts]:
    """Run the gate; always returns a verdict and writes the artifacts.

    The artifacts folder is claimed first, before any test code runs: an unsafe
    one is refused at once (one line, exit 2), and nothing a test plants there
    later can make andgate write through a symlink."""
    state = CheckState()
    folder = claim_artifacts_for(opts.repo, opts.artifacts)
    runner_files = snapshot_runner_files(os.environ)  # before any test can write them
    try:
        gate_failing_closed(opts, state)
        _restore_runner_files(runner_files, state)
        with state.timings.step("verdict"):
            verdict = decide(state.facts())
        # No verdict file means no allow: on a failure the CLI prints one line and exits 2.
        return verdict, write_artifacts(folder, state.report_context(verdict, opts.today))
    finally:
        folder.close()


def _restore_runner_files(snapshots: tuple[Snapshot, ...], state: CheckState) -> None:
    """Before andgate publishes: what tests appended to the CI runner's files is cut
    off, and a file whose earlier bytes changed ends the check in GATE_ERROR."""
    found = restore_runner_files(snapshots)
    state.warnings += [Finding(Warning_.RUNNER_FILE_RESTORED, w) for w in found.warnings]
    state.gate_errors += [f"CI runner file tampered with: {e}" for e in found.errors]


def gate_failing_closed(opts: CheckOptions, state: CheckState) -> None:
    """Every way the gate can fail is a recorded reason, never an exception."""
    try:
        _gate(opts, state)
    except ManifestError as exc:
        state.found = replace(state.found, manifest_error=str(exc))
    except (Interrupted, KeyboardInterrupt):
        state.gate_errors.append("interrupted by a signal; temporary worktrees were removed")
    except AndgateError as exc:
        state.gate_errors.append(str(exc))
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]  # the traceback is in the logs
        state.gate_errors.append(f"internal error: {exc.__class__.__name__}: {first}")
        state.traceback = traceback.format_exc()


def _gate(opts: CheckOptions, state: CheckState) -> None:
    git = Git(Git(opts.repo).toplevel())
    with git.reading():  # one cat-file process for the check's blob reads
        _gate_with(git, opts, state)


def _gate_with(git: Git, opts: CheckOptions, state: CheckState) -> None:
    step = state.timings.step
    with step("commits, manifest and approvals"):
        base, head = _commits(git, opts, state)
        config = _base_config(git, opts, state, base)
        disputes = read_disputes(git, base, head, config.manifest.disputes_file)
    state.found = replace(state.found, disputes=disputes.facts)
    state.dispute_sources = dict(disputes.sources)
    approvers = approved_logins(state.approvals)
    # Read before any test runs; carried into every worktree, base's only the data-only ones.
    with step("generated files"):
        generated = read_generated(git, config.manifest.generated_files, head)
    state.generated = tuple((f.path, f.sha256) for f in generated.files)
    for_base, kept_out = generated.for_base(config.test_side)
    if (kept := kept_from_base_warning(kept_out)) is not None:
        state.warnings.append(kept)
    # An adopting change is judged by its own trust files, as an approved one is.
    trusts_head = bool(approvers) or state.adopting
    with step("the change's diff"):
        changes = git.diff_raw(base, head)
        agent_files = (
            agent_block_files(git, base, head, changes, opts.manifest) if state.adopting else ()
        )
        differs = config_changes(
            changes, lambda p: git.read_blob(base, p), lambda p: git.read_blob(head, p)
        )
    by_commit = {base: for_base}
    with (
        scratch_dir() as scratch,
        worktree_pool(git, scratch / "worktrees", generated, by_commit, state.timings) as pool,
        fork_server_session(),
    ):
        if opts.combine is None:  # pytest imports meanwhile; no repository code runs
            prestart_fork_server(config.manifest.scrub_env, scratch)
        # Read before any test runs; analysed beside the oracle phase.
        with step("production scan: reading"):
            scan = start_scan(git, base, head, changes, config, differs, generated)
        state.warnings += [
            Finding(Warning_.ORACLE_FROM_PRODUCTION, d) for d in scan.oracle_from_production
        ]
        state.oracle_from_production = scan.oracle_from_production_files
        with step("locks and the plan"):
            lock = lock_facts(git, base, head, config.manifest, approved=trusts_head)
            state.found = replace(state.found, lock=lock)
            trees = (scratch, pool)
            ctx = plan_phases(git, opts, state, config, differs, trees, approved=trusts_head)
        try:
            _run_phases(ctx, git, opts, (changes, differs), before_untrusted=scan.result)
        finally:
            if pool.journal:  # worktrees rebuilt before a trusted run: the check's log says so
                text = "\n".join(pool.journal) + "\n"
                state.captured.files["worktrees.log"] = text.encode("utf-8", "backslashreplace")
        base_oracle = _base_oracle_ids(state, ctx.plan.base_oracle_files)
        state.found = replace(state.found, disputes=judged(disputes.facts, base_oracle))
        closing = state.timings.now()
    state.timings.add("worktrees removed", closing, state.timings.now() - closing, "worktrees")
    with step("inventory, authorship and freezes"):
        state.annotate_junit()
        found = run_inventory_phase(
            state, state.runs, config, changes, differs, scan.result(), approved_by=approvers,
            today=opts.today, approved_head=approves_head(state.approvals),
            base_oracle=None if trusts_head else ctx.plan.base_oracle_files,
            agent_files=agent_files,
        )  # fmt: skip
    state.inventory = found.inventory
    state.found = replace(state.found, changes=found.changes, freezes=found.freezes)


def _base_oracle_ids(state: CheckState, base_oracle_files: tuple[str, ...]) -> set[str] | None:
    """The oracle items base collected; None when its collection did not complete."""
    run = state.runs.get(RunKey(RunName.BASE_ORACLE))
    if run is None:
        return None if base_oracle_files else set()
    if run.error:
        return None
    return {item.facts.nodeid for item in run.selected(Role.ORACLE)}


def _commits(git: Git, opts: CheckOptions, state: CheckState) -> tuple[str, str]:
    state.repo = git.repo
    state.head = head = git.resolve(opts.head, what="--head")
    choice = resolve_base(git, opts.base, opts.head)
    state.base = base = choice.sha
    if opts.announce is not None:  # the first line: which commits this check gates
        named = "" if opts.head.lower() == head else f" ({opts.head})"
        opts.announce(f"andgate check: {choice.describe()}, head {head[:12]}{named}")
    refuse_empty_range(opts.base, base, head)
    refuse_refs_other_than_the_event(git, base, head, os.environ)
    if (warning := uncommitted_warning(git, head)) is not None:
        state.warnings.append(warning)
    if opts.combine is not None:  # what the shards recorded beside their units' results
        state.gate_errors += opts.combine.recorded.gate_errors
        state.captured.files.update(opts.combine.recorded.files)
    return base, head


def _base_config(git: Git, opts: CheckOptions, state: CheckState, base: str) -> BaseConfig:
    """The manifest and what it names, read from base (from head when the change
    adopts andgate); the approvals it accepts (none when adopting)."""
    source = config_source(git, base, state.head or "", opts.manifest)
    state.adopting = source.adopting
    if (adopting := source.warning()) is not None:
        state.warnings.append(adopting)
    at = source.config_commit
    state.manifest_digest = hashlib.sha256(git.read_blob(at, opts.manifest) or b"").hexdigest()
    config = load_base_config(git, at, opts.manifest)
    state.found = replace(state.found, fail_closed_untrusted=config.manifest.fail_closed_untrusted)
    if not source.adopting:
        binder = ReviewBinder(ProtectedReader(git, config), base, state.head or "")
        state.approvals, ignored = gather_approvals(
            config.manifest, state.head or "", cli=opts.approved_by, env=opts.approved_by_env,
            reviews=opts.approvals, binder=binder,
        )  # fmt: skip
        state.warnings += ignored
        state.ignored_reviews = tuple(binder.ignored)
    elif given := (*opts.approved_by, *opts.approved_by_env):
        state.warnings.append(
            Finding(
                Warning_.APPROVAL_IGNORED,
                f"{', '.join(given)}: the change adopts andgate, and an adopting change "
                "counts no approval (there are no owners yet)",
            )
        )
    if approves_head(state.approvals):
        config = _known_bad_of_head(git, state, config)
    state.patches = {f.name: f.patch.decode("utf-8", "replace") for f in config.known_bad}
    state.live_freezes = config.freezes.live(opts.today)
    return config


def _known_bad_of_head(git: Git, state: CheckState, config: BaseConfig) -> BaseConfig:
    """With an owner's approval of head itself, head's known-bad fixtures (under base's
    `known_bad_dir`) are what replays: a fixture refreshed for code the change moved
    lands in the change that needs it. The approval lifts the ORACLE_AUTHORSHIP of the
    fixture's edit, as of any oracle-side file; head's lock judges `fixtures_dir` (step
    2). An approval of an earlier commit does not: base's fixtures replay then."""
    head = state.head or ""
    state.known_bad_from = head
    return replace(config, known_bad=known_bad_fixtures(git, head, config.manifest.known_bad_dir))


def _run_phases(
    ctx: PhaseContext,
    git: Git,
    opts: CheckOptions,
    change: tuple[list[Change], ConfigChanges],
    before_untrusted: Callable[[], object],
) -> None:
    """The test phases in order of trust, each in worktrees of the check's pool.

    The discrimination report reads its inputs before the oracle phase and makes its
    mutants in a thread beside it; both it and `before_untrusted` (the production
    scan's end) are waited for before the first untrusted test runs. The approval
    evidence reads its inputs now too: its trusted runs (base's test side) follow the
    oracle phase's own, its runs of head's edited oracle files the untrusted class's."""
    state = ctx.state
    step = state.timings.step
    changes, differs = change
    with step("approval evidence: reading"):
        evidence = prepare_evidence(
            ctx, git, changes, differs, budget=opts.evidence_budget, enabled=opts.evidence
        )
    started = time.monotonic()  # the discrimination report's default budget is a share
    with step("discrimination report: reading"):
        plan = prepare_discrimination(  # reads now; the rest beside the oracle phase
            ctx,
            git,
            changes,
            budget=opts.discrimination_budget,
            enabled=opts.discrimination,
            started=started,
        )
    planned = in_background("discrimination-plan", plan)
    with step("oracle phase", kind="phase"):
        oracle = _phase(ctx, lambda own: run_oracle_phase(own, beside=evidence.oracle_side))
    state.record(oracle.runs)
    evidence.oracle_ran(oracle.runs)
    state.replays = list(oracle.replays)
    state.found = replace(state.found, oracle=oracle.oracle, known_bad=oracle.known_bad)
    with step("property phase", kind="phase"):
        prop = _phase(ctx, run_property_phase)
    state.record(prop.runs)
    state.found = replace(state.found, property=prop.facts)
    state.found = replace(state.found, tampered=state.tampering())
    with step("waiting for the discrimination report's mutants"):
        discrimination = wait_future(planned)
    with step("waiting for the production scan"):
        before_untrusted()
    waited = time_waited([oracle.runs.runs, prop.runs.runs], oracle.replays)
    # The evidence first: an owner deciding on an oracle edit reads it before approving.
    beside = (evidence.untrusted_side, discrimination.after(waited))
    with step("untrusted phase", kind="phase"):
        untrusted = _phase(ctx, lambda own: run_untrusted_phase(own, beside=beside))
    state.record(untrusted.runs)
    state.found = replace(state.found, untrusted=untrusted.facts)
    state.capture()
    with step("discrimination report"):
        finished = discrimination.finish(untrusted.runs.get(RunName.UNTRUSTED))
    state.found = replace(state.found, discrimination=finished)
    with step("approval evidence"):
        state.found = replace(state.found, evidence=evidence.finish())


def _phase(ctx: PhaseContext, phase: Callable[[PhaseContext], Outcome]) -> Outcome:
    """Run a test phase in a context of its own; it returns its runs in its result.
    Should it fail, what it ran so far is recorded all the same: a failed shard's
    bundle still holds the units it finished."""
    own = ctx.for_phase()
    try:
        return phase(own)
    except BaseException:
        ctx.state.record(own.results())
        raise
