"""JUnit files keep every attempt and mark frozen flakes."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from andgate.report.junit import FROZEN_PREFIX, Attempt, annotate, junit_key

DOC = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="3">
<testcase classname="tests.oracles.test_a" name="test_flaky" time="0.01" />
<testcase classname="tests.oracles.test_a.TestB" name="test_still_red[1-x]" time="0.02">
<failure message="assert 1 == 2">tests/oracles/test_a.py:9: AssertionError</failure>
<system-out>printed</system-out>
</testcase>
<testcase classname="tests.test_timing" name="test_mean_is_fast" time="0.5">
<error message="timeout">slow</error>
</testcase>
</testsuite></testsuites>
"""
TRACE = "def test_flaky():\n>       assert random() > 0.5\nE       assert 0.3 > 0.5\n"


def case(document: bytes, name: str) -> ET.Element:
    root = ET.fromstring(document)
    found = [c for c in root.iter("testcase") if c.get("name") == name]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize(
    ("nodeid", "key"),
    [
        ("tests/test_a.py::test_b", ("tests.test_a", "test_b")),
        ("tests/test_a.py::TestC::test_d", ("tests.test_a.TestC", "test_d")),
        ("tests/test_a.py::test_e[a::b-c.py/d]", ("tests.test_a", "test_e[a::b-c.py/d]")),
        ("test_top.py::test_f[\x1b]", ("test_top", "test_f[#x1B]")),
        ("pkg/tests/test_g.py::TestH::TestI::test_j", ("pkg.tests.test_g.TestH.TestI", "test_j")),
    ],
)
def test_junit_key_is_pytests_mangling(nodeid, key):
    assert junit_key(nodeid) == key


def test_a_pass_after_a_failed_attempt_gets_a_flaky_failure():
    out = annotate(DOC, {"tests/oracles/test_a.py::test_flaky": [Attempt("call", TRACE)]}, ())
    children = list(case(out, "test_flaky"))
    assert [c.tag for c in children] == ["flakyFailure"]
    assert children[0].get("message") == "E       assert 0.3 > 0.5"
    assert children[0].get("type") == "attempt 1 (call)"
    assert children[0].find("stackTrace").text == TRACE


def test_a_failure_after_failed_attempts_gets_rerun_failures_before_system_out():
    attempts = {
        "tests/oracles/test_a.py::TestB::test_still_red[1-x]": [
            Attempt("setup", "fixture broke"),
            Attempt("call", "E   assert 1 == 3"),
        ]
    }
    out = annotate(DOC, attempts, ())
    children = list(case(out, "test_still_red[1-x]"))
    assert [c.tag for c in children] == ["failure", "rerunFailure", "rerunFailure", "system-out"]
    assert [c.get("type") for c in children[1:3]] == ["attempt 1 (setup)", "attempt 2 (call)"]
    assert children[2].get("message") == "E   assert 1 == 3"


def test_frozen_flakes_keep_their_outcome_and_are_marked():
    out = annotate(DOC, {}, ["tests/test_timing.py::test_mean_is_fast"])
    frozen = case(out, "test_mean_is_fast")
    assert [c.tag for c in frozen] == ["properties", "error"]
    prop = frozen.find("properties/property")
    assert (prop.get("name"), prop.get("value")) == ("andgate.class", "frozen_flake")
    assert frozen.find("error").get("message") == FROZEN_PREFIX + "timeout"
    # marking twice changes nothing more
    again = case(
        annotate(out, {}, ["tests/test_timing.py::test_mean_is_fast"]), "test_mean_is_fast"
    )
    assert ET.tostring(again) == ET.tostring(frozen)
    assert list(case(out, "test_flaky")) == []


def test_unknown_node_ids_and_unreadable_documents_change_nothing():
    assert annotate(b"not xml", {"a.py::b": [Attempt("call", "x")]}, ["a.py::b"]) == b"not xml"
    bomb = b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaa">]><testsuites>&a;</testsuites>'
    assert annotate(bomb, {}, ()) == bomb
    out = annotate(DOC, {"tests/other.py::test_x": [Attempt("call", "x")]}, ["nope.py::t"])
    assert ET.tostring(ET.fromstring(out)) == ET.tostring(ET.fromstring(DOC))


def test_messages_with_characters_xml_cannot_hold():
    out = annotate(
        DOC, {"tests/oracles/test_a.py::test_flaky": [Attempt("call", "E \x00\x1b")]}, ()
    )
    flaky = case(out, "test_flaky").find("flakyFailure")
    assert flaky.get("message") == "E #x00#x1B"


@pytest.fixture(scope="module")
def real_junit(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A JUnit file written by the pytest under test, for the matching rules."""
    root = tmp_path_factory.mktemp("junit")
    tests = root / "tests" / "sub"
    tests.mkdir(parents=True)
    (tests / "test_cases.py").write_text(
        "import pytest\n\n"
        "class TestBox:\n"
        "    @pytest.mark.parametrize('p', ['a::b', 'c[d]'])\n"
        "    def test_param(self, p):\n"
        "        assert p == 'a::b'\n\n"
        "def test_plain():\n"
        "    pass\n",
        encoding="utf-8",
    )
    junit = root / "out.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"],
        cwd=root,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    return junit.read_bytes()


def test_matches_what_pytest_junitxml_writes(real_junit):
    ids = [
        "tests/sub/test_cases.py::TestBox::test_param[a::b]",
        "tests/sub/test_cases.py::TestBox::test_param[c[d]]",
        "tests/sub/test_cases.py::test_plain",
    ]
    attempts = {nodeid: [Attempt("call", f"E   {nodeid}")] for nodeid in ids}
    out = ET.fromstring(annotate(real_junit, attempts, [ids[2]]))
    tags = {
        (c.get("classname"), c.get("name")): [child.tag for child in c]
        for c in out.iter("testcase")
    }
    assert tags == {
        ("tests.sub.test_cases.TestBox", "test_param[a::b]"): ["flakyFailure"],
        ("tests.sub.test_cases.TestBox", "test_param[c[d]]"): ["failure", "rerunFailure"],
        ("tests.sub.test_cases", "test_plain"): ["properties", "flakyFailure"],
    }


def test_nothing_to_add_returns_the_document_as_pytest_wrote_it():
    assert annotate(DOC, {}, ()) is DOC
    assert annotate(DOC, {"tests/oracles/test_a.py::test_flaky": []}, set()) is DOC
