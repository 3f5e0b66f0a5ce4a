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
"""

from __future__ import annotations

import hashlib
import time
import traceback

from andgate.approvals import gather_approvals
from andgate.config import BaseConfig, load_base_config
from andgate.errors import AndgateError, Interrupted, ManifestError
from andgate.git import Change, Git
from andgate.github import approved_logins
from andgate.locks import lock_facts
from andgate.options import CheckOptions
from andgate.paths import config_changes
from andgate.phases.context import PhaseContext
from andgate.phases.discrimination import plan_discrimination
from andgate.phases.inventory import run_inventory_phase
from andgate.phases.oracle import run_oracle_phase
from andgate.phases.planning import plan_phases
from andgate.phases.production import scan_change
from andgate.phases.property import run_property_phase
from andgate.phases.untrusted import run_untrusted_phase
from andgate.records import Finding, Warning_
from andgate.refs import refuse_empty_range, resolve_base, uncommitted_warning
from andgate.report import Artifacts, claim_artifacts_for, write_artifacts
from andgate.run import fork_server_session, prestart_fork_server
from andgate.state import CheckState
from andgate.verdict import Verdict, decide
from andgate.worktree import scratch_dir, worktree_pool


def run_check(opts: CheckOptions) -> tuple[Verdict, Artifacts]:
    """Run the gate; always returns a verdict and writes the artifacts.

    The artifacts folder is claimed first, before any test code runs: an unsafe
    one is refused at once (one line, exit 2), and nothing a test plants there
    later can make andgate write through a symlink."""
    state = CheckState()
    folder = claim_artifacts_for(opts.repo, opts.artifacts)
    try:
        gate_failing_closed(opts, state)
        verdict = decide(state.facts())
        # No verdict file means no allow: on a failure the CLI prints one line and exits 2.
        return verdict, write_artifacts(folder, state.report_context(verdict, opts.today))
    finally:
        folder.close()


def gate_failing_closed(opts: CheckOptions, state: CheckState) -> None:
    """Every way the gate can fail is a recorded reason, never an exception."""
    try:
        _gate(opts, state)
    except ManifestError as exc:
        state.manifest_error = str(exc)
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
    base, head = _commits(git, opts, state)
    config = _base_config(git, opts, state, base)
    approvers = approved_logins(state.approvals)
    changes = git.diff_raw(base, head)
    differs = config_changes(
        changes, lambda p: git.read_blob(base, p), lambda p: git.read_blob(head, p)
    )
    with (
        scratch_dir() as scratch,
        worktree_pool(git, scratch / "worktrees") as pool,
        fork_server_session(),
    ):
        if opts.combine is None:  # pytest imports meanwhile; no repository code runs
            prestart_fork_server(config.manifest.scrub_env, scratch)
        scan = scan_change(git, base, head, changes, config, differs)  # before any test runs
        state.warnings += [
            Finding(Warning_.ORACLE_FROM_PRODUCTION, d) for d in scan.oracle_from_production
        ]
        state.lock = lock_facts(git, base, head, config.manifest, approved=bool(approvers))
        trees = (scratch, pool)
        ctx = plan_phases(git, opts, state, config, differs, trees, approved=bool(approvers))
        _run_phases(ctx, git, opts, changes)
    state.annotate_junit()
    run_inventory_phase(
        state, config, changes, differs, scan, approved_by=approvers, today=opts.today
    )


def _commits(git: Git, opts: CheckOptions, state: CheckState) -> tuple[str, str]:
    state.repo = git.repo
    state.head = head = git.resolve(opts.head, what="--head")
    state.base = base = resolve_base(git, opts.base, opts.head)
    refuse_empty_range(opts.base, base, head)
    if (warning := uncommitted_warning(git, head)) is not None:
        state.warnings.append(warning)
    if opts.combine is not None:  # what the shards recorded beside their units' results
        state.gate_errors += opts.combine.recorded.gate_errors
        state.captured.files.update(opts.combine.recorded.files)
    return base, head


def _base_config(git: Git, opts: CheckOptions, state: CheckState, base: str) -> BaseConfig:
    """The manifest and what it names, read from base; the approvals it accepts."""
    state.manifest_digest = hashlib.sha256(git.read_blob(base, opts.manifest) or b"").hexdigest()
    config = load_base_config(git, base, opts.manifest)
    state.fail_closed_untrusted = config.manifest.fail_closed_untrusted
    state.approvals, ignored = gather_approvals(
        config.manifest, state.head or "", cli=opts.approved_by, env=opts.approved_by_env,
        reviews=opts.approvals,
    )  # fmt: skip
    state.warnings += ignored
    state.patches = {f.name: f.patch.decode("utf-8", "replace") for f in config.known_bad}
    state.live_freezes = config.freezes.live(opts.today)
    return config


def _run_phases(ctx: PhaseContext, git: Git, opts: CheckOptions, changes: list[Change]) -> None:
    """The test phases in order of trust, each in worktrees of the check's pool."""
    started = time.monotonic()  # the discrimination report's default budget is a share
    run_oracle_phase(ctx)
    run_property_phase(ctx)
    discrimination = plan_discrimination(
        ctx,
        git,
        changes,
        budget=opts.discrimination_budget,
        enabled=opts.discrimination,
        started=started,
    )
    run_untrusted_phase(ctx, beside=discrimination)
    ctx.state.capture()
    discrimination.finish()
