"""Shared fixtures: throwaway git repositories built in tmp_path.

Every test runs with HOME, XDG folders and TMPDIR in its own temp folder, so git
never reads or writes the developer's config, nothing a run leaves in the system
temp folder can reach another run (the suite passes on a machine where it never
ran), and no approval is inherited from the environment. Repositories are built
from the tests' own sample project (`tests/resources/minilib/`, see `harness.py`),
not the demo's.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import signal
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from andgate.check.pipeline import CheckOptions, run_check
from andgate.commands.sample import AGENT, KNOWN_BAD, SAMPLE_TODAY, SampleRepo, init_repo
from andgate.verdict import Verdict
from harness import ONE_KNOWN_BAD, build_test_sample

# The sample project's files are data for the tests, not tests of andgate.
collect_ignore = ["resources"]

# A script that starts the suite in the background (`pytest ... &`) hands it SIGINT
# ignored, and Python then installs no KeyboardInterrupt handler, here or in any
# gate the tests start: the Ctrl-C tests need what a terminal gives.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def isolated_environment(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@contextlib.contextmanager
def isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """isolated_environment, for gate runs in module- or session-scoped fixtures
    (they are set up before any function-scoped fixture)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, tmp_path_factory.mktemp("home"))
        yield


def isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    # The gate's worktrees and its pytest processes' temp folders (pytest-of-*)
    # land here too, never in a system temp folder shared with earlier runs.
    temp = home / "tmp"
    temp.mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.delenv("ANDGATE_APPROVED_BY", raising=False)
    # Under CI (the suite's own CI job too) approvals follow stricter rules and the
    # runner's files are andgate's to publish to: tests that want either set them.
    for name in (
        "CI",
        "GITHUB_ACTIONS",
        "GITHUB_EVENT_PATH",
        "GITHUB_EVENT_NAME",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_STATE",
        "RUNNER_TEMP",
    ):
        monkeypatch.delenv(name, raising=False)
    # Hypothesis's pytest plugin imports all of Hypothesis at the end of every
    # pytest process (its terminal summary): about a third of a small gate
    # run. The sample projects do not use it; tests that do ask for it with
    # the `hypothesis_plugin` fixture. The andgate plugin still loads through
    # its entry point, as in a user's environment.
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)


@pytest.fixture
def hypothesis_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the gate's pytest processes load Hypothesis's plugin again."""
    monkeypatch.delenv("PYTEST_ADDOPTS")


@dataclass
class GateRun:
    verdict: Verdict
    payload: dict[str, Any]
    artifacts: Path
    base: str = ""  # as passed to the gate

    @property
    def codes(self) -> list[str]:
        return [r["code"] for r in self.payload["reasons"]]

    @property
    def decision(self) -> str:
        return self.payload["verdict"]

    def details(self, code: str) -> list[str]:
        return [r["detail"] for r in self.payload["reasons"] if r["code"] == code]

    def artifact(self, name: str) -> Any:
        text = (self.artifacts / name).read_text(encoding="utf-8")
        return json.loads(text) if name.endswith(".json") else text


@dataclass
class Sample:
    """The sample project committed as base, with helpers to make head and gate it."""

    repo: SampleRepo
    base: str
    tmp: Path

    @property
    def path(self) -> Path:
        return self.repo.path

    def change(self, apply: Callable[[SampleRepo], None], message: str = "agent change") -> str:
        self.repo.run("checkout", "-q", "--detach", self.base)
        apply(self.repo)
        return self.repo.commit(message, who=AGENT)

    def gate(self, head: str | None = None, **options: Any) -> GateRun:
        options.setdefault("today", dt.date.fromisoformat(SAMPLE_TODAY))
        options.setdefault("artifacts", self.tmp / "artifacts")
        options.setdefault("jobs", 2)
        options.setdefault("timeout", 300)
        # The discrimination report adds up to K+4 pytest runs per check; only the
        # tests about it (and the canonical honest run) ask for it.
        options.setdefault("discrimination", False)
        base = options.pop("base", self.base)
        opts = CheckOptions(repo=self.path, base=base, head=head or "HEAD", **options)
        verdict, artifacts = run_check(opts)
        payload = json.loads((artifacts.folder / "verdict.json").read_text(encoding="utf-8"))
        return GateRun(verdict, payload, artifacts.folder, base)


@pytest.fixture
def sample(tmp_path: Path, request: pytest.FixtureRequest) -> Sample:
    """The sample with one known-bad fixture (one replay process less per check);
    tests marked `both_known_bad` get both, as `andgate demo`'s sample has."""
    both = request.node.get_closest_marker("both_known_bad") is not None
    repo, base = build_test_sample(
        tmp_path / "sample", known_bad=KNOWN_BAD if both else ONE_KNOWN_BAD
    )
    return Sample(repo, base, tmp_path)


@pytest.fixture(scope="session")
def honest_run(tmp_path_factory: pytest.TempPathFactory) -> GateRun:
    """The canonical allow: the honest fix gated once, with the discrimination
    report, shared by the tests that read different parts of it (read only)."""
    from stories import honest_fix

    tmp = tmp_path_factory.mktemp("honest")
    with isolated(tmp_path_factory):
        repo, base = build_test_sample(tmp / "sample")
        sample = Sample(repo, base, tmp)
        # An explicit budget: what the tests read must not depend on the machine's load.
        return sample.gate(
            sample.change(honest_fix), discrimination=True, discrimination_budget=300.0
        )


@pytest.fixture(scope="session")
def project_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv that sees everything andgate's test environment has (pytest, the
    build backends, andgate itself), where a test installs its project the way CI does
    (`harness.pip_install`) and uninstalls it afterwards: built once per test process."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    purelib = sysconfig.get_paths(vars={"base": str(root), "platbase": str(root)})["purelib"]
    outer = sysconfig.get_paths()["purelib"]
    Path(purelib, "_andgate_tests_outer.pth").write_text(
        f"import site; site.addsitedir({outer!r})\n"
    )
    return root


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., SampleRepo]:
    """An empty repository (optionally with files committed as the first commit)."""
    counter = iter(range(1000))

    def make(files: dict[str, str] | None = None) -> SampleRepo:
        repo = init_repo(tmp_path / f"repo{next(counter)}")
        if files:
            repo.write(files)
            repo.commit("initial")
        return repo

    return make


def tree_fingerprint(root: Path) -> dict[str, str]:
    """sha256 of every file under root except .git internals and artifacts/."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".git/", "artifacts/")) or rel == ".git" or not path.is_file():
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def fingerprint() -> Iterator[Callable[[Path], dict[str, str]]]:
    yield tree_fingerprint


# Fixtures that build repositories and start the gate's pytest processes: a test
# that uses one is an end-to-end test (`-m "not slow"` skips them).
END_TO_END_FIXTURES = frozenset({"sample", "make_repo", "pytester", "project_venv", "honest_run"})


# Module- and session-scoped fixtures that run the gate (or build a virtualenv):
# the tests that share one go first, so that under pytest-xdist they all stay on
# the worker that starts them (work stealing takes tests from the end of a
# worker's queue) and the fixture is built once, not once per worker.
SHARED_FIXTURES = frozenset({"honest_run", "honest", "cold", "known_bad_run", "project_venv"})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "both_known_bad: the `sample` fixture with both known-bad fixtures"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if END_TO_END_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)

    def order(item: pytest.Item) -> int:
        if SHARED_FIXTURES & set(getattr(item, "fixturenames", ())):
            return 0
        return 1 if item.get_closest_marker("slow") else 2

    # Then the other end-to-end tests (a stable sort: each module's tests stay in
    # their order): under pytest-xdist the last tests handed out are then the short
    # unit tests, and no worker idles while another finishes a long gate run.
    items.sort(key=order)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Work stealing instead of xdist's default `load` schedule (only that one).

    `load` hands each worker a fixed first chunk (a quarter of its share) that no
    other worker can take: with the end-to-end tests first, one worker was left
    with a hundred gate runs while the other had run out of tests (about a third
    of the suite's wall time on two cores). Under `worksteal` an idle worker takes
    half of the busiest one's queue, from its end, so the long tests still start
    first and every worker stays busy until the last test."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)
