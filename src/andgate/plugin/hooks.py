"""andgate's pytest plugin: selects one trust class and records what really ran.

PYTEST_DONT_REWRITE. Loaded into every pytest process of an environment where
andgate is installed, so it is inert unless the gate passes
`--andgate-run=SPEC.json`: it then registers a recorder that

- keeps pytest from even importing test files outside the class it runs
  (`pytest_ignore_collect`), so untrusted test code never runs in the oracle or
  property process;
- classifies every collected item with the gate's own rules and deselects the
  items of other classes;
- runs the items of the spec's `first_files` first (a known-bad replay's likely
  killers), each group in collection order: a reordering, never a selection;
- keeps only the spec's `only_items` when it names some (the oracle items a
  skip from code skipped on head, run again on base; a replay's timed-out item,
  rerun alone), or all but its `skip_items`;
- records each item's phase outcomes (with a skip's reason, and whether it was a
  skip for a missing module), the seeds property items ran with, and collection
  errors, and writes them to the results file at the end.

Under pytest-xdist the controller runs no collection: each worker classifies,
deselects and records its items and seeds and sends them back through
`workeroutput`, while outcomes reach the controller as reports. Every report
counts: an item's outcome per phase is the worst it reported (a failing
unittest `subTest`, a failed attempt that pytest-rerunfailures retried).

It imports only pytest and the standard library, opens files only inside
`with` blocks and emits no warnings: many suites run with `-W error`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from andgate.plugin import integrity, isolation, redirect
from andgate.plugin.classify import Rules, classify_item
from andgate.plugin.item_clock import ItemClock, RunningItems, armed, timed_out_message
from andgate.plugin.item_reports import (
    failure_summary,
    is_subtest,
    missing_modules,
    params_digest,
    seeds_of,
    skip_mark,
    skip_reason,
    tail,
    xfail_mark,
)
from andgate.plugin.shard import owns
from andgate.records import XDIST_COLLECTIONS_DIFFER, ItemFacts, Role, TrustClass

RESULTS_SCHEMA = "andgate.results/1"
RECORDER_KEY = pytest.StashKey["Recorder"]()
WORKER_KEY = "andgate"
# Worse outcomes win when an item reports a phase more than once.
SEVERITY = {"passed": 0, "skipped": 1, "failed": 2}


def activate(spec_path: str) -> None:
    """Called by the gate's bootstrap before pytest starts, before any repository
    code runs: nothing this process executes gains privileges (a setuid `sudo`),
    and imports of the project go to this process's worktree."""
    isolation.no_new_privs()
    redirect_imports(spec_path)


def _read_spec(spec_path: str) -> dict[str, Any]:
    with open(spec_path, encoding="utf-8") as fh:
        spec: dict[str, Any] = json.load(fh)
    return spec


def redirect_imports(spec_path: str) -> None:
    """Point imports of the project at this process's worktree (see `redirect`) and,
    in a trusted run, compile its files only from bytes it read (see `integrity`)."""
    spec = _read_spec(spec_path)
    if spec.get("checkout"):
        redirect.apply(spec["checkout"], spec["root"], spec.get("project", {}).get("roots", ()))
    guarded = spec.get("integrity")
    if guarded is not None:
        integrity.install(spec["root"], guarded["algorithm"], guarded["test_files"])


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """xdist workers are fresh interpreters: redirect before any conftest imports."""
    spec_path = getattr(early_config.known_args_namespace, "andgate_run", None)
    if spec_path:
        redirect_imports(spec_path)  # idempotent: the bootstrap did it in the controller


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("andgate", "andgate merge gate (set by `andgate check`)")
    group.addoption(
        "--andgate-run",
        dest="andgate_run",
        default=None,
        metavar="SPEC",
        help="internal: run one andgate trust class as described by this JSON file",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    spec_path = config.getoption("andgate_run", None)
    if not spec_path:
        return
    spec = _read_spec(spec_path)
    seed = spec.get("hypothesis_seed")
    # Set before Hypothesis's own pytest_configure reads it (we run tryfirst).
    if seed is not None and getattr(config.option, "hypothesis_seed", "absent") is None:
        config.option.hypothesis_seed = seed
    recorder = Recorder(spec, config)
    config.stash[RECORDER_KEY] = recorder
    config.pluginmanager.register(recorder, "andgate-recorder")


def _relative(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


class Recorder:
    """Per-run state; one instance per pytest session the gate started."""

    def __init__(self, spec: dict[str, Any], config: pytest.Config) -> None:
        self.config = config
        self.role = Role(spec["role"])
        self.root = Path(spec["root"]).resolve()
        self.results_path = spec["results"]
        self.rules = Rules.from_json(spec["rules"])
        self.first_files = frozenset(spec.get("first_files") or ())
        # Only these node ids run and are recorded (the oracle items skipped on head,
        # run again on base; a replay's timed-out item, rerun alone); None: every item
        # of the class but `skip_items`.
        only = spec.get("only_items")
        self.only = None if only is None else frozenset(only)
        self.skip_items = frozenset(spec.get("skip_items") or ())
        allow = spec.get("allow_files")
        self.allow_files = None if allow is None else {self.root / p for p in allow}
        self.allow_dirs = set()
        for path in self.allow_files or ():
            self.allow_dirs.update(path.parents)
        self.deny_files = {self.root / p for p in spec.get("deny_files", ())}
        self.shard = spec.get("shard")
        self.checkout = spec.get("checkout")
        self.project = spec.get("project", {})
        self.is_worker = hasattr(config, "workerinput")
        self.items: dict[str, dict[str, Any]] = {}
        self.reports: dict[str, dict[str, Any]] = {}
        self.seeds: dict[str, list[Any]] = {}
        self.collection_errors: dict[str, str] = {}
        self.foreign: set[str] = set()
        self.unscanned: list[dict[str, str]] = []
        # What a trusted run compiled from its worktree (None: not a trusted run), and
        # its xdist workers' records.
        self.guard = integrity.current() if spec.get("integrity") is not None else None
        if self.guard is not None:
            self.guard.config = config
        self.imported: list[dict[str, list[dict[str, str]]]] = []
        # A file's items share its path: resolve it once (`Path.resolve` stats every
        # component; 51,524 items of packaging's test_version.py paid ~3 s for it).
        self.relative_paths: dict[str, str | None] = {}
        # items done of total, for the gate's status line (`<results>.progress`)
        self.progress_path = f"{self.results_path}.progress"
        self.total, self.done, self.shown = 0, 0, 0.0
        # Reports carry pytest's node id; this maps it to the root-relative one.
        self.canonical: dict[str, str] = {}
        limit = spec.get("item_timeout")
        self.clock = ItemClock(float(limit)) if limit else None
        # What runs now, for the gate's stall watch (the process that sees every item
        # start: xdist's controller, not its workers).
        running = f"{self.results_path}.running"
        self.running = RunningItems(running) if limit and not self.is_worker else None

    # -- collection -------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        if collection_path in self.deny_files:
            return True
        if self.allow_files is not None:
            if collection_path.is_dir():
                return None if collection_path in self.allow_dirs else True
            if collection_path not in self.allow_files:
                return True
        if self.shard is not None and not self._in_shard(collection_path):
            return True
        return None

    def _in_shard(self, path: Path) -> bool:
        """Files belong to exactly one shard; folders are walked by every shard."""
        if path.is_dir():
            return True
        assert self.shard is not None  # asked only when sharding
        return owns(self.shard, self._relative(path) or str(path))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            text = str(report.longrepr)
            message = tail(text)
            if text.startswith(XDIST_COLLECTIONS_DIFFER) and not message.startswith(
                XDIST_COLLECTIONS_DIFFER
            ):
                # xdist's controller: its workers collected different items. Keep its
                # first line, which says so, for the gate (`process/run.py` runs it again).
                message = f"{text.splitlines()[0]}\n{message}"
            self.collection_errors.setdefault(report.nodeid, message)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Last, after every other plugin's reordering: deselect the other classes'
        items, then move `first_files` to the front. Every xdist worker computes the
        same order from the same spec, as xdist requires; `-x` stops at the first
        failure whatever the order."""
        keep, drop, first = [], [], []
        for item in items:
            facts = self._facts(item)
            cls, why = classify_item(facts, self.rules)
            wanted = self.role is Role.COLLECT or cls.value == self.role
            if self.only is not None and facts.nodeid not in self.only:
                drop.append(item)
                continue
            wanted = wanted and facts.nodeid not in self.skip_items
            record = {**facts.to_json(), "class": cls.value, "why": why}
            if wanted and self.role is not Role.COLLECT:
                record["skip_mark"] = skip_mark(item)
                record["params"] = params_digest(item)
            elif self.role is Role.COLLECT and cls is TrustClass.ORACLE:
                xfail = xfail_mark(item)  # doctor names them: an oracle that xfails fails
                if xfail is not None:
                    record["xfail_mark"] = xfail
            self.items[facts.nodeid] = record
            if not wanted:
                drop.append(item)
            elif facts.path in self.first_files:
                first.append(item)
            else:
                keep.append(item)
            self.canonical[item.nodeid] = facts.nodeid
        if drop:
            config.hook.pytest_deselected(items=drop)
        if drop or first:
            items[:] = first + keep
        self.total = len(first) + len(keep)
        self._write_progress(force=True)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if self.running is not None:
            self.running.start(self.canonical.get(nodeid, nodeid))

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.done += 1
        self._write_progress()
        if self.running is not None:
            self.running.finish(self.canonical.get(nodeid, nodeid))

    def _write_progress(self, force: bool = False) -> None:
        """At most twice a second; only the main process writes (xdist's controller
        sees every worker's items finish)."""
        now = time.monotonic()
        if self.is_worker or self.config.option.collectonly:
            return  # a collection runs no item: it adds nothing to "done of total"
        if not force and now - self.shown < 0.5:
            return
        self.shown = now
        with open(self.progress_path, "w", encoding="utf-8") as fh:
            fh.write(f"{self.done} {self.total}\n")

    def _relative(self, path: Path) -> str | None:
        key = str(path)
        if key not in self.relative_paths:
            self.relative_paths[key] = _relative(Path(path), self.root)
        return self.relative_paths[key]

    def _facts(self, item: pytest.Item) -> ItemFacts:
        """Node ids are rewritten relative to the repository root, so every
        process agrees on them whatever rootdir pytest picked."""
        path = self._relative(item.path) or str(item.path)
        _, sep, rest = item.nodeid.partition("::")
        nodeid = f"{path}{sep}{rest}" if sep else path
        name = getattr(item, "originalname", None) or item.name.split("[", 1)[0]
        markers = frozenset(mark.name for mark in item.iter_markers())
        return ItemFacts(nodeid, path, name, markers)

    # -- running ----------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, None]:
        """Each item's time limit counts from its setup to the end of its teardown."""
        if self.clock is not None:
            self.clock.start(item.nodeid)
        try:
            yield
        finally:
            if self.clock is not None:
                self.clock.stop()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, None]:
        with armed(self.clock, "setup"):
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        """Just before the test body: a seed is recorded only if it ran."""
        seeds = seeds_of(item)
        if seeds:
            self.seeds.setdefault(self.canonical.get(item.nodeid, item.nodeid), []).extend(seeds)
        with armed(self.clock, "call"):
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, Any, None]:
        with armed(self.clock, "teardown"):
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        """Where the item ran (an xdist worker too), on its report, which travels to
        xdist's controller: a phase its alarm stopped is a failure that says so, even
        when the test swallowed the ItemTimeout; a skip for a missing module is marked.
        The cause of a skip is looked at before the other implementations run: pytest's
        unittest support replaces a `SkipTest` with a new skip that has lost its cause."""
        pending = getattr(item, "_excinfo", None)  # a unittest TestCase's, not yet raised
        missing = missing_modules(call.excinfo)
        if missing is None and isinstance(pending, list) and pending:
            missing = missing_modules(pending[0])
        outcome = yield
        report = outcome.get_result()
        if report is None:
            return
        fired = None if self.clock is None else self.clock.fired_in(item.nodeid, call.when)
        if fired is not None:
            report.andgate_timeout = fired
            if not report.failed:
                report.outcome = "failed"
                report.longrepr = f"ItemTimeout: {timed_out_message(fired)}"
        elif missing is not None and report.skipped:
            report.andgate_missing_module = True
            report.andgate_missing_names = list(missing)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep each phase's worst outcome over every report: sub-tests report
        on their own, and pytest-rerunfailures reports each failed attempt as
        'rerun' before the attempt that counts."""
        entry = self.reports.setdefault(report.nodeid, {})
        outcome: str = report.outcome  # pytest's three, and pytest-rerunfailures' "rerun"
        if outcome == "rerun":
            entry["reruns"] = entry.get("reruns", 0) + 1
            entry.setdefault("rerun_message", failure_summary(report))
            entry.setdefault("attempts", []).append([report.when, failure_summary(report)])
            return
        if is_subtest(report):
            if report.failed:
                entry["subtests_failed"] = entry.get("subtests_failed", 0) + 1
                entry["call"] = "failed"
                entry.setdefault("message", f"sub-test failed: {failure_summary(report)}")
            return
        previous = entry.get(report.when)
        if previous is None or SEVERITY.get(report.outcome, 3) > SEVERITY.get(previous, 3):
            entry[report.when] = report.outcome
        _add_seconds(entry, report.duration)
        limit = getattr(report, "andgate_timeout", None)
        if limit is not None:
            entry["timeout"] = limit
            entry["message"] = timed_out_message(limit)  # the reason, whatever came first
        if hasattr(report, "wasxfail"):
            entry["wasxfail"] = True
            entry.setdefault("message", str(report.wasxfail))
        if report.failed:
            entry.setdefault("message", failure_summary(report))
        elif report.skipped and not hasattr(report, "wasxfail"):
            entry["skip_when"] = report.when
            entry.setdefault("message", skip_reason(report))
            if getattr(report, "andgate_missing_module", False):
                entry["skip_missing_module"] = True
                # The modules the ImportErrors name ("" for one that names none): the
                # gate tells a standard-library module this Python lacks from the rest.
                entry["skip_missing_names"] = sorted(
                    {str(n) for n in getattr(report, "andgate_missing_names", None) or [""]}
                )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist: a worker finished; take what it collected and recorded."""
        data = getattr(node, "workeroutput", {}).get(WORKER_KEY)
        if not data:
            return
        worker = json.loads(data)
        for nodeid, record in worker["items"].items():
            self.items.setdefault(nodeid, record)
        self.canonical.update(worker["canonical"])
        for nodeid, seeds in worker["seeds"].items():
            self.seeds.setdefault(nodeid, []).extend(seeds)
        for nodeid, message in worker["collection_errors"].items():
            self.collection_errors.setdefault(nodeid, message)
        self.foreign.update(worker["foreign"])
        self.unscanned += worker.get("unscanned", [])
        if worker.get("integrity") is not None:
            self.imported.append(worker["integrity"])

    def pytest_report_header(self, config: pytest.Config) -> str:
        seed = getattr(config.option, "hypothesis_seed", None)
        line = f"andgate: running the {self.role} class"
        if seed is not None:
            line += f"; hypothesis seed {seed} (reproduce with --hypothesis-seed={seed})"
        return line

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # First, so a plugin that fails later in this hook (pytest's junitxml
        # cannot write a non-UTF-8 file name) cannot cost the gate its results.
        self._write_progress(force=True)
        if self.checkout:
            found = redirect.foreign_modules(
                self.checkout,
                str(self.root),
                self.project.get("names", ()),
                roots=self.project.get("roots", (".",)),
                distributions=self.project.get("distributions", ()),
            )
            self.foreign.update(found)
        self.unscanned += redirect.unscanned_modules(str(self.root))
        if self.guard is not None:
            self.imported.append(self.guard.report())
        if self.is_worker:
            # pytest-xdist gives a worker's config its workeroutput dict.
            workeroutput: dict[str, str] = self.config.workeroutput  # type: ignore[attr-defined]
            workeroutput[WORKER_KEY] = json.dumps(self._worker_payload(), default=repr)
            return
        payload = {
            "schema": RESULTS_SCHEMA,
            "role": self.role.value,
            "exitstatus": int(exitstatus),
            "items": list(self.items.values()),
            "reports": {self.canonical.get(k, k): v for k, v in self.reports.items()},
            "seeds": self.seeds,
            "collection_errors": [
                {"nodeid": k, "message": v} for k, v in self.collection_errors.items()
            ],
            "foreign_imports": sorted(self.foreign),
            "unscanned_imports": self.unscanned,
            "integrity": None if self.guard is None else integrity.merge(self.imported),
            "hypothesis_seed": getattr(self.config.option, "hypothesis_seed", None),
            "pytest_version": pytest.__version__,
        }
        tmp = f"{self.results_path}.tmp"
        # One json.dumps: json.dump streams through the pure-Python encoder (4x slower).
        text = json.dumps(payload, default=repr)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, self.results_path)
        _drop_idle_hypothesis_summary(self.config)

    def _worker_payload(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "canonical": self.canonical,
            "seeds": self.seeds,
            "collection_errors": self.collection_errors,
            "foreign": sorted(self.foreign),
            "unscanned": self.unscanned,
            "integrity": None if self.guard is None else self.imported[-1],
        }


def _add_seconds(entry: dict[str, Any], duration: float) -> None:
    """An item's time over its phases, to a tenth of a second and only from 0.1 s:
    a run's durations bound the limit of the item's later runs, and most items
    share one report entry in the gate's memory (`run._Compact`)."""
    seconds = round(entry.get("seconds", 0.0) + float(duration or 0.0), 1)
    if seconds >= 0.1:
        entry["seconds"] = seconds


def _drop_idle_hypothesis_summary(config: pytest.Config) -> None:
    """Hypothesis's terminal summary imports all of Hypothesis (about 0.25 s of CPU
    per process) only to ask whether it observed anything. Where nothing imported
    Hypothesis and no xdist worker ran a test for this process, it has nothing to
    print: unregister its plugin before the summary instead of paying for that."""
    if "hypothesis" in sys.modules or config.pluginmanager.has_plugin("dsession"):
        return
    if config.getoption("hypothesis_show_statistics", False):
        return  # it prints its section header even with nothing in it
    plugin = sys.modules.get("_hypothesis_pytestplugin")
    if plugin is not None and config.pluginmanager.is_registered(plugin):
        config.pluginmanager.unregister(plugin)
