"""The plan phase: the trees and file sets (`trees.py`), this machine's units of work,
the runs' environment and the property seed, as the one `PhaseContext` every test
phase works with. git only: no test code runs here."""

from __future__ import annotations

from pathlib import Path

from andgate.check.context import PhaseContext
from andgate.check.options import CheckOptions
from andgate.check.plan.trees import make_plan
from andgate.check.property.seeds import default_hypothesis_seed
from andgate.check.state import CheckState
from andgate.check.work import plan_work
from andgate.git import Git
from andgate.process.generated import generated_warning, unnamed_generated
from andgate.process.installed import InstalledProject, find_installed_project
from andgate.process.requests import RunEnvironment
from andgate.process.worktree import WorktreePool
from andgate.trust.config import BaseConfig, runs_xdist
from andgate.trust.paths import ConfigChanges
from andgate.trust.project_plugins import (
    BUILD_FILES,
    blocked_plugins,
    declared_plugins,
    installed_plugins,
    startup_hooks,
)


def head_only_plugins(git: Git, declaring: str, project: InstalledProject) -> tuple[str, ...]:
    """The project's installed `pytest11` entry points that `declaring` (base, or
    head once an owner approved it) does not declare."""
    files = {path: git.read_blob(declaring, path) for path in BUILD_FILES}
    installed = installed_plugins(project.distributions)
    return blocked_plugins(installed, declared_plugins(files)) if installed else ()


def plan_phases(
    git: Git,
    opts: CheckOptions,
    state: CheckState,
    config: BaseConfig,
    differs: ConfigChanges,
    trees: tuple[Path, WorktreePool],
    *,
    approved: bool,
) -> PhaseContext:
    """`trees`: the check's scratch folder and its pool of worktrees."""
    scratch, pool = trees
    base, head = state.base or "", state.head or ""
    live = config.live_freeze_ids(opts.today)
    plan = make_plan(
        git, base, head, config, approved=approved, live_freezes=live,
        config_differs=differs, scratch=scratch,
    )  # fmt: skip
    pool.listings.update(plan.listings)  # what a trusted run's reused worktree must hold
    work = plan_work(plan, config, opts.split, opts.combine)
    state.plan_digest, state.unit_names = work.digest, work.names
    project = find_installed_project(git.repo, plan.head_paths)
    state.environment = RunEnvironment(
        checkout=git.repo,
        project=project,
        scrub_env=config.manifest.scrub_env,
        head_only_plugins=head_only_plugins(git, head if approved else base, project),
        startup_hooks=tuple(startup_hooks(project.distributions)),
        item_timeout=opts.item_timeout,
    )
    carried = (path for path, _ in state.generated)
    unnamed = unnamed_generated(git, project, config.manifest.generated_files, carried)
    if (warning := generated_warning(unnamed)) is not None:
        state.warnings.append(warning)
    seed = opts.hypothesis_seed
    state.property_seed = default_hypothesis_seed(base) if seed is None else seed
    return PhaseContext(
        plan=plan,
        config=config,
        pool=pool,
        scratch=scratch,
        state=state,
        jobs=opts.jobs,
        timeout=opts.timeout,
        cache_dir=opts.cache_dir,
        approved=approved,
        work=work,
        progress=opts.progress,
        user_xdist=runs_xdist(git, plan.base, plan.head),
    )
