"""The manifest schema: defaults, every check and every message (pure: YAML text in)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import re
import sys
from collections.abc import Iterator

import pytest

from andgate.errors import FreezeFileError, ManifestError
from andgate.trust.manifest import (
    DEFAULT_MANIFEST,
    FlakeClass,
    Key,
    Manifest,
    OracleClass,
    PropertyClass,
    load_yaml,
    parse_manifest,
)

MINIMAL = "version: 1\nclasses:\n  oracle:\n    globs: [tests/oracles/*.py]\n"
FULL = """\
version: 1
classes:
  oracle:
    require_human_owner: false
    globs: [" o/*.py "]
    markers: [oracle]
  property:
    require_accepted_invariant: false
    globs: [p/*.py]
    markers: [prop]
    invariants_file: " p/INV.md "
  frozen_flake:
    freeze_file: f/freeze.yaml
    globs: [f/*.py]
    markers: [flaky]
fail_closed_untrusted: false
oracle_must_fail_known_bad: false
known_bad_dir: kb
owners: [alice, bob]
production_globs: [lib/**]
lock_file: locks.sha256
fixtures_dir: fx
max_freeze_days: 1
require_property_class: false
test_support_globs: [support/*.py]
scrub_env: [SECRET_*]
"""


def manifest_error(text: str | bytes | None, source: str | None = None) -> str:
    with pytest.raises(ManifestError) as info:
        parse_manifest(text, "tests/trust_manifest.yaml", source)
    return str(info.value)


def with_key(line: str) -> str:
    return MINIMAL + line + "\n"


# -- defaults and values ------------------------------------------------------------------


def test_the_default_manifest_path_is_the_documented_one():
    assert DEFAULT_MANIFEST == "tests/trust_manifest.yaml"


def test_a_minimal_manifest_takes_every_strict_default():
    assert parse_manifest(MINIMAL, "m.yaml") == Manifest(
        path="m.yaml",
        oracle=OracleClass(True, ("tests/oracles/*.py",), ()),
        property=PropertyClass(True, (), (), "tests/properties/INVARIANTS.md"),
        frozen_flake=FlakeClass("tests/flakes/freeze.yaml", (), ()),
        fail_closed_untrusted=True,
        oracle_must_fail_known_bad=True,
        known_bad_dir="tests/oracles/known_bad",
        owners=(),
        production_globs=(),
        lock_file="tests/oracles/locks.sha256",
        fixtures_dir="tests/oracles/fixtures",
        max_freeze_days=28,
        require_property_class=True,
        test_support_globs=(),
        scrub_env=(),
    )


def test_every_key_is_read_and_strings_are_stripped():
    assert parse_manifest(FULL.encode(), "m.yaml") == Manifest(
        path="m.yaml",
        oracle=OracleClass(False, ("o/*.py",), ("oracle",)),
        property=PropertyClass(False, ("p/*.py",), ("prop",), "p/INV.md"),
        frozen_flake=FlakeClass("f/freeze.yaml", ("f/*.py",), ("flaky",)),
        fail_closed_untrusted=False,
        oracle_must_fail_known_bad=False,
        known_bad_dir="kb",
        owners=("alice", "bob"),
        production_globs=("lib/**",),
        lock_file="locks.sha256",
        fixtures_dir="fx",
        max_freeze_days=1,
        require_property_class=False,
        test_support_globs=("support/*.py",),
        scrub_env=("SECRET_*",),
    )


def test_an_empty_class_section_takes_its_defaults():
    parsed = parse_manifest(MINIMAL + "  property:\n  frozen_flake:\n", "m.yaml")
    assert parsed.property == PropertyClass(True, (), (), "tests/properties/INVARIANTS.md")
    assert parsed.frozen_flake == FlakeClass("tests/flakes/freeze.yaml", (), ())


def test_a_relative_path_is_normalized():
    assert parse_manifest(with_key("fixtures_dir: ./a//b/"), "m.yaml").fixtures_dir == "a/b"


def test_a_glob_may_contain_dots_inside_a_name():
    parsed = parse_manifest(with_key('production_globs: ["a..b/*.py"]'), "m.yaml")
    assert parsed.production_globs == ("a..b/*.py",)


def test_a_lock_beside_a_fixtures_dir_that_extends_its_name_is_accepted():
    text = with_key("fixtures_dir: goldX\nlock_file: gold/locks.sha256")
    assert parse_manifest(text, "m.yaml").lock_file == "gold/locks.sha256"


def test_validated_values_are_immutable():
    parsed = parse_manifest(MINIMAL, "m.yaml")
    values = [parsed, parsed.oracle, parsed.property, parsed.frozen_flake, Key("k", str)]
    for value in values:
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.globs = ()  # type: ignore[misc]


# -- messages ----------------------------------------------------------------------------


def test_a_missing_manifest_says_how_to_create_it():
    assert manifest_error(None) == (
        "tests/trust_manifest.yaml: manifest not found; "
        "create it (andgate init) or pass --manifest PATH"
    )


def test_messages_name_the_source_when_given():
    assert manifest_error(None, "base:m.yaml").startswith("base:m.yaml: manifest not found")


def test_an_empty_manifest_says_what_it_needs():
    assert manifest_error("") == (
        "tests/trust_manifest.yaml: manifest is empty; it needs at least version and classes"
    )


def test_a_manifest_that_is_not_a_mapping_says_so():
    assert manifest_error("[1]") == (
        "tests/trust_manifest.yaml: the manifest must be a mapping of keys to values"
    )


def test_a_section_that_is_not_a_mapping_names_it():
    assert manifest_error("version: 1\nclasses: 3\n") == (
        "tests/trust_manifest.yaml: classes must be a mapping of keys to values"
    )


def test_a_typo_names_the_key_its_place_and_the_likely_fix():
    text = "version: 1\nclasses:\n  oracel:\n    globs: [a]\n"
    assert manifest_error(text) == (
        "tests/trust_manifest.yaml: unknown key 'oracel' under classes; did you mean 'oracle'?"
    )


def test_an_unknown_key_at_the_top_lists_the_allowed_keys():
    message = manifest_error(with_key("zzz: 1"))
    assert message.startswith("tests/trust_manifest.yaml: unknown key 'zzz'; allowed keys: ")
    assert message.endswith(
        "approvals, generated_files, trust_root_globs, disputes_file, production_scan"
    )


def test_a_missing_required_key_names_its_place():
    assert manifest_error("classes: {oracle: {globs: [a]}}\n") == (
        "tests/trust_manifest.yaml: required key 'version' is missing; add it"
    )
    assert manifest_error("version: 1\nclasses:\n  oracle: {}\n") == (
        "tests/trust_manifest.yaml: required key 'globs' is missing under classes.oracle; add it"
    )


@pytest.mark.parametrize("value", ["2", "true", "'1'"])
def test_only_the_integer_1_is_a_version(value):
    assert manifest_error(MINIMAL.replace("version: 1", f"version: {value}")) == (
        "tests/trust_manifest.yaml: version must be 1 (the only manifest version), "
        f"got {load_yaml(value, 's', ManifestError)!r}"
    )


def test_a_boolean_key_names_its_dotted_field():
    text = MINIMAL + "    require_human_owner: maybe\n"
    assert manifest_error(text) == (
        "tests/trust_manifest.yaml: classes.oracle.require_human_owner must be true or false, "
        "got 'maybe'"
    )


@pytest.mark.parametrize("value", ["0", "true", "'3'", "-2"])
def test_max_freeze_days_is_a_whole_number_of_at_least_1(value):
    assert manifest_error(with_key(f"max_freeze_days: {value}")) == (
        "tests/trust_manifest.yaml: max_freeze_days must be a whole number >= 1, "
        f"got {load_yaml(value, 's', ManifestError)!r}"
    )


@pytest.mark.parametrize("value", ["3", "'  '", "[a]"])
def test_a_path_key_must_be_a_non_blank_string(value):
    assert manifest_error(with_key(f"known_bad_dir: {value}")) == (
        "tests/trust_manifest.yaml: known_bad_dir must be a path relative to the repository root"
    )


@pytest.mark.parametrize("value", ["/abs", "a/../b", "'a\\b'"])
def test_a_path_key_must_stay_inside_the_repository(value):
    message = manifest_error(with_key(f"known_bad_dir: {value}"))
    shown = load_yaml(value, "s", ManifestError)
    assert message == (
        f"tests/trust_manifest.yaml: known_bad_dir {shown!r} must be a relative path inside the "
        "repository, using '/'"
    )


@pytest.mark.parametrize("value", ["a", "[1]", "['']", "[' ']"])
def test_a_list_key_must_be_a_list_of_non_empty_strings(value):
    assert manifest_error(with_key(f"owners: {value}")) == (
        'tests/trust_manifest.yaml: owners must be a list of non-empty strings, e.g. ["a", "b"]'
    )


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (with_key("production_globs: [1]"), "production_globs"),
        (with_key("trust_root_globs: ['']"), "trust_root_globs"),
        ("version: 1\nclasses:\n  oracle:\n    globs: a\n", "classes.oracle.globs"),
        (with_key("approvals: {sources: [1]}"), "approvals.sources"),
        (
            with_key("production_scan: {allow: {src/**: harness_reference}}"),
            "production_scan.allow['src/**']",
        ),
    ],
)
def test_every_list_refusal_names_the_file_the_dotted_field_and_the_fix(text, field):
    """Users fix the manifest from this one line: which file, which field, what to write."""
    assert manifest_error(text) == (
        f'tests/trust_manifest.yaml: {field} must be a list of non-empty strings, e.g. ["a", "b"]'
    )


@pytest.mark.parametrize("glob", ["/abs/*.py", "../x/*.py", "a/../*.py"])
def test_a_glob_must_be_relative_to_the_repository_root(glob):
    assert manifest_error(with_key(f"production_globs: [{glob!r}]")) == (
        f"tests/trust_manifest.yaml: production_globs glob {glob!r} must be relative to the "
        "repository root"
    )


def test_an_empty_oracle_glob_list_says_it_would_block():
    assert manifest_error("version: 1\nclasses:\n  oracle:\n    globs: []\n") == (
        "tests/trust_manifest.yaml: classes.oracle.globs is empty; list at least one glob "
        "(an empty oracle class blocks)"
    )


@pytest.mark.parametrize("lock", ["fx", "fx/locks.sha256"])
def test_a_lock_file_in_the_folder_it_locks_is_refused(lock):
    assert manifest_error(with_key(f"fixtures_dir: fx\nlock_file: {lock}")) == (
        f"tests/trust_manifest.yaml: lock_file {lock!r} is inside fixtures_dir 'fx'; "
        "move the lock file out of the folder it locks"
    )


# -- YAML --------------------------------------------------------------------------------


def yaml_error(text: str | bytes) -> str:
    with pytest.raises(FreezeFileError) as info:
        load_yaml(text, "f.yaml", FreezeFileError)
    return str(info.value)


def test_yaml_bytes_are_decoded_as_utf_8():
    assert load_yaml("k: café\n".encode(), "f.yaml", FreezeFileError) == {"k": "café"}


def test_yaml_that_is_not_utf_8_says_how_to_save_it():
    assert yaml_error(b"k: \xff\n") == (
        "f.yaml: not UTF-8 text (invalid start byte); save it as UTF-8"
    )


def test_a_syntax_error_names_its_line_and_context():
    assert yaml_error("a: 1\nb: [1\n") == (
        "f.yaml: invalid YAML (line 3): while parsing a flow sequence, expected ',' or ']', "
        "but got '<stream end>'; fix the syntax"
    )


def test_a_second_document_is_a_syntax_error():
    assert yaml_error("a: 1\n---\nb: 2\n") == (
        "f.yaml: invalid YAML (line 2): expected a single document in the stream, "
        "but found another document; fix the syntax"
    )


def test_a_reader_error_without_a_mark_gives_its_first_line():
    assert yaml_error("a: \x00\n") == (
        "f.yaml: invalid YAML: unacceptable character #x0000: special characters are not "
        "allowed; fix the syntax"
    )


def test_aliases_are_refused():
    assert yaml_error("a: &x 1\nb: *x\n") == (
        "f.yaml: invalid YAML (line 2): YAML aliases (*name) are not allowed here; fix the syntax"
    )


def test_duplicate_keys_are_refused_at_any_depth():
    assert yaml_error("top:\n  a: 1\n  b: 2\n  a: 3\n") == (
        "f.yaml: invalid YAML (line 4): duplicate key 'a'; fix the syntax"
    )


def test_an_unhashable_key_is_left_to_pyyaml_to_report():
    assert yaml_error("? [a]\n: 1\n") == (
        "f.yaml: invalid YAML (line 1): while constructing a mapping, found unhashable key; "
        "fix the syntax"
    )
    # keys after an unhashable one are still checked for duplicates
    assert yaml_error("? [a]\n: 1\nb: 1\nb: 2\n").startswith(
        "f.yaml: invalid YAML (line 4): duplicate key 'b'"
    )


def test_real_dates_are_dates_and_impossible_ones_stay_strings():
    loaded = load_yaml("a: 2026-12-01\nb: 2026-13-01\n", "f.yaml", FreezeFileError)
    assert loaded == {"a": dt.date(2026, 12, 1), "b": "2026-13-01"}


def test_a_bad_typed_value_says_to_fix_the_value():
    assert yaml_error("a: !!int x\n") == (
        "f.yaml: invalid YAML: invalid literal for int() with base 10: 'x'; fix the value"
    )


def test_nesting_too_deep_says_to_flatten_it():
    assert yaml_error("[" * 500 + "]" * 500) == (
        "f.yaml: invalid YAML: nested too deeply; flatten it"
    )


@contextlib.contextmanager
def stack_budget(frames: int) -> Iterator[None]:
    """Fix the frames left above the caller, so a nesting depth means the same under any
    runner (pytest, its plugins and xdist each add frames of their own)."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + frames)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def test_values_nest_as_deep_as_the_parser_allows():
    # Nested values are built lazily, so building adds no recursion to parsing: 245 levels
    # parse in 1000 frames, and would not if every value were built at once.
    with stack_budget(1000):
        loaded = load_yaml("{a: " * 245 + "1" + "}" * 245, "f.yaml", FreezeFileError)
    for _ in range(245):
        loaded = loaded["a"]
    assert loaded == 1


def test_a_key_nested_too_deeply_is_nested_too_deeply():
    # A key is built whole before its hash is tried; at 285 levels that exceeds 1000 frames.
    text = "? " + "[" * 285 + "]" * 285 + "\n: 1\n"
    with stack_budget(1000):
        assert yaml_error(text) == "f.yaml: invalid YAML: nested too deeply; flatten it"


def test_python_tags_are_refused():
    assert re.search(r"could not determine a constructor", yaml_error("a: !!python/none x\n"))


def test_the_keys_of_the_real_project_and_github_issues_parse_with_strict_defaults():
    default = parse_manifest(MINIMAL, "m.yaml")
    assert default.test_support_globs == ()
    assert default.scrub_env == ()
    assert default.require_discriminating_tests is False
    assert default.block_weakened_oracles is False
    assert default.approval_sources == ("cli", "env", "github-reviews")
    assert dict(default.production_scan_allow) == {}
    given = parse_manifest(
        MINIMAL
        + 'test_support_globs: ["support/**"]\nscrub_env: ["DEPLOY_*"]\n'
        + "require_discriminating_tests: true\napprovals: {sources: [github-reviews]}\n"
        + "block_weakened_oracles: true\n"
        + 'production_scan: {allow: {"src/plugin/**": [harness_reference]}}\n',
        "m.yaml",
    )
    assert given.test_support_globs == ("support/**",)
    assert given.scrub_env == ("DEPLOY_*",)
    assert given.require_discriminating_tests is True
    assert given.block_weakened_oracles is True
    assert given.approval_sources == ("github-reviews",)
    assert {k: sorted(v) for k, v in given.production_scan_allow.items()} == {
        "src/plugin/**": ["harness_reference"]
    }


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("require_discriminating_tests: 1", "require_discriminating_tests must be true or false"),
        ("block_weakened_oracles: yes please", "block_weakened_oracles must be true or false"),
        ("block_weakend_oracles: true", "did you mean 'block_weakened_oracles'?"),
        ("scrub_env: DEPLOY_KEY", "scrub_env must be a list of non-empty strings"),
        ("test_support_globs: [../x]", "must be relative to the repository root"),
        ("approvals: {sources: [slack]}", "unknown source 'slack'"),
        ("production_scan: {allow: {a: [nope]}}", "unknown construct 'nope'"),
    ],
)
def test_bad_values_of_the_new_keys_are_manifest_invalid(line, fragment):
    assert fragment in manifest_error(with_key(line))


def test_the_approval_sources_refusal_names_the_field_and_the_valid_sources():
    assert manifest_error(with_key("approvals: {sources: [cli, slack]}")) == (
        "tests/trust_manifest.yaml: approvals.sources has unknown source 'slack'; "
        "valid sources: cli, env, github-reviews"
    )


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "production_scan: {allow: [harness_reference]}",
            "production_scan.allow must map path globs to lists of constructs, "
            'e.g. {"src/myplugin/**": [harness_reference]}',
        ),
        (
            "production_scan: {allow: {1: [harness_reference]}}",
            "production_scan.allow key 1 must be a path glob string",
        ),
        (
            "production_scan: {allow: {../x: [harness_reference]}}",
            "production_scan.allow key glob '../x' must be relative to the repository root",
        ),
        (
            "production_scan: {allow: {src/**: [nope]}}",
            "production_scan.allow['src/**']: unknown construct 'nope'; valid names: "
            "harness_reference, harness_env, stack_inspection, constant_comparison, "
            "exit_at_import, shadowing_module, implicit_import, binary_file, source_encoding, "
            "symlink, pytest_plugin, environment_write, system_file_write, gitattributes, "
            "oracle_literal, hard_coded_answer, import_machinery, test_side_write, test_run_probe",
        ),
    ],
)
def test_production_scan_refusals_name_the_field_and_the_fix(line, message):
    assert manifest_error(with_key(line)) == f"tests/trust_manifest.yaml: {message}"


def test_the_revised_contract_keys_are_validated():
    assert "generated_files must be" in manifest_error(with_key("generated_files: 3"))
    assert "disputes_file '../x' must be a relative path" in manifest_error(
        with_key("disputes_file: ../x")
    )
    assert "trust_root_globs must be" in manifest_error(with_key("trust_root_globs: {a: 1}"))


# -- the disputes file and the approval sources ----------------------------------------------


@pytest.mark.parametrize(
    "disputes",
    [
        "tests/trust_manifest.yaml",  # the manifest itself
        "tests/oracles/locks.sha256",
        "tests/flakes/freeze.yaml",
        "tests/properties/INVARIANTS.md",
        "tests/oracles/fixtures",
        "tests/oracles/fixtures/d.yaml",
        "tests/oracles/known_bad/d.yaml",
        "conftest.py",
        "pytest.ini",
        "setup.cfg",
        "pyproject.toml",
    ],
)
def test_a_disputes_file_that_is_a_trust_file_or_read_by_pytest_is_refused(disputes):
    text = with_key(f"disputes_file: {disputes}")
    assert manifest_error(text, "base:tests/trust_manifest.yaml") == (
        f"base:tests/trust_manifest.yaml: disputes_file {disputes!r} names a trust file or a "
        "file pytest reads; give it a YAML file of its own, e.g. .andgate/disputes.yaml"
    )


@pytest.mark.parametrize(
    "disputes", [".andgate/disputes.yaml", "tests/oracles/fixtures.yaml", "tests/oracles/x.yml"]
)
def test_a_disputes_file_beside_the_trust_files_is_accepted(disputes):
    text = with_key(f"disputes_file: {disputes}")
    assert parse_manifest(text, "tests/trust_manifest.yaml").disputes_file == disputes


def test_only_a_path_inside_the_folder_is_refused_whatever_the_folder_is_called():
    text = with_key("fixtures_dir: dataX\ndisputes_file: {}")
    with pytest.raises(ManifestError, match="names a trust file"):
        parse_manifest(text.format("dataX/d.yaml"), "tests/trust_manifest.yaml")
    accepted = parse_manifest(text.format("data/d.yaml"), "tests/trust_manifest.yaml")
    assert accepted.disputes_file == "data/d.yaml"


def test_approval_sources_listed_says_whether_the_manifest_lists_them_itself():
    assert parse_manifest(MINIMAL, "m.yaml").approval_sources_listed is False
    assert parse_manifest(with_key("approvals: {}"), "m.yaml").approval_sources_listed is False
    listed = parse_manifest(with_key("approvals: {sources: [cli]}"), "m.yaml")
    assert listed.approval_sources_listed is True and listed.approval_sources == ("cli",)


def test_a_manifest_yaml_error_is_a_manifest_error_naming_the_source():
    assert manifest_error("version: [\n", "base:tests/trust_manifest.yaml").startswith(
        "base:tests/trust_manifest.yaml: invalid YAML (line 2)"
    )
