"""The authorship sort, one rule per test (pure: no git, no pytest process)."""

from __future__ import annotations

import pytest

from andgate.git import Change
from andgate.trust import paths
from andgate.trust.authorship import (
    is_ci_definition,
    is_oracle_side,
    is_trust_root,
    oracle_file_rule,
    sort_changes,
)
from andgate.trust.manifest import parse_manifest
from harness import MANIFEST

M = parse_manifest(MANIFEST, "tests/trust_manifest.yaml")
WITH_PRODUCTION_GLOBS = parse_manifest(
    MANIFEST + 'production_globs: ["lib/**"]\n', "tests/trust_manifest.yaml"
)
TESTS_FOLDER = paths.TestSide(folders=("checks",))


def never(path: str) -> bool:
    return False


def modified(*paths: str) -> list[Change]:
    return [Change("M", p, p, "100644", "100644") for p in paths]


def sort(*paths: str, manifest=M, test_side=TESTS_FOLDER, differs=never, approved=()):
    return sort_changes(
        modified(*paths),
        manifest,
        is_oracle_file=lambda p: p.startswith("tests/oracles/test_"),
        config_differs=differs,
        approved_by=approved,
        test_side=test_side,
    )


def test_each_oracle_side_kind_is_oracle_side():
    for path in (
        "tests/oracles/test_x.py",
        "tests/oracles/fixtures/a.json",
        "tests/oracles/known_bad/kb.patch",
        "tests/oracles/locks.sha256",
    ):
        assert is_oracle_side(path, M, lambda p: p == "tests/oracles/test_x.py"), path


def test_a_production_file_is_not_oracle_side():
    assert not is_oracle_side("lib/x.py", M, never)


def test_the_manifest_freeze_file_invariants_and_any_conftest_are_trust_roots():
    for path in (
        "tests/trust_manifest.yaml",
        "tests/flakes/freeze.yaml",
        "tests/properties/INVARIANTS.md",
        "deep/pkg/conftest.py",
    ):
        assert is_trust_root(path, M, never), path


def test_a_pytest_config_file_is_a_trust_root_only_when_pytest_would_read_it_differently():
    assert is_trust_root("pytest.ini", M, lambda p: True)
    assert not is_trust_root("pytest.ini", M, never)
    assert not is_trust_root("lib/x.py", M, lambda p: True)


def test_without_production_globs_a_test_side_path_is_a_test_and_the_rest_production():
    facts = sort("checks/test_a.py", "lib/x.py")
    assert (facts.test_paths, facts.production_paths) == (("checks/test_a.py",), ("lib/x.py",))


def test_with_production_globs_a_path_matching_none_is_neither_production_nor_test():
    facts = sort("README.md", manifest=WITH_PRODUCTION_GLOBS)
    assert (facts.test_paths, facts.production_paths) == ((), ())


def test_with_production_globs_a_test_side_path_is_a_test():
    facts = sort("checks/test_a.py", "lib/x.py", manifest=WITH_PRODUCTION_GLOBS)
    assert (facts.test_paths, facts.production_paths) == (("checks/test_a.py",), ("lib/x.py",))


def test_oracle_and_trust_root_paths_are_sorted_and_kept_apart():
    facts = sort("tests/oracles/test_b.py", "conftest.py", "tests/oracles/test_a.py")
    assert facts.oracle_paths == ("tests/oracles/test_a.py", "tests/oracles/test_b.py")
    assert facts.trust_root_paths == ("conftest.py",)
    assert facts.production_paths == ()


def test_approvals_and_the_owner_rule_are_carried_into_the_facts():
    facts = sort("lib/x.py", approved=("alice",))
    assert facts.approved_by == ("alice",)
    assert facts.require_human_owner is True


def test_a_plain_config_callable_records_no_reasons():
    assert sort("pytest.ini", differs=lambda p: True).trust_root_why == ()


def test_config_reasons_name_only_changed_trust_root_config_files():
    differs = paths.ConfigChanges({"tox.ini": "pytest settings differ (addopts)"})
    facts = sort("tox.ini", "conftest.py", differs=differs)
    assert facts.trust_root_why == (("tox.ini", "pytest settings differ (addopts)"),)


def test_a_plugin_declaration_change_is_a_trust_root_and_says_why():
    differs = paths.ConfigChanges()
    differs.plugins["pyproject.toml"] = "pytest11 entry points differ"
    assert is_trust_root("pyproject.toml", M, differs)
    facts = sort("pyproject.toml", differs=differs)
    assert facts.trust_root_paths == ("pyproject.toml",)
    assert facts.trust_root_why == (("pyproject.toml", "pytest11 entry points differ"),)


def test_a_file_with_changed_settings_and_plugins_gives_both_reasons_on_one_line():
    differs = paths.ConfigChanges({"pyproject.toml": "pytest settings differ (addopts)"})
    differs.plugins["pyproject.toml"] = "pytest11 entry points differ"
    facts = sort("pyproject.toml", differs=differs)
    assert facts.trust_root_why == (
        ("pyproject.toml", "pytest settings differ (addopts); pytest11 entry points differ"),
    )


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/ci.yml",
        ".github/actions/setup/action.yml",
        "CODEOWNERS",
        ".github/CODEOWNERS",
        "docs/CODEOWNERS",
    ],
)
def test_what_a_pull_request_runs_the_gate_with_is_a_trust_root(path):
    assert is_ci_definition(path)
    assert is_trust_root(path, M, never)
    facts = sort(path)
    assert facts.trust_root_paths == (path,) and facts.production_paths == ()


@pytest.mark.parametrize("path", [".github/dependabot.yml", "lib/CODEOWNERS", "workflows/x.yml"])
def test_other_github_files_and_codeowners_elsewhere_are_no_ci_definition(path):
    assert not is_ci_definition(path)
    assert not is_trust_root(path, M, never)


def test_the_manifests_trust_root_globs_name_trust_roots():
    globbed = parse_manifest(MANIFEST + 'trust_root_globs: ["ci/**"]\n', "m.yaml")
    assert is_trust_root("ci/build.sh", globbed, never)
    assert not is_trust_root("ci/build.sh", M, never)
    assert sort("ci/build.sh", manifest=globbed).trust_root_paths == ("ci/build.sh",)


def test_the_changes_own_disputes_file_is_a_test_path_never_production():
    facts = sort(".andgate/disputes.yaml", "lib/x.py")
    assert facts.test_paths == (".andgate/disputes.yaml",)
    assert facts.production_paths == ("lib/x.py",) and facts.trust_root_paths == ()


def test_earlier_commit_only_is_carried_into_the_facts_and_false_unless_given():
    assert sort("lib/x.py").earlier_commit_only is False
    facts = sort_changes(
        modified("lib/x.py"),
        M,
        is_oracle_file=never,
        config_differs=never,
        approved_by=(),
        earlier_commit_only=True,
    )
    assert facts.earlier_commit_only is True


def test_a_manifest_without_the_owner_rule_says_so_in_the_facts():
    relaxed = parse_manifest(
        MANIFEST.replace("require_human_owner: true", "require_human_owner: false", 1), "m.yaml"
    )
    assert sort("lib/x.py", manifest=relaxed).require_human_owner is False


@pytest.mark.parametrize(
    "path", [".gitattributes", "tests/.gitattributes", "src/pkg/.gitattributes"]
)
def test_any_gitattributes_is_a_trust_root(path):
    assert is_trust_root(path, M, never)
    facts = sort(path)
    assert facts.trust_root_paths == (path,) and facts.production_paths == ()


def test_oracle_files_are_the_globbed_files_without_markers():
    rule = oracle_file_rule(M, holders=())
    assert rule("tests/oracles/test_a.py")
    assert not rule("tests/test_a.py")


def test_with_oracle_markers_only_globbed_files_that_held_an_oracle_item_count():
    marked = parse_manifest(
        MANIFEST.replace("    markers: []\n", "    markers: [oracle]\n", 1), "m.yaml"
    )
    assert marked.oracle.markers == ("oracle",)
    rule = oracle_file_rule(marked, holders={"tests/oracles/test_a.py", "tests/test_b.py"})
    assert rule("tests/oracles/test_a.py")
    assert not rule("tests/oracles/test_c.py")  # globbed, but held no oracle item
    assert not rule("tests/test_b.py")  # held one, but is not globbed


class Scan:
    suspicious = ("lib/x.py:3: harness_reference: `'_pytest' in sys.modules`",)
    oracle_literals = ("lib/x.py:4: 'hello-world' (tests/oracles/test_x.py::test_y)",)


def test_the_production_scan_findings_reach_the_change_facts():
    facts = sort_changes(
        modified("lib/x.py"),
        M,
        is_oracle_file=never,
        config_differs=never,
        approved_by=(),
        scan=Scan(),
    )
    assert facts.suspicious == Scan.suspicious
    assert facts.oracle_literals == Scan.oracle_literals


def test_without_a_scan_the_change_facts_hold_no_scan_findings():
    facts = sort("lib/x.py")
    assert facts.suspicious == () and facts.oracle_literals == ()


def test_an_adopting_change_cannot_narrow_what_counts_as_production():
    """Its own manifest sorted the paths: a `production_globs` that names nothing and a
    `test_support_globs` over the code must not hide a production edit while adopting."""
    from andgate.trust import paths as paths_module
    from andgate.trust.authorship import adopting

    narrowed = parse_manifest(
        MANIFEST + 'production_globs: ["nothing/**"]\ntest_support_globs: ["lib/**"]\n',
        "tests/trust_manifest.yaml",
    )
    paths = ("lib/core.py", "lib/data.json", "src/pkg/mod.py", "tests/test_new.py")
    changes = modified(*paths, "tests/trust_manifest.yaml")
    side = paths_module.TestSide(support_globs=("lib/**",))
    facts = sort(*paths, "tests/trust_manifest.yaml", manifest=narrowed, test_side=side)
    assert "src/pkg/mod.py" not in facts.production_paths  # dropped by production_globs
    adopted = adopting(facts, changes)
    assert adopted.adopting
    # Python outside a test file, or anything the sorting dropped, is production; data a
    # support glob names stays test side.
    assert adopted.production_paths == ("lib/core.py", "src/pkg/mod.py")
