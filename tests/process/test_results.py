"""Reading a results file element by element (`results._decode_object`, `results._Compact`):
the same run as `json.loads` of the whole file would give, in any JSON layout, with
repeated values held once, and every malformed file still an error."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from andgate.process.results import CollectedItem, _Compact, _decode_object, read_results
from andgate.records import ItemFacts

ITEMS = [
    {
        "nodeid": f"tests/test_{f}.py::test_{n}[{p}]",
        "path": f"tests/test_{f}.py",
        "name": f"test_{n}",
        "markers": ["parametrize"] if p else [],
        "class": "oracle",
        "why": "file matches an oracle glob",
        "skip_mark": "needs 3.13" if n == 1 else None,
        "params": f"{f}{n}{p}" if p else None,
    }
    for f in ("a", "b")
    for n in range(3)
    for p in ("", "x", "y")
]
PASSED = {"setup": "passed", "call": "passed", "teardown": "passed"}
REPORTS = {
    **{i["nodeid"]: dict(PASSED) for i in ITEMS},
    ITEMS[0]["nodeid"]: {"setup": "passed", "call": "failed", "message": "boom"},
    ITEMS[1]["nodeid"]: {**PASSED, "reruns": 1, "attempts": [["call", "flaky"]]},
    ITEMS[2]["nodeid"]: {**PASSED, "wasxfail": True},
    ITEMS[3]["nodeid"]: {**PASSED, "wasxfail": 1},
}
PAYLOAD = {
    "schema": "andgate.results/1",
    "role": "oracle",
    "items": ITEMS,
    "reports": REPORTS,
    "seeds": {ITEMS[0]["nodeid"]: [1, 2]},
    "collection_errors": [{"nodeid": "tests/test_c.py", "message": "ImportError"}],
    "foreign_imports": [],
}
LAYOUTS = {
    "plugin's": {},
    "compact": {"separators": (",", ":")},
    "indented": {"indent": 2},
    "tabs": {"indent": "\t"},
}


def expected(payload: dict) -> tuple[tuple[CollectedItem, ...], dict]:
    """What the gate read before it streamed: json.loads, then one record per item."""
    items = tuple(
        CollectedItem(
            ItemFacts.from_json(i),
            str(i["class"]),
            str(i["why"]),
            None if i.get("skip_mark") is None else str(i["skip_mark"]),
            None if i.get("params") is None else str(i["params"]),
        )
        for i in payload["items"]
    )
    return items, {str(k): dict(v) for k, v in payload["reports"].items()}


def read(tmp_path, text: str):
    results = tmp_path / "oracle.results.json"
    results.write_text(text, encoding="utf-8")
    return read_results("oracle", 0, 1.0, results, tmp_path / "log", None)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_results_file_reads_as_json_loads_would_in_any_layout(tmp_path, layout):
    text = json.dumps(PAYLOAD, **LAYOUTS[layout])
    text = f" \n{text}\r\n" if layout == "tabs" else text
    result = read(tmp_path, text)
    assert result.error is None
    items, reports = expected(json.loads(text))
    assert result.items == items
    assert result.reports == reports
    assert list(result.reports) == list(reports)  # the order pytest ran them
    assert [list(e) for e in result.reports.values()] == [list(e) for e in reports.values()]
    assert result.seeds == {ITEMS[0]["nodeid"]: (1, 2)}
    assert result.collection_errors == (("tests/test_c.py", "ImportError"),)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, {"b": [2, 3]}], "items": [], "reports": {}, "c": "x\\"y"}',
        '{"items": [[1], {"z": {}}], "reports": {"k": [], "l": {"m": null}}}',
        '{"items": 3, "reports": "x"}',
        '{"items": [1], "items": {"a": 1}, "reports": {"k": 1}, "reports": [2]}',
        '{"items": {"a": 1}, "reports": {"k": 1}, "items": [1, 2]}',
        "{}",
        '{ "items" : [ ] , "reports" : { } }',
    ],
)
def test_decode_object_is_json_loads(text):
    """Streamed members are handed over element by element; everything else, and the
    last of duplicate keys, is exactly what json.loads gives."""
    got, done = _decode_object(text, {"items": ("[", list), "reports": ("{", dict)})
    assert got == json.loads(text)
    assert done == {
        k for k, opener in (("items", "["), ("reports", "{")) if _last_opens(text, k, opener)
    }


def _last_opens(text: str, key: str, opener: str) -> bool:
    at = text.rfind(f'"{key}"')
    return at >= 0 and text[at:].split(":", 1)[1].lstrip().startswith(opener)


@pytest.mark.parametrize(
    "text",
    [
        '{"items": [1, 2]} x',
        '{"items": [1, 2]}{}',
        '{"items": [1 2]}',
        '{"items": [1, 2,]}',
        '{"items": [1, 2}',
        '{"reports": {"a": 1,}}',
        '{"reports": {"a" 1}}',
        '{"reports": {1: 2}}',
        '{"items": [1, 2]',
        '{"items": [',
        '{"a": 1,}',
        '{"a": 1 "b": 2}',
        '{"a": 1;"b": 2}',
        '{"reports": {"a": 1;"b": 2}}',
        '{"items": [1;2]}',
        '{"a" 1}',
        "[1, 2]",
        "",
        '"{}"',
        '{"items": [NaN, tru]}',
    ],
)
def test_decode_object_refuses_what_json_loads_refuses(text):
    with pytest.raises(ValueError):
        _decode_object(text, {"items": ("[", list), "reports": ("{", dict)})


def test_an_unfinished_stream_is_refused():
    """A converter that stops early must not let the rest of the member go unread."""
    with pytest.raises(ValueError, match="not read to its end"):
        _decode_object('{"items": [1, 2, 3]}', {"items": ("[", lambda it: next(it))})


def test_repeated_values_are_held_once(tmp_path):
    result = read(tmp_path, json.dumps(PAYLOAD))
    by_id = {i.facts.nodeid: i for i in result.items}
    first, other = by_id[ITEMS[4]["nodeid"]], by_id[ITEMS[5]["nodeid"]]
    assert first.facts.path is other.facts.path
    assert first.facts.name is other.facts.name
    assert first.facts.markers is other.facts.markers
    assert first.why is other.why and first.cls is other.cls
    # node ids are interned: base's collection and the oracle run share them
    assert first.facts.nodeid is sys.intern(ITEMS[4]["nodeid"])
    assert next(iter(result.reports)) is sys.intern(ITEMS[0]["nodeid"])
    entries = [result.reports[i["nodeid"]] for i in ITEMS[4:]]
    assert all(e is entries[0] for e in entries)
    # equal but not the same: True == 1, yet wasxfail true is no reruns count
    xfail_true, xfail_one = (result.reports[i["nodeid"]] for i in ITEMS[2:4])
    assert xfail_true is not xfail_one
    assert xfail_true["wasxfail"] is True and type(xfail_one["wasxfail"]) is int


def test_entries_are_shared_only_when_equal_with_equal_types():
    compact = _Compact()
    one = compact.entry({"call": "passed", "reruns": 1})
    assert compact.entry({"call": "passed", "reruns": 1}) is one
    assert compact.entry({"call": "passed", "reruns": True}) is not one
    assert compact.entry({"call": "passed", "reruns": 1.0}) is not one
    assert compact.entry({"reruns": 1, "call": "passed"}) is not one  # key order kept
    listed = {"call": "passed", "attempts": [["call", "x"]]}
    assert compact.entry(listed) == listed


def test_values_of_other_types_stay_as_they_were():
    compact = _Compact()
    raw = dict(ITEMS[0], nodeid=7, path=["p"], markers="ab")
    item = compact.item(raw)
    assert item.facts.nodeid == 7 and item.facts.path == ["p"]
    assert item.facts.markers == frozenset("ab")


FREED_BUFFERS = """
import contextlib, io, sys
from andgate.commands import cli

def resident_mib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 // 2**20

if sys.argv[1] == "gate":
    with contextlib.redirect_stderr(io.StringIO()):
        cli.main(["check", "--repo", "/nonexistent/andgate-test", "--quiet"])
block = bytearray(30 * 2**20)  # a first results file's text, read and freed
del block
before = resident_mib()
block = bytearray(20 * 2**20)  # the next one
del block
print(resident_mib() - before)
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator")
def test_the_gate_returns_large_freed_buffers_to_the_system():
    """glibc keeps a freed 20 MiB buffer resident once a larger one was freed
    (its dynamic mmap threshold); the gate's process fixes the threshold."""

    def grown(mode: str) -> int:
        argv = [sys.executable, "-c", FREED_BUFFERS, mode]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        return int(out.stdout.split()[-1])

    assert grown("plain") >= 15  # what the default does: the check is not vacuous
    assert grown("gate") <= 2
