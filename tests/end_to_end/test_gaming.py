"""Gaming: each cheat an agent can try at the test level, tried and blocked.

One test per row of docs/threat-model.md. Every change here carries a real
production bug (`mean` or `clamp` broken) next to the cheat, so the question is
always the one that matters: does the cheat turn a failing oracle into an
allow? It must not: each test asserts the block, the reason the defence gives,
and that the broken oracle item still fails (the cheat did not reach it).
Rows already pinned by tests/end_to_end/test_check.py are named in the threat model.
"""

from __future__ import annotations

import pytest

from andgate.commands.sample import SampleRepo, lock_text
from harness import INVARIANT

MEAN = "tests/oracles/test_math_oracle.py::test_mean"
CLAMP = "tests/oracles/test_math_oracle.py::test_clamp_cases"


def break_mean(repo: SampleRepo) -> None:
    """The agent's production bug: mean([1, 2, 3, 6]) is no longer 3."""
    repo.edit("minilib/mathx.py", "return sum(xs) / len(xs)", "return sum(xs) / (len(xs) + 1)")


def break_clamp(repo: SampleRepo) -> None:
    repo.edit("minilib/mathx.py", "max(lo, min(x, hi))", "min(x, hi)")


def still_fails(run, nodeid: str = MEAN) -> bool:
    """The broken oracle item was run from base's test side and failed."""
    return any(d.startswith(nodeid) and " failed" in d for d in run.details("ORACLE_FAILED"))


# -- oracle files ---------------------------------------------------------------------------


def test_renaming_an_oracle_out_of_the_oracle_globs_still_runs_base_copy(sample):
    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.run("mv", "tests/oracles/test_math_oracle.py", "tests/test_math_moved.py")
        repo.edit("tests/test_math_moved.py", '/ "fixtures" /', '/ "oracles" / "fixtures" /')

    run = sample.gate(sample.change(cheat))
    assert "ORACLE_AUTHORSHIP" in run.codes
    assert still_fails(run)
    # The moved copy is just another untrusted test now; it fails there too.
    assert any("tests/test_math_moved.py::test_mean" in d for d in run.details("UNTRUSTED_FAILED"))


def test_skipping_an_oracle_item_in_the_oracle_file(sample):
    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.edit(
            "tests/oracles/test_math_oracle.py",
            "def test_mean():",
            '@pytest.mark.skip(reason="flaky")\ndef test_mean():',
        )

    run = sample.gate(sample.change(cheat))
    assert "ORACLE_AUTHORSHIP" in run.codes
    assert still_fails(run)


def test_skipping_oracles_from_production_code_is_missing_on_head(sample):
    """Not test-level at all, and not sandboxed: but a skip is never a pass, and
    the oracle set is pinned by base's collection."""
    skip = (
        "import sys\n\nif 'pytest' in sys.modules:\n    import pytest\n\n"
        "    pytest.skip('not under test', allow_module_level=True)\n\n"
    )

    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.edit("minilib/mathx.py", '"""Number helpers."""\n', f'"""Number helpers."""\n{skip}')

    run = sample.gate(sample.change(cheat))
    assert f"{MEAN} missing on head" in run.details("ORACLE_FAILED")
    assert run.details("ORACLE_NEUTRALIZED") == [
        "kb_chunk_drops_tail left every oracle item passing"
    ]
    assert "ORACLE_AUTHORSHIP" not in run.codes


def test_deleting_an_oracle_file_or_adding_one_next_to_production_code(sample):
    """The deleted oracle file still runs from base and is oracle authorship; the new
    one is the change's own test (untrusted) and never runs as an oracle."""
    agent_oracle = (
        "from minilib import mean\n\n\ndef test_mean_runs():\n    assert mean([2]) >= 0\n"
    )

    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.delete("tests/oracles/test_math_oracle.py")
        repo.write({"tests/oracles/test_agent_oracle.py": agent_oracle})

    run = sample.gate(sample.change(cheat))
    assert run.decision == "block"
    assert run.details("ORACLE_AUTHORSHIP") == [
        "tests/oracles/test_math_oracle.py changed without owner approval "
        "(mixed change: production code and trust-root files together)"
    ]
    assert "mixed change" in run.artifact("summary.md")
    assert still_fails(run)
    # The new file never ran as an oracle: the oracle count is base's.
    assert run.payload["counts"]["oracle"] == 8
    items = {i["nodeid"]: i for i in run.artifact("trust_inventory.json")["items"]}
    added = items["tests/oracles/test_agent_oracle.py::test_mean_runs"]
    assert (added["class"], added["outcome"]) == ("untrusted", "passed")


# -- conftest.py and pytest configuration ------------------------------------------------------

CONFTESTS = {
    "deselects": (
        "def pytest_collection_modifyitems(config, items):\n"
        "    items[:] = [i for i in items if 'mean' not in i.name]\n"
    ),
    "skips": (
        "import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n"
        "    for item in items:\n        item.add_marker(pytest.mark.skip(reason='slow'))\n"
    ),
    "rewrites outcomes": (
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    report = outcome.get_result()\n"
        "    report.outcome = 'passed'\n    report.longrepr = None\n"
    ),
}


@pytest.mark.parametrize(
    "planted",
    [
        # every hook at once, one conftest.py on each level the oracle process would load
        {
            "conftest.py": CONFTESTS["deselects"],
            "tests/conftest.py": CONFTESTS["skips"],
            "tests/oracles/conftest.py": CONFTESTS["rewrites outcomes"],
        },
        {"conftest.py": CONFTESTS["rewrites outcomes"]},
    ],
    ids=["on-each-level", "root-rewrites-outcomes"],
)
def test_conftest_that_hides_oracle_failures_never_reaches_the_oracle_process(sample, planted):
    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.write(planted)

    run = sample.gate(sample.change(cheat))
    # Inside the oracle globs a conftest.py is an oracle-class file.
    for path in planted:
        code = "ORACLE_AUTHORSHIP" if path.startswith("tests/oracles/") else "TRUST_ROOT_CHANGED"
        assert (
            f"{path} changed without owner approval "
            "(mixed change: production code and trust-root files together)"
        ) in run.details(code)
    assert still_fails(run)


CONFIGS = {
    "pytest.ini addopts": {
        "pytest.ini": "[pytest]\ntestpaths = tests\naddopts = -p no:andgate -k 'not mean'\n"
    },
    "pyproject addopts": {
        "pyproject.toml": (
            '[project]\nname = "minilib"\n\n[tool.pytest.ini_options]\n'
            "testpaths = ['tests']\naddopts = \"-p no:andgate -k 'not mean'\"\n"
        ),
    },
}


@pytest.mark.parametrize("how", sorted(CONFIGS))
def test_pytest_config_addopts_never_reach_the_oracle_process(sample, how):
    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        if how == "pyproject addopts":
            repo.delete("pytest.ini")  # so that pytest reads pyproject.toml
        repo.write(CONFIGS[how])

    run = sample.gate(sample.change(cheat))
    changed = sorted(d.split(" ", 1)[0] for d in run.details("TRUST_ROOT_CHANGED"))
    assert changed == (
        ["pyproject.toml", "pytest.ini"] if how == "pyproject addopts" else ["pytest.ini"]
    )
    assert still_fails(run)
    if "no:andgate" in str(CONFIGS[how]):
        # head's own processes ran without the plugin: they recorded nothing
        assert any("untrusted" in d for d in run.details("GATE_ERROR"))


SETUP_CFG = "[metadata]\nname = minilib\nversion = 1.0\n\n[tool:pytest]\ntestpaths = tests\n"
AGENT_PLUGIN = CONFTESTS["rewrites outcomes"]


def config_in_setup_cfg(sample) -> None:
    """A new base whose pytest configuration lives in setup.cfg's [tool:pytest]."""
    sample.repo.run("checkout", "-q", "--detach", sample.base)
    sample.repo.delete("pytest.ini")
    sample.repo.write({"setup.cfg": SETUP_CFG})
    sample.base = sample.repo.commit("pytest configuration moves to setup.cfg")


@pytest.mark.slow
@pytest.mark.parametrize("sep", ["\r", "\f"], ids=["CR", "FF"])
def test_addopts_hidden_behind_a_line_separator_in_setup_cfg_never_reach_the_oracle(sample, sep):
    """configparser reads `# note<CR>addopts = ...` as one comment line; pytest
    (iniconfig) reads a comment and then a setting that loads the agent's plugin."""
    config_in_setup_cfg(sample)

    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.write({"agentplugin.py": AGENT_PLUGIN})
        cfg = SETUP_CFG.replace("version = 1.0", "version = 1.1")
        repo.write({"setup.cfg": f"{cfg}# keep the defaults{sep}addopts = -p agentplugin\n"})

    run = sample.gate(sample.change(cheat))
    assert run.decision == "block"
    assert run.details("TRUST_ROOT_CHANGED") == [
        "setup.cfg changed without owner approval "
        "(mixed change: production code and trust-root files together): "
        "pytest settings differ (addopts)"
    ]
    assert still_fails(run)


# -- freezes, known-bad fixtures, locks, manifest ----------------------------------------------

AGENT_FAILING_TEST = "def test_new_feature():\n    assert 1 + 1 == 3\n"
AGENT_FREEZE = """\
  - id: "tests/test_agent.py::test_new_feature"
    reason: "flaky on CI"
    first_seen: "2026-11-24"
    expires: "2026-12-01"
    owner: "coding-agent"
"""


def test_agent_freeze_entry_for_its_failing_test_is_ignored(sample):
    def cheat(repo: SampleRepo) -> None:
        repo.write({"tests/test_agent.py": AGENT_FAILING_TEST})
        freeze = (repo.path / "tests/flakes/freeze.yaml").read_text() + AGENT_FREEZE
        repo.write({"tests/flakes/freeze.yaml": freeze})

    run = sample.gate(sample.change(cheat))
    assert run.details("TRUST_ROOT_CHANGED")[0].startswith("tests/flakes/freeze.yaml changed")
    # base's freeze file decides: the agent's test is untrusted, and it fails
    assert any(
        d.startswith("tests/test_agent.py::test_new_feature failed")
        for d in run.details("UNTRUSTED_FAILED")
    )
    inventory = run.artifact("trust_inventory.json")["items"]
    [item] = [i for i in inventory if i["nodeid"] == "tests/test_agent.py::test_new_feature"]
    assert item["class"] == "untrusted"


@pytest.mark.both_known_bad
@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_known_bad_fixture_deleted_or_replaced_by_the_agent_is_still_replayed(sample, how):
    """The agent's rewrite of clamp makes kb_clamp_ignores_lo stale; hiding
    that by deleting or replacing the fixture does not work."""
    fixture = "tests/oracles/known_bad/kb_clamp_ignores_lo.patch"

    def cheat(repo: SampleRepo) -> None:
        harmless = repo.diff_of([("minilib/mathx.py", '"""Number helpers."""', '"""Numbers."""')])
        repo.edit("minilib/mathx.py", "max(lo, min(x, hi))", "sorted((lo, x, hi))[1]")
        if how == "deleted":
            repo.delete(fixture)
        else:
            repo.write({fixture: harmless})

    run = sample.gate(sample.change(cheat))
    assert run.details("ORACLE_AUTHORSHIP")[0].startswith(f"{fixture} changed")
    assert [d.split(" ", 1)[0] for d in run.details("KNOWN_BAD_STALE")] == ["kb_clamp_ignores_lo"]
    replayed = [f["name"] for f in run.artifact("known_bad.json")["fixtures"]]
    assert replayed == ["kb_chunk_drops_tail", "kb_clamp_ignores_lo"]


def test_rewriting_fixture_bytes_and_the_lock_together(sample):
    def cheat(repo: SampleRepo) -> None:
        break_clamp(repo)
        repo.edit("tests/oracles/fixtures/cases.json", "[-1, 0, 10, 0]", "[-1, 0, 10, -1]")
        repo.write({"tests/oracles/locks.sha256": lock_text(repo.path / "tests/oracles/fixtures")})

    run = sample.gate(sample.change(cheat))
    authored = sorted(d.split(" ", 1)[0] for d in run.details("ORACLE_AUTHORSHIP"))
    assert authored == ["tests/oracles/fixtures/cases.json", "tests/oracles/locks.sha256"]
    # base's lock judges head's bytes ...
    assert run.details("LOCK_MISMATCH") == [
        "tests/oracles/fixtures/cases.json: sha256 differs from the lock"
    ]
    # ... and the oracle reads base's bytes, so the broken clamp still fails
    assert still_fails(run, f"{CLAMP}[-1-0-10-0]")


MANIFEST_EDITS = {
    "narrows the oracle globs": (
        'globs: ["tests/oracles/**/*.py"]',
        'globs: ["tests/oracles/test_text_oracle.py"]',
    ),
    "renames a class": ("  oracle:\n", "  oracles:\n"),
    "turns fail_closed_untrusted off": (
        "fail_closed_untrusted: true",
        "fail_closed_untrusted: false",
    ),
}


def test_manifest_edits_are_ignored_in_favour_of_base(sample):
    """Each edit would let the change through if head's manifest were read."""

    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.write({"tests/test_agent.py": AGENT_FAILING_TEST})
        for edit in MANIFEST_EDITS.values():
            repo.edit("tests/trust_manifest.yaml", *edit)

    run = sample.gate(sample.change(cheat))
    assert run.details("TRUST_ROOT_CHANGED")[0].startswith("tests/trust_manifest.yaml changed")
    assert "MANIFEST_INVALID" not in run.codes  # head's manifest is never read
    assert still_fails(run)
    assert any(d.startswith("tests/test_agent.py") for d in run.details("UNTRUSTED_FAILED"))


# -- untrusted code reaching for the trusted processes --------------------------------------------

MONKEYPATCHER = '''\
"""At import time, tries to turn every report into a pass and every item untrusted."""

import _pytest.reports

import andgate.plugin.hooks
from andgate.records import TrustClass

_init = _pytest.reports.TestReport.__init__


def _passing(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.outcome = "passed"
    self.longrepr = None


_pytest.reports.TestReport.__init__ = _passing
andgate.plugin.hooks.classify_item = lambda facts, rules: (TrustClass.UNTRUSTED, "forged")


def test_agent():
    assert True
'''


def test_untrusted_test_monkeypatching_pytest_or_the_plugin_stays_in_its_process(sample):
    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.write({"tests/test_agent_patch.py": MONKEYPATCHER})

    run = sample.gate(sample.change(cheat))
    assert still_fails(run)
    assert "ORACLE_AUTHORSHIP" not in run.codes and "TRUST_ROOT_CHANGED" not in run.codes


RESULTS_FORGER = '''\
"""Rewrites every result, JUnit and log file the gate keeps next to its spec."""

import json
import sys
from pathlib import Path

JUNIT = '<?xml version="1.0"?><testsuites><testsuite name="forged" tests="0"/></testsuites>'


def _scratch():
    """The gate's scratch folder: two levels above the worktree this runs in."""
    scratch = Path.cwd().resolve().parents[1]
    assert (scratch / "worktrees").is_dir(), "not run by andgate"
    return scratch


def _all_passed(path):
    data = json.loads(path.read_text())
    for phases in data.get("reports", {}).values():
        phases.update(setup="passed", call="passed", teardown="passed")
        phases.pop("message", None)
    path.write_text(json.dumps(data))


def test_forge():
    scratch = _scratch()
    for path in scratch.glob("*.results.json"):
        _all_passed(path)
    for path in scratch.glob("*.xml"):
        path.write_text(JUNIT)
    for path in scratch.glob("*.log"):
        path.write_text("all passed")
    assert list(scratch.glob("oracle.*")), "nothing to forge?"
'''


def test_untrusted_test_rewriting_other_classes_results_changes_nothing(sample):
    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.write({"tests/test_agent_forge.py": RESULTS_FORGER})

    run = sample.gate(sample.change(cheat))
    assert still_fails(run)
    assert "tests/test_agent_forge.py::test_forge" not in str(run.details("UNTRUSTED_FAILED"))
    # The artifacts hold what the oracle and property processes wrote, read
    # before any untrusted code ran, not the forgeries.
    oracle_xml = run.artifact("oracle.xml")
    assert 'name="test_mean"' in oracle_xml and "<failure" in oracle_xml
    assert 'name="test_chunk_roundtrip[1]"' in run.artifact("property.xml")
    assert "all passed" not in (run.artifacts / "logs" / "oracle.log").read_text()


# -- property files -------------------------------------------------------------------------------


def copycat_property(body: str) -> str:
    return f"import pytest\n\nfrom minilib import chunk\n\n# INVARIANT: {INVARIANT}\n{body}"


COPYCATS = {
    "empty seeds": (
        "SEEDS = []\n\n\n@pytest.mark.parametrize('seed', SEEDS)\n"
        "def test_chunk_anything(seed):\n    assert chunk([1], 1)\n"
    ),
    "no seed parameter": "\n\ndef test_chunk_anything():\n    assert chunk([1], 1)\n",
}


def test_property_files_copying_an_accepted_invariant_but_running_no_seed(sample):
    paths = {
        how: f"tests/properties/test_copycat_{n}_property.py" for n, how in enumerate(COPYCATS)
    }
    head = sample.change(
        lambda r: r.write({paths[how]: copycat_property(body) for how, body in COPYCATS.items()})
    )
    run = sample.gate(head)
    assert sorted(run.details("NO_SEEDS")) == sorted(
        f"{path} ran no item with a recorded seed" for path in paths.values()
    )
    # An empty parametrisation is one skipped item, and a skip is not a pass.
    assert set(run.codes) == {"NO_SEEDS", "PROPERTY_FAILED"}
    assert all(d.startswith(paths["empty seeds"]) for d in run.details("PROPERTY_FAILED"))


def test_property_lookalike_outside_the_property_globs_counts_for_nothing(sample):
    """The real property loses its seeds; a copy of it outside the property globs,
    seeds and all, does not stand in for it."""
    lookalike = "tests/test_chunk_property.py"

    def cheat(repo: SampleRepo) -> None:
        source = (repo.path / "tests/properties/test_chunk_property.py").read_text()
        repo.write({lookalike: source})
        repo.edit("tests/properties/test_chunk_property.py", "SEEDS = [1, 2, 3]", "SEEDS = []")

    run = sample.gate(sample.change(cheat))
    assert "NO_SEEDS" in run.codes
    assert not {"ORACLE_AUTHORSHIP", "TRUST_ROOT_CHANGED"} & set(run.codes)
    seeds = run.artifact("property_seeds.json")
    assert lookalike not in seeds["files"]
    classes = {
        i["class"] for i in run.artifact("trust_inventory.json")["items"] if i["file"] == lookalike
    }
    assert classes == {"untrusted"}


PROPERTY_FORGER = f'''\
"""A property file (accepted invariant, seeds) whose import rewrites the oracle's results."""

import json
import os
import sys
import time
from pathlib import Path

import pytest

# INVARIANT: {INVARIANT}


def _scratch():
    """The gate's scratch folder: two levels above the worktree this runs in."""
    scratch = Path.cwd().resolve().parents[1]
    assert (scratch / "worktrees").is_dir(), "not run by andgate"
    return scratch


def _forge_once_failed(target):
    """Wait for the oracle's results, then make every item pass."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            data = json.loads(target.read_text())
        except (OSError, ValueError):
            os.sched_yield()
            continue
        if any("failed" in phases.values() for phases in data["reports"].values()):
            for phases in data["reports"].values():
                phases.update(setup="passed", call="passed", teardown="passed")
                phases.pop("message", None)
            tmp = target.with_name("forged.tmp")
            tmp.write_text(json.dumps(data))
            os.replace(tmp, target)
            return


_forge_once_failed(_scratch() / "oracle.results.json")


@pytest.mark.parametrize("seed", [1])
def test_forged(seed):
    assert True
'''


def test_property_file_rewriting_oracle_results_runs_after_they_were_read(sample):
    """Property files are agent-written: they run only once every oracle-side
    result is in memory (before, this change was an allow)."""

    def cheat(repo: SampleRepo) -> None:
        break_mean(repo)
        repo.write({"tests/properties/test_forger_property.py": PROPERTY_FORGER})

    run = sample.gate(sample.change(cheat))
    assert run.codes == ["ORACLE_FAILED"]
    assert still_fails(run)
    seeds = run.artifact("property_seeds.json")["files"]
    assert seeds["tests/properties/test_forger_property.py"] == {
        "tests/properties/test_forger_property.py::test_forged[1]": [1]
    }
    assert run.payload["bits"]["oracle_ok"] is False
