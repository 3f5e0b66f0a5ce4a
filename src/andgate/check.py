"""`andgate check`: the whole gate, phase by phase (ARCHITECTURE.md names them).

config from base -> approvals -> production scan -> locks -> plan the trees ->
oracle phase (oracle, base pin, known-bad replays) -> property phase -> untrusted
phase (untrusted, frozen_flake) -> inventory, authorship, freezes -> AND -> artifacts.

Each phase's results are read into memory before the next, less trusted phase
starts: property files and untrusted tests are written by the change's author,
so nothing they do can reach a result read before them. Every failure of the
gate itself ends as a recorded GATE_ERROR, and the artifacts are always written.
"""

from __future__ import annotations

import hashlib
import traceback
from dataclasses import replace

from andgate.approvals import gather_approvals
from andgate.authorship import oracle_file_rule, sort_changes
from andgate.config import BaseConfig, load_base_config, runs_xdist
from andgate.errors import AndgateError, BundleError, Interrupted, ManifestError
from andgate.freeze import freeze_facts
from andgate.git import Change, Git
from andgate.github import approved_logins
from andgate.installed import find_installed_project
from andgate.inventory import build_inventory, ineffective_freezes
from andgate.locks import lock_facts
from andgate.options import CheckOptions
from andgate.paths import ConfigChanges, config_changes
from andgate.phases.context import PhaseContext
from andgate.phases.discrimination import run_discrimination
from andgate.phases.oracle import run_oracle_phase
from andgate.phases.production import scan_change
from andgate.phases.property import run_property_phase
from andgate.phases.untrusted import run_untrusted_phase
from andgate.plan import Plan, make_plan
from andgate.records import Finding, Role, Warning_
from andgate.refs import resolve_base, uncommitted_warning
from andgate.report import (
    Artifacts,
    ReportContext,
    claim_artifacts_for,
    write_artifacts,
)
from andgate.run import RunEnvironment, fork_server_session
from andgate.seeds import default_hypothesis_seed
from andgate.state import CheckState, RunName
from andgate.units import plan_digest, work_units
from andgate.verdict import Verdict, decide
from andgate.work import Work
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
        return verdict, write_artifacts(folder, report_context(opts, state, verdict))
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
    state.repo = git.repo
    state.head = head = git.resolve(opts.head, what="--head")
    state.base = base = resolve_base(git, opts.base, opts.head)
    if base == head:
        raise AndgateError(
            f"--base {opts.base or base[:12]} is the same commit as --head: nothing "
            "to gate; pass the branch point, e.g. --base origin/main"
        )
    if (warning := uncommitted_warning(git, head)) is not None:
        state.warnings.append(warning)
    if opts.combine is not None:
        state.gate_errors += opts.combine.recorded.gate_errors
        state.captured.files.update(opts.combine.recorded.files)
    state.manifest_digest = hashlib.sha256(git.read_blob(base, opts.manifest) or b"").hexdigest()
    config = load_base_config(git, base, opts.manifest)
    state.fail_closed_untrusted = config.manifest.fail_closed_untrusted
    state.approvals, ignored = gather_approvals(
        config.manifest,
        head,
        cli=opts.approved_by,
        env=opts.approved_by_env,
        reviews=opts.approvals,
    )
    state.warnings += ignored
    approvers = approved_logins(state.approvals)
    state.patches = {f.name: f.patch.decode("utf-8", "replace") for f in config.known_bad}
    state.live_freezes = config.freezes.live(opts.today)
    changes = git.diff_raw(base, head)
    differs = config_changes(
        changes, lambda p: git.read_blob(base, p), lambda p: git.read_blob(head, p)
    )
    scan = scan_change(git, base, head, changes, config, differs)  # before any test runs
    state.warnings += [
        Finding(Warning_.ORACLE_FROM_PRODUCTION, d) for d in scan.oracle_from_production
    ]
    state.lock = lock_facts(git, base, head, config.manifest, approved=bool(approvers))
    _run_phases(git, opts, state, config, differs, changes, approved=bool(approvers))
    state.inventory = build_inventory(
        *(state.runs.get(n) for n in (RunName.UNTRUSTED, RunName.ORACLE, RunName.PROPERTY)),
        state.runs.get(RunName.FLAKE),
    )
    state.changes = replace(
        sort_changes(
            changes,
            config.manifest,
            is_oracle_file=oracle_file_rule(config.manifest, _oracle_holders(state)),
            config_differs=differs,
            approved_by=approvers,
            test_side=config.test_side,
        ),
        suspicious=scan.suspicious,
        oracle_literals=scan.oracle_literals,
    )
    live = config.live_freeze_ids(opts.today)
    ineffective = ineffective_freezes(live, state.inventory)
    state.freezes = freeze_facts(config.freezes, opts.today, ineffective)


def _run_phases(
    git: Git,
    opts: CheckOptions,
    state: CheckState,
    config: BaseConfig,
    differs: ConfigChanges,
    changes: list[Change],
    *,
    approved: bool,
) -> None:
    """Plan the trees, then run the phases in order of trust, each in pooled worktrees."""
    base, head = state.base or "", state.head or ""
    with (
        scratch_dir() as scratch,
        worktree_pool(git, scratch / "worktrees") as pool,
        fork_server_session(),
    ):
        plan = make_plan(
            git,
            base,
            head,
            config,
            approved=approved,
            live_freezes=config.live_freeze_ids(opts.today),
            config_differs=differs,
            scratch=scratch,
        )
        work = _work(opts, state, plan, config)
        state.environment = RunEnvironment(
            checkout=git.repo,
            project=find_installed_project(git.repo, plan.head_paths),
            scrub_env=config.manifest.scrub_env,
        )
        seed = opts.hypothesis_seed
        state.property_seed = default_hypothesis_seed(base) if seed is None else seed
        ctx = PhaseContext(
            plan,
            config,
            pool,
            scratch,
            state,
            opts.jobs,
            opts.timeout,
            opts.cache_dir,
            approved,
            work,
            opts.progress,
            user_xdist=runs_xdist(git, plan.base, plan.head),
        )
        for phase in (run_oracle_phase, run_property_phase, run_untrusted_phase):
            phase(ctx)
        state.capture()
        if opts.discrimination:
            run_discrimination(ctx, git, changes, budget=opts.discrimination_budget)
    state.annotate_junit()


def _work(opts: CheckOptions, state: CheckState, plan: Plan, config: BaseConfig) -> Work:
    """The check's units, and which of them run here (units.py)."""
    replays = config.manifest.oracle_must_fail_known_bad and bool(plan.trusted_oracle_files)
    count = opts.split.count if opts.split is not None else 1
    units = work_units(plan, replays=len(config.known_bad) if replays else 0, count=count)
    state.plan_digest = plan_digest(plan, units)
    state.unit_names = tuple(u.name for u in units)
    if opts.combine is None:
        return Work.of(units, opts.split)
    key = opts.combine.key
    if (key.plan_digest, key.units) != (state.plan_digest, state.unit_names):
        raise BundleError(
            "the bundles were made for another plan of this check (their units differ from "
            "the ones this base, head and manifest give); re-run the shards with this andgate"
        )
    return Work.of(units, opts.split, opts.combine.recorded)


def _oracle_holders(state: CheckState) -> set[str]:
    """Files that held an oracle item on head or on base (for oracle markers)."""
    holders = {r.facts.path for r in state.inventory if r.cls == Role.ORACLE}
    base = state.runs.get(RunName.BASE_ORACLE)
    return holders | ({i.facts.path for i in base.selected(Role.ORACLE)} if base else set())


def report_context(opts: CheckOptions, state: CheckState, verdict: Verdict) -> ReportContext:
    return ReportContext(
        verdict=verdict,
        base=state.base,
        head=state.head,
        today=opts.today,
        inventory=state.inventory,
        replays=state.replays,
        property=state.property,
        property_seed=state.property_seed,
        changes=state.changes,
        files=state.captured.files,
        traceback=state.traceback,
        approvals=state.approvals,
        patches=state.patches,
        freezes=state.live_freezes,
        discrimination=state.discrimination,
    )
