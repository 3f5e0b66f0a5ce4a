"""No plugin from head in trusted processes (issue 28): the project's `pytest11` entry
points load in the oracle, property and replay processes only when base declares them,
and pytest configuration from the environment reaches no run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from andgate.plugin.classify import Rules
from andgate.process import argv
from andgate.process.argv import pytest_argv
from andgate.process.forkclient import stop_fork_server
from andgate.process.requests import RunEnvironment, RunRequest
from andgate.process.run import run_pytest
from andgate.records import Outcome, Role
from andgate.trust.project_plugins import blocked_plugins, declared_plugins, installed_plugins

PYPROJECT = b"""
[project]
name = "mylib"

[project.entry-points.pytest11]
mylib = "mylib.plugin"

[tool.poetry.plugins."pytest11"]
"poetry-style" = "mylib.other:hooks"
"""
SETUP_CFG = b"""
[metadata]
name = mylib

[options.entry_points]
pytest11 =
    mylib = mylib.plugin
    extra = mylib.extra : hooks [speedups]
"""
SETUP_PY = b"""
from setuptools import setup
setup(name="mylib", entry_points={"pytest11": ["mylib = mylib.plugin", 'two=mylib.two:x']})
"""


@pytest.mark.parametrize(
    ("path", "data", "expected"),
    [
        (
            "pyproject.toml",
            PYPROJECT,
            {("mylib", "mylib.plugin"), ("poetry-style", "mylib.other:hooks")},
        ),
        ("setup.cfg", SETUP_CFG, {("mylib", "mylib.plugin"), ("extra", "mylib.extra:hooks")}),
        ("setup.py", SETUP_PY, {("mylib", "mylib.plugin"), ("two", "mylib.two:x")}),
        ("pyproject.toml", b"[project]\nname = 'x'\n", set()),
        ("pyproject.toml", b"pytest11 = [not toml", set()),
        ("setup.py", None, set()),
    ],
)
def test_the_declarations_of_each_build_file_are_read(
    path: str, data: bytes | None, expected: set[tuple[str, str]]
) -> None:
    assert declared_plugins({path: data}) == expected


def test_a_plugin_base_does_not_declare_or_points_elsewhere_is_blocked() -> None:
    declared = declared_plugins({"pyproject.toml": PYPROJECT})
    installed = {"mylib": "mylib.plugin", "cheat": "mylib.core", "poetry-style": "mylib.cheat"}
    assert blocked_plugins(installed, declared) == ("cheat", "poetry-style")


def test_only_the_project_distributions_entry_points_are_read() -> None:
    assert installed_plugins(["no-such-distribution-here"]) == {}
    assert "andgate" in installed_plugins(["andgate"])  # andgate's own plugin, installed


def argv_for(role: Role) -> list[str]:
    environment = RunEnvironment(head_only_plugins=("cheat",))
    request = RunRequest("run", role, Rules(), environment=environment)
    return pytest_argv(request, Path("spec.json"), None, Path("wt"), Path("wt/pytest.ini"))


@pytest.mark.parametrize("role", [Role.ORACLE, Role.PROPERTY])
def test_trusted_processes_block_head_only_plugins(role: Role) -> None:
    assert "no:cheat" in argv_for(role)


@pytest.mark.parametrize("role", [Role.UNTRUSTED, Role.FROZEN_FLAKE, Role.COLLECT])
def test_head_processes_load_them(role: Role) -> None:
    assert "no:cheat" not in argv_for(role)


def test_pytest_configuration_from_the_environment_reaches_no_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p mylib.cheat")
    monkeypatch.setenv("PYTEST_PLUGINS", "mylib.cheat")
    env = argv.test_environment()
    assert "PYTEST_ADDOPTS" not in env
    assert "PYTEST_PLUGINS" not in env


CHEAT = """\
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
"""


def installed_cheat(site: Path) -> None:
    """A distribution named `cheat` whose pytest11 entry point passes every report."""
    (site / "cheatplugin.py").parent.mkdir(parents=True, exist_ok=True)
    (site / "cheatplugin.py").write_text(CHEAT, encoding="utf-8")
    info = site / "cheat-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cheat\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\ncheat = cheatplugin\n")


@pytest.mark.slow
@pytest.mark.parametrize("blocked", [True, False])
def test_a_head_only_plugin_cannot_pass_a_failing_oracle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blocked: bool
) -> None:
    site = tmp_path / "site"
    installed_cheat(site)
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("ANDGATE_FORK_SERVER", "0")
    assert installed_plugins(["cheat"]) == {}  # not on this process's path: given below
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "tests/test_oracle.py").write_text("def test_it():\n    assert 1 == 2\n")
    name = "tests/test_oracle.py"
    environment = RunEnvironment(head_only_plugins=("cheat",) if blocked else ())
    rules = Rules(oracle_files=frozenset({name}))
    request = RunRequest("oracle", Role.ORACLE, rules, (name,), environment=environment)
    stop_fork_server()
    result = run_pytest(request, root, tmp_path / "scratch", 120)
    assert result.error is None, result.error
    expected = Outcome.FAILED if blocked else Outcome.PASSED
    assert result.outcome(f"{name}::test_it") is expected, sys.executable


class BaseFiles:
    """The one git call `head_only_plugins` makes: build files at a commit."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.asked: set[str] = set()

    def read_blob(self, commit: str, path: str) -> bytes | None:
        self.asked.add(commit)
        return self.files.get(path)


def test_the_plan_blocks_what_the_declaring_commit_does_not_declare() -> None:
    from andgate.check.plan.phase import head_only_plugins
    from andgate.process.installed import InstalledProject

    project = InstalledProject(distributions=("andgate",))  # installed here, with a plugin
    bare = BaseFiles({})
    assert head_only_plugins(bare, "base-sha", project) == ("andgate",)  # type: ignore[arg-type]
    assert bare.asked == {"base-sha"}
    declares = BaseFiles(
        {"pyproject.toml": b'[x.entry-points.pytest11]\nandgate = "andgate.plugin.hooks"\n'}
    )
    assert head_only_plugins(declares, "base-sha", project) == ()  # type: ignore[arg-type]
    assert head_only_plugins(bare, "base-sha", InstalledProject()) == ()  # type: ignore[arg-type]


# -- what the project's installed distribution puts into the environment ----------------


def installed_dist(site: Path, files: dict[str, str]) -> None:
    """A distribution `evdist` whose RECORD lists `files` (written into `site`)."""
    info = site / "evdist-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evdist\nVersion: 1.0\n")
    for rel, text in files.items():
        (site / rel).write_text(text, encoding="utf-8")
    record = [f"{rel},," for rel in files] + ["evdist-1.0.dist-info/METADATA,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n")


def test_startup_hooks_beyond_the_editable_hook_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from andgate.trust.project_plugins import startup_hooks

    installed_dist(
        tmp_path,
        {
            "__editable__.evdist-1.0.pth": (
                "import __editable___evdist_1_0_finder; __editable___evdist_1_0_finder.install()\n"
            ),
            "_evdist.pth": "/repo/src\n",
            "evdist-extra.pth": "import os; os.environ['API_TOKEN'] = 'fake'\n",
            "sitecustomize.py": "import os\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = startup_hooks(["evdist"])
    assert [f.split(" (", 1)[0] for f in found] == [
        "evdist: evdist-extra.pth",
        "evdist: sitecustomize.py",
    ]


def test_head_only_plugins_and_startup_hooks_are_production_suspicious() -> None:
    from andgate.check.production.phase import ScanResult, with_installed_hooks

    environment = RunEnvironment(head_only_plugins=("cheat",), startup_hooks=("evdist: x.pth",))
    found = with_installed_hooks(ScanResult(suspicious=("scan",)), environment).suspicious
    assert found[0] == "scan"
    assert "pytest plugin 'cheat'" in found[1] and found[2].startswith("evdist: x.pth, installed")
    assert with_installed_hooks(ScanResult(), RunEnvironment()) == ScanResult()


CFG_ELSEWHERE = b"[tool]\npytest11 =\n    cheat = mylib.core\n"


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("pyproject.toml", b"[project]\nname = 'x'\n", PYPROJECT),
        ("setup.cfg", b"[metadata]\nname = mylib\n", SETUP_CFG),
        ("setup.cfg", b"[metadata]\nname = mylib\n", CFG_ELSEWHERE),
        ("setup.py", b"from setuptools import setup\nsetup()\n", SETUP_PY),
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace(b"mylib.plugin", b"mylib.cheat")),
    ],
)
def test_one_reader_decides_what_a_declaration_is(path: str, old: bytes, new: bytes) -> None:
    """What a trusted run may load and what counts as a trust-root change are read
    the same way: declarations that differ are always a trust-root change, and a
    `pytest11` key setuptools never reads (outside `[options.entry_points]`) is neither."""
    from andgate.trust.plugin_declarations import change

    differ = declared_plugins({path: old}) != declared_plugins({path: new})
    assert not differ or change(path, old, new) is not None
    if new == CFG_ELSEWHERE:
        assert declared_plugins({path: new}) == set() and change(path, old, new) is None


def test_only_the_group_installed_metadata_reads_is_a_declaration() -> None:
    """importlib.metadata reads the group `pytest11` exactly: another spelling installs
    nothing, so it declares nothing, yet editing it is still a trust-root change."""
    from andgate.trust.plugin_declarations import change

    odd = b'[project.entry-points.PYTEST11]\ncheat = "mylib.core"\n'
    assert declared_plugins({"pyproject.toml": odd}) == set()
    assert change("pyproject.toml", b"[project]\nname = 'x'\n", odd) is not None


@pytest.mark.parametrize(
    "new",
    [
        b"[options]\nentry_points = file: a  b.cfg\n",
        b"[options]\nentry_points = file:\n    a.cfg\n",
    ],
)
def test_where_setup_cfg_moves_its_entry_points_is_read_exactly(new: bytes) -> None:
    """`entry_points = file: ...` names another file: a different name is a change."""
    from andgate.trust.plugin_declarations import change

    assert change("setup.cfg", b"[options]\nentry_points = file: a b.cfg\n", new) is not None
