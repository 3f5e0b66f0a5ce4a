"""JUnit files that keep every attempt, as pytest-rerunfailures users expect.

pytest's junitxml writes one `<testcase>` per item with its final outcome, so an item
that failed and then passed on a rerun looks green. Maven Surefire's schema, which CI
test viewers read, has two children for that: `<flakyFailure>` (an attempt failed,
the final run passed) and `<rerunFailure>` (an attempt failed, and so did the final
run). `annotate` adds them from the attempts andgate recorded.

Frozen flakes keep their real outcome (a frozen test that still fails is news for
its owner) but are marked twice: a `<property name="andgate.class"
value="frozen_flake"/>` for tools that read properties, and a message prefix for the
viewers that only show a failure's message, so nobody reads a red frozen test as the
reason a change was blocked.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

FROZEN_PREFIX = "[frozen flake: outcome ignored by andgate] "
MESSAGE_LIMIT = 500
ILLEGAL_XML = re.compile(
    "[^\u0009\u000a\u000d\u0020-\u007e\u0080-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
TRAILING = ("system-out", "system-err")


class Attempt(NamedTuple):
    """One failed attempt before the final one: the phase and pytest's longrepr."""

    when: str  # "setup" | "call" | "teardown"
    message: str


def bin_xml_escape(text: str) -> str:
    """What pytest's junitxml does to characters XML cannot hold."""

    def repl(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"#x{code:02X}" if code <= 0xFF else f"#x{code:04X}"

    return ILLEGAL_XML.sub(repl, text)


def junit_key(nodeid: str) -> tuple[str, str]:
    """(classname, name) pytest's junitxml gives a node id (`mangle_test_address`):
    parameters split off first, the file path dotted without `.py`."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), bin_xml_escape(names[-1])


def annotate(
    document: bytes,
    attempts: Mapping[str, Sequence[Attempt]],
    frozen: Collection[str],
) -> bytes:
    """`document` with rerun children and frozen-flake marks; unchanged when it is not
    a JUnit file andgate can read (a DTD, bad XML), or when there is nothing to add
    (no attempt, no frozen item: a large oracle file is not parsed and re-serialised
    for nothing)."""
    if not any(attempts.values()) and not frozen:
        return document
    if b"<!DOCTYPE" in document or b"<!ENTITY" in document:
        return document
    try:
        root = ET.fromstring(document)
    except ET.ParseError:
        return document
    cases: dict[tuple[str, str], list[ET.Element]] = {}
    for case in root.iter("testcase"):
        key = (case.get("classname", ""), case.get("name", ""))
        cases.setdefault(key, []).append(case)
    for nodeid, tries in attempts.items():
        for case in cases.get(junit_key(nodeid), []):
            _add_attempts(case, tries)
    for nodeid in frozen:
        for case in cases.get(junit_key(nodeid), []):
            _mark_frozen(case)
    out: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return out


def _final_failed(case: ET.Element) -> bool:
    return any(child.tag in ("failure", "error", "skipped") for child in case)


def _add_attempts(case: ET.Element, tries: Sequence[Attempt]) -> None:
    tag = "rerunFailure" if _final_failed(case) else "flakyFailure"
    at = next((i for i, child in enumerate(case) if child.tag in TRAILING), len(case))
    for offset, attempt in enumerate(tries):
        element = ET.Element(
            tag, {"message": _short(attempt), "type": f"attempt {offset + 1} ({attempt.when})"}
        )
        trace = ET.SubElement(element, "stackTrace")
        trace.text = bin_xml_escape(attempt.message)
        case.insert(at + offset, element)


def _short(attempt: Attempt) -> str:
    lines = [line for line in attempt.message.strip().splitlines() if line.strip()]
    last = lines[-1].strip() if lines else f"failed in {attempt.when}"
    return bin_xml_escape(last[:MESSAGE_LIMIT])


def _mark_frozen(case: ET.Element) -> None:
    properties = case.find("properties")
    if properties is None:
        properties = ET.Element("properties")
        case.insert(0, properties)
    if not any(p.get("name") == "andgate.class" for p in properties):
        ET.SubElement(properties, "property", {"name": "andgate.class", "value": "frozen_flake"})
    for child in case:
        if child.tag in ("failure", "error") and not child.get("message", "").startswith(
            FROZEN_PREFIX
        ):
            child.set("message", FROZEN_PREFIX + child.get("message", ""))
