"""The pytest plugin, through the same bootstrap the gate uses (real subprocesses)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from andgate.plugin.classify import Rules
from andgate.process.requests import RunRequest
from andgate.process.run import run_pytest
from andgate.records import Outcome

# End to end: these start the gate's pytest processes.
pytestmark = pytest.mark.slow

STRICT_INI = "[pytest]\naddopts = --strict-config --strict-markers\nfilterwarnings =\n    error\n"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def run(root: Path, request: RunRequest, tmp_path: Path):
    return run_pytest(request, root, tmp_path / "scratch", timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(
        root,
        {
            "pytest.ini": STRICT_INI,
            "tests/test_oracle.py": "def test_one():\n    assert True\n",
            "tests/test_untrusted.py": "raise RuntimeError('untrusted module imported')\n",
            "tests/props/test_prop.py": (
                "import pytest\n\n@pytest.mark.parametrize('seed', [3, 5])\n"
                "def test_p(seed):\n    assert seed\n\n"
                "@pytest.mark.parametrize('seed', [])\ndef test_empty(seed):\n    pass\n"
            ),
        },
    )
    return root


def test_plugin_is_inert_in_a_users_ordinary_run(project: Path):
    (project / "tests" / "test_untrusted.py").unlink()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-W", "error", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "andgate:" not in proc.stdout
    assert not list(project.rglob("*.results.json"))


def test_oracle_run_never_imports_files_outside_its_class(project: Path, tmp_path: Path):
    rules = Rules(oracle_files=frozenset({"tests/test_oracle.py"}))
    result = run(
        project,
        RunRequest("oracle", "oracle", rules, allow_files=("tests/test_oracle.py",)),
        tmp_path,
    )
    assert result.error is None
    assert result.collection_errors == ()
    assert [i.facts.nodeid for i in result.selected("oracle")] == ["tests/test_oracle.py::test_one"]
    assert result.outcome("tests/test_oracle.py::test_one") is Outcome.PASSED


def test_deny_list_keeps_a_file_out_and_everything_else_is_classified(
    project: Path, tmp_path: Path
):
    rules = Rules(oracle_files=frozenset({"tests/test_oracle.py"}))
    result = run(
        project,
        RunRequest("untrusted", "untrusted", rules, deny_files=("tests/test_untrusted.py",)),
        tmp_path,
    )
    assert result.collection_errors == ()
    by_id = {i.facts.nodeid: i.cls for i in result.items}
    assert by_id["tests/test_oracle.py::test_one"] == "oracle"
    assert by_id["tests/props/test_prop.py::test_p[3]"] == "untrusted"
    assert "tests/test_oracle.py::test_one" not in result.reports  # deselected, not run
    assert result.outcome("tests/props/test_prop.py::test_p[3]") is Outcome.PASSED


def test_seeds_recorded_only_for_items_that_ran(project: Path, tmp_path: Path):
    files = frozenset({"tests/props/test_prop.py"})
    rules = Rules(property_glob_files=files, property_files=files)
    result = run(
        project, RunRequest("property", "property", rules, allow_files=tuple(files)), tmp_path
    )
    assert result.seeds == {
        "tests/props/test_prop.py::test_p[3]": (3,),
        "tests/props/test_prop.py::test_p[5]": (5,),
    }
    empty = [i.facts.nodeid for i in result.items if "test_empty" in i.facts.nodeid]
    assert len(empty) == 1
    assert result.outcome(empty[0]) is Outcome.SKIPPED


def test_node_ids_are_relative_to_the_repository_root(tmp_path: Path):
    root = tmp_path / "proj"
    write(
        root, {"sub/pytest.ini": "[pytest]\n", "sub/tests/test_a.py": "def test_a():\n    pass\n"}
    )
    # rootdir is sub/ (its ini), but the gate's ids are always repository-relative
    rules = Rules(oracle_files=frozenset({"sub/tests/test_a.py"}))
    result = run_pytest(
        RunRequest("oracle", "oracle", rules, allow_files=("sub/tests/test_a.py",)),
        root,
        tmp_path / "scratch",
        timeout=120,
    )
    assert [i.facts.nodeid for i in result.items] == ["sub/tests/test_a.py::test_a"]
    assert result.outcome("sub/tests/test_a.py::test_a") is Outcome.PASSED


def test_outcomes_skip_xfail_xpass_error(tmp_path: Path):
    root = tmp_path / "proj"
    write(
        root,
        {
            "tests/test_mix.py": (
                "import pytest\n\n"
                "def test_skip():\n    pytest.skip('no')\n\n"
                "@pytest.mark.xfail(reason='known')\ndef test_xfail():\n    assert False\n\n"
                "@pytest.mark.xfail(reason='known')\ndef test_xpass():\n    pass\n\n"
                "@pytest.fixture\ndef broken():\n    raise RuntimeError('setup')\n\n"
                "def test_error(broken):\n    pass\n\n"
                "def test_fail():\n    assert 1 == 2\n"
            )
        },
    )
    rules = Rules()
    result = run(root, RunRequest("untrusted", "untrusted", rules), tmp_path)
    outcomes = {i.facts.name: result.outcome(i.facts.nodeid) for i in result.items}
    assert outcomes == {
        "test_skip": Outcome.SKIPPED,
        "test_xfail": Outcome.XFAILED,
        "test_xpass": Outcome.XPASSED,
        "test_error": Outcome.ERROR,
        "test_fail": Outcome.FAILED,
    }
    assert "assert 1 == 2" in result.message("tests/test_mix.py::test_fail")


def test_hypothesis_seed_is_forced_and_recorded(hypothesis_plugin, tmp_path: Path):
    pytest.importorskip("hypothesis")
    root = tmp_path / "proj"
    write(
        root,
        {
            "pytest.ini": STRICT_INI,
            "tests/test_h.py": (
                "from hypothesis import given, strategies as st\n\n"
                "@given(st.integers())\ndef test_h(x):\n    assert isinstance(x, int)\n"
            ),
        },
    )
    files = frozenset({"tests/test_h.py"})
    rules = Rules(property_glob_files=files, property_files=files)
    result = run(
        root,
        RunRequest("property", "property", rules, allow_files=tuple(files), hypothesis_seed=1234),
        tmp_path,
    )
    assert result.error is None, result.error
    assert result.seeds == {"tests/test_h.py::test_h": ("hypothesis:1234",)}
    log = result.log.read_text()
    assert "reproduce with --hypothesis-seed=1234" in log


def test_a_change_cannot_shadow_the_plugin_with_a_top_level_package(project: Path, tmp_path: Path):
    write(
        project,
        {
            "andgate/__init__.py": "raise SystemExit('shadowed andgate imported')\n",
            "andgate/plugin.py": "raise SystemExit('shadowed plugin imported')\n",
        },
    )
    rules = Rules(oracle_files=frozenset({"tests/test_oracle.py"}))
    result = run(
        project,
        RunRequest("oracle", "oracle", rules, allow_files=("tests/test_oracle.py",)),
        tmp_path,
    )
    assert result.error is None, result.error
    assert result.outcome("tests/test_oracle.py::test_one") is Outcome.PASSED


def test_missing_results_is_an_error_never_a_pass(project: Path, tmp_path: Path):
    write(project, {"pytest.ini": "[pytest]\naddopts = -p no:andgate\n"})
    rules = Rules(oracle_files=frozenset({"tests/test_oracle.py"}))
    result = run(
        project,
        RunRequest("oracle", "oracle", rules, allow_files=("tests/test_oracle.py",)),
        tmp_path,
    )
    assert result.error is not None
    assert result.outcome("tests/test_oracle.py::test_one") is Outcome.MISSING


def test_the_plugin_imports_only_pytest_and_the_standard_library():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import andgate.plugin.hooks\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "allowed = set(sys.stdlib_module_names) | {'andgate', 'pytest', '_pytest', 'pluggy',\n"
        "    'iniconfig', 'packaging', 'py', 'exceptiongroup', 'tomli', 'pygments', 'colorama'}\n"
        "print(sorted(m for m in new if m not in allowed and not m.startswith('_')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == "[]"


# -- first_files: a known-bad replay's likely killers first ---------------------------

ORDERED = {
    "tests/oracles/test_a.py": "def test_a1():\n    pass\n\ndef test_a2():\n    pass\n",
    "tests/oracles/test_b.py": "def test_b1():\n    pass\n\ndef test_b2():\n    pass\n",
    "tests/oracles/test_c.py": "def test_c1():\n    pass\n\ndef test_c2():\n    assert KILLED\n",
}
ORDERED_FILES = tuple(ORDERED)


def ordered_project(tmp_path: Path, killed: bool, extra: dict[str, str] | None = None) -> Path:
    """Three oracle files; under the "fixture", the last item of the last one fails."""
    root = tmp_path / "proj"
    files = {**ORDERED, **(extra or {})}
    files["tests/oracles/test_c.py"] = files["tests/oracles/test_c.py"].replace(
        "KILLED", str(not killed)
    )
    write(root, files)
    return root


def ordered_request(**kwargs) -> RunRequest:
    rules = Rules(oracle_files=frozenset(ORDERED_FILES))
    return RunRequest("oracle", "oracle", rules, allow_files=ORDERED_FILES, **kwargs)


def ran(result) -> list[str]:
    """The items that ran, in the order they reported."""
    return [nodeid.rsplit("::", 1)[1] for nodeid in result.reports]


def test_first_files_run_first_after_other_plugins_and_every_item_still_runs(tmp_path):
    # A conftest that reverses collection order: andgate's order comes last.
    reverse = {"conftest.py": "def pytest_collection_modifyitems(items):\n    items.reverse()\n"}
    root = ordered_project(tmp_path, killed=False, extra=reverse)
    first = ("tests/oracles/test_a.py", "tests/oracles/test_c.py")
    result = run(root, ordered_request(first_files=first), tmp_path)
    assert result.error is None, result.error
    assert ran(result) == ["test_c2", "test_c1", "test_a2", "test_a1", "test_b2", "test_b1"]
    assert {result.outcome(n) for n in result.reports} == {Outcome.PASSED}
    assert len(result.selected("oracle")) == 6


def test_exitfirst_stops_at_a_killer_in_the_last_file_once_it_runs_first(tmp_path):
    root = ordered_project(tmp_path, killed=True)
    cold = run(root, ordered_request(exitfirst=True), tmp_path)
    assert ran(cold) == ["test_a1", "test_a2", "test_b1", "test_b2", "test_c1", "test_c2"]
    first = run(
        root, ordered_request(exitfirst=True, first_files=("tests/oracles/test_c.py",)), tmp_path
    )
    assert ran(first) == ["test_c1", "test_c2"]
    assert first.outcome("tests/oracles/test_c.py::test_c2") is Outcome.FAILED
    assert len(first.selected("oracle")) == 6  # every item collected and recorded


@pytest.mark.parametrize("expected", [True, False], ids=["failures-expected", "ordinary"])
def test_a_run_whose_failures_are_expected_formats_them_from_the_frames_alone(tmp_path, expected):
    """A replay reads only which items failed: pytest's long traceback (the test's
    source, parsed) is skipped even when the user's config asks for it, and the
    failure's one-line message is the same. Every other run keeps the user's style."""
    extra = {"pytest.ini": "[pytest]\naddopts = --tb=long\n"}
    root = ordered_project(tmp_path, killed=True, extra=extra)
    result = run(root, ordered_request(failures_expected=expected), tmp_path)
    killer = "tests/oracles/test_c.py::test_c2"
    assert result.outcome(killer) is Outcome.FAILED
    assert result.message(killer) == "assert False"
    log = result.log.read_text(encoding="utf-8")
    native = "Traceback (most recent call last):" in log
    source = ">       assert False" in log  # the long style quotes the failing line
    assert (native, source) == (expected, not expected), log


def test_xdist_workers_that_collect_different_items_run_once_without_distribution(tmp_path):
    """A suite whose parameters differ by worker (or by the second: marshmallow puts
    `datetime.now()` in an id) makes xdist run nothing and report that its workers
    collected different items. The class runs again with `-n 0`, as without `-n`:
    the same items and outcomes a plain run records."""
    pytest.importorskip("xdist")
    by_worker = (
        "import os\n\nimport pytest\n\n\n"
        "@pytest.mark.parametrize('who', [os.environ.get('PYTEST_XDIST_WORKER', 'main')])\n"
        "def test_one(who):\n    assert who\n"
    )
    files = {"pytest.ini": "[pytest]\naddopts = -n 2\n", "tests/oracles/test_w.py": by_worker}
    root = tmp_path / "proj"
    write(root, files)
    rules = Rules(oracle_files=frozenset({"tests/oracles/test_w.py"}))
    request = RunRequest("oracle", "oracle", rules, allow_files=("tests/oracles/test_w.py",))
    result = run(root, request, tmp_path)
    assert result.error is None, result.error
    assert result.collection_errors == ()
    assert {result.outcome(n) for n in result.reports} == {Outcome.PASSED}
    (only,) = result.reports  # one process collected, once
    assert only.startswith("tests/oracles/test_w.py::test_one[")


@pytest.mark.parametrize("killed", [True, False], ids=["killed", "survives"])
def test_first_files_under_xdist_in_the_users_config(tmp_path, killed):
    pytest.importorskip("xdist")
    root = ordered_project(tmp_path, killed, extra={"pytest.ini": "[pytest]\naddopts = -n 2\n"})
    request = ordered_request(exitfirst=True, first_files=("tests/oracles/test_c.py",))
    result = run(root, request, tmp_path)
    assert result.error is None, result.error
    assert result.collection_errors == ()
    assert len(result.selected("oracle")) == 6
    outcome = result.outcome("tests/oracles/test_c.py::test_c2")
    if killed:
        assert outcome is Outcome.FAILED
    else:
        assert sorted(ran(result)) == [
            "test_a1",
            "test_a2",
            "test_b1",
            "test_b2",
            "test_c1",
            "test_c2",
        ]
        assert {result.outcome(n) for n in result.reports} == {Outcome.PASSED}


HYPOTHESIS_PROBE = (
    "import sys\nfrom pathlib import Path\n\n\n"
    "def pytest_unconfigure(config):\n"
    "    plugin = sys.modules.get('_hypothesis_pytestplugin')\n"
    "    registered = plugin is not None and config.pluginmanager.is_registered(plugin)\n"
    "    state = f\"{'hypothesis' in sys.modules} {registered}\"\n"
    "    (Path(__file__).parent / 'probe.txt').write_text(state)\n"
)
USES_HYPOTHESIS = (
    "from hypothesis import given, strategies as st\n\n\n"
    "@given(st.integers())\ndef test_one(n):\n    assert n == n\n"
)


@pytest.mark.parametrize(
    ("test_file", "ini", "expected"),
    [
        ("def test_one():\n    assert True\n", "", "False False"),
        (USES_HYPOTHESIS, "", "True True"),
        # The controller may import Hypothesis itself (xdist's report handling).
        ("def test_one():\n    assert True\n", "[pytest]\naddopts = -n 2\n", "* True"),
    ],
    ids=["not-imported", "imported", "xdist-controller"],
)
def test_hypothesis_summary_is_skipped_only_where_it_has_nothing_to_say(
    tmp_path, test_file, ini, expected, hypothesis_plugin
):
    """Hypothesis's terminal summary imports Hypothesis (0.25 s a process): skipped
    where no test imported it; kept where one did, or where xdist workers ran them."""
    pytest.importorskip("hypothesis")
    if ini:
        pytest.importorskip("xdist")
    root = tmp_path / "proj"
    files = {"tests/conftest.py": HYPOTHESIS_PROBE, "tests/test_o.py": test_file}
    write(root, {**files, **({"pytest.ini": ini} if ini else {})})
    rules = Rules(oracle_files=frozenset({"tests/test_o.py"}))
    result = run(root, RunRequest("oracle", "oracle", rules), tmp_path)
    assert result.error is None, result.error
    assert result.outcome("tests/test_o.py::test_one") is Outcome.PASSED
    imported, registered = (root / "tests" / "probe.txt").read_text().split()
    assert f"{imported if expected[0] != '*' else '*'} {registered}" == expected
