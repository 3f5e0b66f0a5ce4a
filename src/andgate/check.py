"""`andgate check`: the whole gate, phase by phase.

config from base -> authorship -> locks -> plan trees -> oracle phase (oracle,
base oracle pin, known-bad replays) -> property phase -> untrusted phase
(untrusted, frozen_flake) -> seeds and freezes -> AND.

Each phase's results are read into memory before the next, less trusted phase
starts: property files and untrusted tests are written by the change's author,
so nothing they do can reach a result read before them. Every failure of the
gate itself ends as a recorded GATE_ERROR, and the artifacts are always written.
"""

from __future__ import annotations

import datetime as dt
import os
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from andgate import locks
from andgate.authorship import sort_changes, valid_approvers
from andgate.cache import KillerCache, default_cache_dir
from andgate.config import BaseConfig, load_base_config
from andgate.errors import AndgateError, Interrupted, ManifestError
from andgate.git import Change, Git
from andgate.installed import find_installed_project
from andgate.inventory import Record, build_inventory, counts, ineffective_freezes
from andgate.manifest import DEFAULT_MANIFEST
from andgate.paths import ConfigChanges, config_changes, is_under, matches
from andgate.plan import Plan, make_plan
from andgate.records import (
    ClassFacts,
    Facts,
    Finding,
    FreezeFacts,
    ItemResult,
    KnownBadFacts,
    OracleFacts,
    Outcome,
    ReplayFacts,
    Warning_,
)
from andgate.replay import replay_fixture
from andgate.report import (
    Artifacts,
    ArtifactsFolder,
    ReportContext,
    claim_artifacts,
    merge_junit,
    write_artifacts,
)
from andgate.run import (
    DEFAULT_TIMEOUT,
    RunEnvironment,
    RunRequest,
    RunResult,
    merge_results,
    run_parallel,
    run_pytest,
)
from andgate.seeds import default_hypothesis_seed, property_facts
from andgate.shard import STARTUP_BYTES, shards
from andgate.verdict import Verdict, decide
from andgate.worktree import WorktreePool, scratch_dir, worktree_pool


@dataclass(frozen=True)
class CheckOptions:
    repo: Path = Path(".")
    base: str | None = None
    head: str = "HEAD"
    manifest: str = DEFAULT_MANIFEST
    approved_by: tuple[str, ...] = ()
    today: dt.date = field(default_factory=dt.date.today)
    artifacts: Path | None = None
    jobs: int = os.cpu_count() or 1
    timeout: float = DEFAULT_TIMEOUT
    hypothesis_seed: int | None = None
    cache_dir: Path | None = field(default_factory=default_cache_dir)


@dataclass
class Recorded:
    """Facts and run results gathered so far; whatever is missing stays None."""

    facts: dict[str, Any] = field(default_factory=dict)
    warnings: list[Finding] = field(default_factory=list)
    gate_errors: list[str] = field(default_factory=list)
    base: str | None = None
    head: str | None = None
    runs: dict[str, RunResult] = field(default_factory=dict)
    replays: list[ReplayFacts] = field(default_factory=list)
    inventory: list[Record] = field(default_factory=list)
    property_seed: int | None = None
    repo: Path | None = None
    traceback: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    environment: RunEnvironment = field(default_factory=RunEnvironment)
    looked_at: set[str] = field(default_factory=set)  # scratch files read once, never again


def run_check(opts: CheckOptions) -> tuple[Verdict, Artifacts]:
    """Run the gate; always returns a verdict and writes the artifacts.

    The artifacts folder is claimed first, before any test code runs: an unsafe
    one is refused at once (one line, exit 2), and nothing a test plants there
    later can make andgate write through a symlink."""
    rec = Recorded()
    folder = _artifacts_dir(opts)
    try:
        try:
            _gate(opts, rec)
        except ManifestError as exc:
            rec.facts["manifest_error"] = str(exc)
        except (Interrupted, KeyboardInterrupt):
            rec.gate_errors.append("interrupted by a signal; temporary worktrees were removed")
        except AndgateError as exc:
            rec.gate_errors.append(str(exc))
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [""])[0]  # the traceback is in the logs
            rec.gate_errors.append(f"internal error: {exc.__class__.__name__}: {first}")
            rec.traceback = traceback.format_exc()
        facts = Facts(
            gate_errors=tuple(rec.gate_errors),
            warnings=tuple(rec.warnings),
            counts=counts(rec.inventory),
            **rec.facts,
        )
        verdict = decide(facts)
        ctx = ReportContext(
            verdict=verdict,
            base=rec.base,
            head=rec.head,
            today=opts.today,
            inventory=rec.inventory,
            replays=rec.replays,
            property=facts.property,
            property_seed=rec.property_seed,
            changes=facts.changes,
            files=rec.files,
            traceback=rec.traceback,
        )
        # No verdict file means no allow: on a failure the CLI prints one line and exits 2.
        return verdict, write_artifacts(folder, ctx)
    finally:
        folder.close()


def _artifacts_dir(opts: CheckOptions) -> ArtifactsFolder:
    """`--artifacts`, else `artifacts/` at the repository's top, claimed with what
    the refusals need to know: the repository's top and its git folders."""
    if opts.artifacts is None and not opts.repo.is_dir():
        # Never create a folder the user mistyped just to put artifacts in it.
        raise AndgateError(
            f"{opts.repo}: no such directory, so no artifacts were written; "
            "pass --repo DIR naming a git checkout"
        )
    git = Git(opts.repo)
    try:
        lines = git.out("rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
        top, git_dir, common = lines.splitlines()
    except (AndgateError, ValueError):
        repo, git_dirs = None, ()  # not a repository: the gate says so
    else:
        repo, git_dirs = Path(top), (Path(git_dir), opts.repo / common)
    path = opts.artifacts if opts.artifacts is not None else (repo or opts.repo) / "artifacts"
    return claim_artifacts(path, repo=repo, git_dirs=git_dirs)


def _gate(opts: CheckOptions, rec: Recorded) -> None:
    git = Git(opts.repo)
    git = Git(git.toplevel())
    rec.repo = git.repo
    head = git.resolve(opts.head, what="--head")
    rec.head = head
    base = _resolve_base(git, opts)
    rec.base = base
    if base == head:
        raise AndgateError(
            f"--base {opts.base or base[:12]} is the same commit as --head: nothing "
            "to gate; pass the branch point, e.g. --base origin/main"
        )
    _warn_uncommitted(git, head, rec)
    config = load_base_config(git, base, opts.manifest)
    rec.facts["fail_closed_untrusted"] = config.manifest.fail_closed_untrusted
    approvers = _approvers(opts, config, rec)
    changes = git.diff_raw(base, head)
    config_differs = _config_differs(git, base, head, changes)
    rec.facts["lock"] = _lock_facts(git, base, head, config, approved=bool(approvers))
    live = config.live_freeze_ids(opts.today)
    with scratch_dir() as scratch, worktree_pool(git, scratch / "worktrees") as pool:
        plan = make_plan(
            git,
            base,
            head,
            config,
            approved=bool(approvers),
            live_freezes=live,
            config_differs=config_differs,
            scratch=scratch,
        )
        rec.environment = RunEnvironment(
            checkout=git.repo,
            project=find_installed_project(git.repo, plan.head_paths),
            scrub_env=config.manifest.scrub_env,
        )
        seed = opts.hypothesis_seed
        rec.property_seed = default_hypothesis_seed(base) if seed is None else seed
        _oracle_phase(plan, config, pool, scratch, opts, rec, approved=bool(approvers))
        _property_phase(plan, config, pool, scratch, opts, rec)
        _untrusted_phase(plan, pool, scratch, opts, rec)
        _collect_artifacts_from_scratch(rec, scratch)
    rec.inventory = build_inventory(
        rec.runs.get("untrusted"),
        rec.runs.get("oracle"),
        rec.runs.get("property"),
        rec.runs.get("flake"),
    )
    rec.facts["changes"] = sort_changes(
        changes,
        config.manifest,
        is_oracle_file=_oracle_file_rule(config, rec),
        config_differs=config_differs,
        approved_by=approvers,
        test_side=config.test_side,
    )
    rec.facts["freezes"] = _freeze_facts(config, opts.today, rec.inventory)


def _resolve_base(git: Git, opts: CheckOptions) -> str:
    if opts.base:
        return git.resolve(opts.base, what="--base")
    upstream = git.default_upstream()
    if upstream is None:
        raise AndgateError(
            "--base is required: no upstream default branch (origin/HEAD, "
            "origin/main) was found; pass --base REF, e.g. --base origin/main"
        )
    merge_base = git.merge_base(upstream, opts.head)
    if merge_base is None:
        if git.is_shallow():
            raise AndgateError(
                f"--base: no merge-base of {upstream} and {opts.head} in this shallow clone: "
                "fetch full history (git fetch --unshallow, or actions/checkout with "
                "fetch-depth: 0)"
            )
        raise AndgateError(f"--base: {upstream} and {opts.head} share no history; pass --base REF")
    return merge_base


def _warn_uncommitted(git: Git, head: str, rec: Recorded) -> None:
    """Work in the checkout is not what gets gated when HEAD is the head commit."""
    if git.resolve("HEAD", what="HEAD") != head:
        return
    dirty = git.dirty_paths()
    if dirty:
        rec.warnings.append(
            Finding(
                Warning_.UNCOMMITTED_CHANGES,
                f"{len(dirty)} uncommitted path(s) (e.g. {dirty[0]}) are not gated: "
                "andgate checks the committed HEAD",
            )
        )


def _approvers(opts: CheckOptions, config: BaseConfig, rec: Recorded) -> tuple[str, ...]:
    approvers = valid_approvers(opts.approved_by, config.manifest)
    ignored = sorted(set(opts.approved_by) - set(approvers))
    if ignored:
        rec.warnings.append(
            Finding(
                Warning_.APPROVAL_IGNORED,
                (f"approval by {', '.join(ignored)} ignored: not in the base manifest's owners"),
            )
        )
    return approvers


def _config_differs(git: Git, base: str, head: str, changes: list[Change]) -> ConfigChanges:
    """Which pytest config files changed in a way pytest sees (parsed, not text), and why."""
    return config_changes(
        changes, lambda path: git.read_blob(base, path), lambda path: git.read_blob(head, path)
    )


def _lock_facts(git: Git, base: str, head: str, config: BaseConfig, *, approved: bool):
    manifest = config.manifest
    lock_commit = head if approved else base
    lock = locks.parse_lock(
        git.read_blob(lock_commit, manifest.lock_file),
        f"{manifest.lock_file} (at {lock_commit[:12]})",
    )
    entries = [
        e
        for e in git.ls_tree(head, [manifest.fixtures_dir])
        if e.kind == "blob" and is_under(e.path, manifest.fixtures_dir)
    ]
    blobs = git.read_blobs(e.sha for e in entries)
    prefix = manifest.fixtures_dir.rstrip("/") + "/"
    actual = {e.path[len(prefix) :]: locks.sha256(blobs[e.sha]) for e in entries}
    return locks.compare(lock, actual, manifest.fixtures_dir)


# -- phases ------------------------------------------------------------------------------


def _oracle_phase(
    plan: Plan,
    config: BaseConfig,
    pool: WorktreePool,
    scratch: Path,
    opts: CheckOptions,
    rec: Recorded,
    *,
    approved: bool,
) -> None:
    """Oracle, base oracle pin and known-bad replays: no code of the change's
    test side runs here, only head's production code (not sandboxed)."""
    manifest = config.manifest
    oracle_request = RunRequest(
        "oracle",
        "oracle",
        plan.trusted_oracle_rules,
        allow_files=plan.trusted_oracle_files,
        junit_name="oracle.xml",
        environment=rec.environment,
    )
    tasks: list[Callable[[], object]] = []

    def run(name: str, request: RunRequest, commit: str) -> Callable[[], None]:
        def task() -> None:
            with pool.lease(commit) as worktree:
                rec.runs[name] = run_pytest(request, worktree.path, scratch, opts.timeout)

        return task

    if plan.trusted_oracle_files:
        tasks.append(run("oracle", oracle_request, plan.trusted))
    if plan.base_oracle_files:
        # Pins the oracle set (unless an owner approved) and evaluates skip
        # marks against base's code (platform skips, ORACLE_SKIPPED).
        request = RunRequest(
            "base oracle",
            "oracle",
            plan.base_oracle_rules,
            allow_files=plan.base_oracle_files,
            collect_only=True,
            environment=rec.environment,
        )
        tasks.append(run("base_oracle", request, plan.base))
    replays = manifest.oracle_must_fail_known_bad and plan.trusted_oracle_files
    for index, fixture in enumerate(config.known_bad if replays else ()):
        tasks.append(
            lambda f=fixture, i=index: rec.replays.append(
                replay_fixture(
                    f,
                    i,
                    pool=pool,
                    commit=plan.trusted,
                    oracle_request=oracle_request,
                    scratch=scratch,
                    timeout=opts.timeout,
                    cache=KillerCache(opts.cache_dir),
                    oracle_digest=plan.trusted_oracle_digest,
                )
            )
        )
    run_parallel(tasks, opts.jobs)
    rec.facts["oracle"] = _oracle_facts(rec, approved=approved)
    order = {f.name: i for i, f in enumerate(config.known_bad)}
    rec.replays.sort(key=lambda r: order.get(r.name, 0))
    rec.facts["known_bad"] = _known_bad_facts(config, rec, plan)
    _collect_artifacts_from_scratch(rec, scratch)


def _property_phase(
    plan: Plan,
    config: BaseConfig,
    pool: WorktreePool,
    scratch: Path,
    opts: CheckOptions,
    rec: Recorded,
) -> None:
    """Property files are written by the change's author: they run only after
    every oracle-side result is in memory (their import-time code could
    otherwise rewrite a results file or a sibling worktree), and before any
    untrusted code can touch their own results."""
    manifest = config.manifest
    if plan.property_files:
        request = RunRequest(
            "property",
            "property",
            plan.property_rules,
            allow_files=plan.property_files,
            hypothesis_seed=rec.property_seed,
            junit_name="property.xml",
            environment=rec.environment,
        )
        tasks = _shard_tasks(
            "property", request, plan.property_tree, plan.property_sizes, pool, scratch, opts, rec
        )
        run_parallel(tasks, opts.jobs)
        _merge_shards("property", len(tasks), rec, scratch)
    rec.facts["property"] = property_facts(
        rec.runs.get("property"),
        plan.property_files,
        required=manifest.require_property_class,
        every_candidate_counts=not manifest.property.markers,
        empty_because=config.invariants_problem(f" (at {plan.base[:12]})") or "",
    )
    _collect_artifacts_from_scratch(rec, scratch)


def _untrusted_phase(
    plan: Plan, pool: WorktreePool, scratch: Path, opts: CheckOptions, rec: Recorded
) -> None:
    """The untrusted class, split by file over `--jobs` processes, and the
    frozen_flake class beside it, all in worktrees of head."""
    request = RunRequest(
        "untrusted",
        "untrusted",
        plan.head_rules,
        deny_files=plan.untrusted_deny,
        junit_name="untrusted.xml",
        environment=rec.environment,
    )
    # The flake process queues on the core of the last shard, which gets
    # correspondingly less of the untrusted source.
    flake_weight = sum(plan.flake_sizes.values()) + STARTUP_BYTES if plan.flake_candidates else 0
    tasks = _shard_tasks(
        "untrusted",
        request,
        plan.head,
        plan.untrusted_sizes,
        pool,
        scratch,
        opts,
        rec,
        last_preload=flake_weight,
    )
    shard_count = len(tasks)
    if plan.flake_candidates:
        flake = RunRequest(
            "flake",
            "frozen_flake",
            plan.head_rules,
            allow_files=plan.flake_candidates,
            junit_name="flake.xml",
            environment=rec.environment,
        )
        tasks.insert(shard_count - 1, _task("flake", flake, plan.head, pool, scratch, opts, rec))
    run_parallel(tasks, opts.jobs)
    _merge_shards("untrusted", shard_count, rec, scratch)
    untrusted = rec.runs["untrusted"]
    rec.facts["untrusted"] = _class_facts(untrusted, "untrusted")
    flake_run = rec.runs.get("flake")
    if flake_run is not None and flake_run.error:
        rec.gate_errors.append(flake_run.error)


def _task(
    name: str,
    request: RunRequest,
    commit: str,
    pool: WorktreePool,
    scratch: Path,
    opts: CheckOptions,
    rec: Recorded,
) -> Callable[[], None]:
    def task() -> None:
        with pool.lease(commit) as worktree:
            rec.runs[name] = run_pytest(request, worktree.path, scratch, opts.timeout)

    return task


def _shard_tasks(
    name: str,
    request: RunRequest,
    commit: str,
    sizes: Mapping[str, int],
    pool: WorktreePool,
    scratch: Path,
    opts: CheckOptions,
    rec: Recorded,
    last_preload: int = 0,
) -> list[Callable[[], None]]:
    """One task per shard of a class; a single shard runs under the class's own name."""
    parts = shards(sizes, opts.jobs, last_preload)
    if len(parts) == 1:
        return [_task(name, request, commit, pool, scratch, opts, rec)]
    return [
        _task(
            f"{name}.{s.index}",
            replace(request, label=f"{request.label} {s.index}", shard=s),
            commit,
            pool,
            scratch,
            opts,
            rec,
        )
        for s in parts
    ]


def _merge_shards(name: str, count: int, rec: Recorded, scratch: Path) -> None:
    """Fold shard results into one per class; JUnit files become one file."""
    if count <= 1:
        _collect_artifacts_from_scratch(rec, scratch)
        return
    names = [f"{name}.{i}" for i in range(count)]
    rec.runs[name] = merge_results(name, [rec.runs[n] for n in names])
    _collect_artifacts_from_scratch(rec, scratch)
    documents = [rec.files.pop(f"{n}.junit", None) for n in names]
    if all(d is not None for d in documents):
        merged = merge_junit(documents)  # type: ignore[arg-type]
        if merged is not None:
            rec.files[f"{name}.junit"] = merged
    for n in names:
        del rec.runs[n]


def _class_facts(result: RunResult, cls: str) -> ClassFacts:
    return ClassFacts(
        results=tuple(
            ItemResult(
                i.facts.nodeid, result.outcome(i.facts.nodeid), result.message(i.facts.nodeid)
            )
            for i in result.selected(cls)
        ),
        collection_errors=_collection_errors(result),
        error=result.error,
    )


def _collection_errors(result: RunResult) -> tuple[str, ...]:
    out = []
    for nodeid, message in result.collection_errors:
        last = message.splitlines()[-1] if message else ""
        out.append(f"{nodeid or '<session>'} ({result.label} process): {last}"[:300])
    return tuple(out)


def _oracle_facts(rec: Recorded, *, approved: bool) -> OracleFacts:
    oracle = rec.runs.get("oracle")
    base = rec.runs.get("base_oracle")
    facts = _class_facts(oracle, "oracle") if oracle else ClassFacts()
    collected = {r.nodeid for r in facts.results}
    missing: tuple[str, ...] = ()
    errors = facts.collection_errors
    error = facts.error
    if base is not None:
        if base.error:
            # A timeout or crash, not a collection error: the gate could not run.
            error = "; ".join(e for e in (error, base.error) if e)
        errors += tuple(f"on base: {e}" for e in _collection_errors(base))
        if not approved:
            pinned = [i.facts.nodeid for i in base.selected("oracle")]
            missing = tuple(n for n in pinned if n not in collected)
    results, not_applicable = _platform_skips(facts.results, oracle, base)
    return OracleFacts(
        results=results,
        collection_errors=errors,
        error=error,
        pinned_missing=missing,
        not_applicable=not_applicable,
    )


def _platform_skips(
    results: tuple[ItemResult, ...], head: RunResult | None, base: RunResult | None
) -> tuple[tuple[ItemResult, ...], tuple[str, ...]]:
    """Split off the oracle items a skip/skipif mark skipped on head that the same
    mark skips when evaluated against base too: not applicable on this machine
    (ORACLE_SKIPPED). A skip from code (`pytest.skip()`, `importorskip`) or a
    condition that only head's production code makes true still fails."""
    if head is None or base is None:
        return results, ()
    on_base = {i.facts.nodeid: i.skip_mark for i in base.selected("oracle")}
    on_head = {i.facts.nodeid: i.skip_mark for i in head.selected("oracle")}
    kept, skipped = [], []
    for result in results:
        mark = on_head.get(result.nodeid)
        by_mark = (
            result.outcome is Outcome.SKIPPED
            and mark is not None
            and head.reports.get(result.nodeid, {}).get("skip_when") == "setup"
            and result.message.strip() == mark.strip()
        )
        if by_mark and on_base.get(result.nodeid) is not None:
            skipped.append(f"{result.nodeid} skipped: {result.message} (skipped on base too)")
        else:
            kept.append(result)
    return tuple(kept), tuple(skipped)


def _known_bad_facts(config: BaseConfig, rec: Recorded, plan: Plan) -> KnownBadFacts:
    required = config.manifest.oracle_must_fail_known_bad
    if required and config.known_bad and not plan.trusted_oracle_files:
        replays = tuple(
            ReplayFacts(f.name, applied=False, error="no oracle file to replay against")
            for f in config.known_bad
        )
        return KnownBadFacts(replays, required)
    return KnownBadFacts(tuple(rec.replays), required)


def _freeze_facts(config: BaseConfig, today: dt.date, inventory: list[Record]) -> FreezeFacts:
    expired = [
        f"{f.id!r} expired on {f.expires.isoformat()} (owner {f.owner}); fix the test or "
        "renew the freeze with an owner's approval"
        for f in config.freezes.expired(today)
    ]
    invalid = [p.message for p in config.freezes.invalid]
    return FreezeFacts(
        expired=tuple(expired),
        invalid=tuple(invalid),
        ineffective=tuple(ineffective_freezes(config.live_freeze_ids(today), inventory)),
    )


def _oracle_file_rule(config: BaseConfig, rec: Recorded) -> Callable[[str], bool]:
    """Is a path an oracle-class file? With oracle markers, only a globbed file
    that held an oracle item on base or head counts."""
    oracle = config.manifest.oracle
    if not oracle.markers:
        return lambda path: matches(path, oracle.globs)
    holders = {r.facts.path for r in rec.inventory if r.cls == "oracle"}
    base = rec.runs.get("base_oracle")
    holders |= {i.facts.path for i in base.selected("oracle")} if base else set()
    return lambda path: matches(path, oracle.globs) and path in holders


def _collect_artifacts_from_scratch(rec: Recorded, scratch: Path) -> None:
    """Logs and JUnit files live in scratch until the artifacts are written; copy
    their bytes at the end of each phase, before code of a later, less trusted
    phase could rewrite them, and never again afterwards: every file looked at
    once is done with, even one skipped as broken or not there at all."""
    for name, result in rec.runs.items():
        for kind, path in (("log", result.log), ("junit", result.junit)):
            key = f"{name}.{kind}"
            if key in rec.looked_at or path is None:
                continue
            rec.looked_at.add(key)
            data = path.read_bytes() if path.exists() else None
            if data is None or (kind == "junit" and not data.rstrip().endswith(b"</testsuites>")):
                # pytest died while writing it (its junitxml cannot write a
                # non-UTF-8 file name): an empty report beats a broken one.
                continue
            rec.files[key] = data
