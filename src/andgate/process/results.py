"""What a pytest process recorded, read back: its results file decoded (fast, and
refusing anything but a regular file), shards merged, and a class's facts.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from andgate.process.argv import EXIT_CANNOT_IMPORT
from andgate.records import (
    ClassFacts,
    ItemFacts,
    ItemResult,
    Outcome,
    Role,
    item_outcome,
)

# pytest exit codes (pytest.ExitCode), kept numeric so results files stay plain JSON.
EXIT_INTERNAL_ERROR, EXIT_USAGE_ERROR, EXIT_NO_TESTS = 3, 4, 5


@dataclass(frozen=True, slots=True)
class CollectedItem:
    facts: ItemFacts
    cls: str
    why: str
    skip_mark: str | None = None  # the reason a skip/skipif mark skips it here
    params: str | None = None  # digest of its parameter values (plain data only)
    xfail_mark: str | None = None  # an oracle's xfail mark's reason, in a collection


@dataclass(frozen=True)
class RunResult:
    """What a pytest process recorded, or why it recorded nothing usable."""

    label: str
    exit_code: int | None
    seconds: float
    items: tuple[CollectedItem, ...] = ()
    reports: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    seeds: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    collection_errors: tuple[tuple[str, str], ...] = ()
    error: str | None = None
    log: Path | None = None
    junit: Path | None = None
    # Modules imported from the worktree that are not a plain Python source file
    # there: (module, path, target, why), see `redirect.unscanned_modules`.
    unscanned: tuple[tuple[str, str, str, str], ...] = ()

    def selected(self, role: str) -> tuple[CollectedItem, ...]:
        return tuple(i for i in self.items if i.cls == role)

    def outcome(self, nodeid: str) -> Outcome:
        return item_outcome(self.reports.get(nodeid))

    def message(self, nodeid: str) -> str:
        entry = self.reports.get(nodeid, {})
        return str(entry.get("message") or entry.get("rerun_message") or "")


def read_results(
    label: str, code: int, seconds: float, results: Path, log: Path, junit: Path | None
) -> RunResult:
    """Parse the plugin's results file; anything malformed is an error, never a pass."""
    base: dict[str, Any] = {
        "label": label,
        "exit_code": code,
        "seconds": seconds,
        "log": log,
        "junit": junit,
    }
    if code == EXIT_CANNOT_IMPORT and not results.exists():
        return RunResult(
            **base,
            error=(
                f"the {label} pytest process could not start: {_bootstrap_problem(log)} "
                f"(python {sys.executable}); install pytest in the environment andgate "
                "runs tests with"
            ),
        )
    if code in (EXIT_INTERNAL_ERROR, EXIT_USAGE_ERROR):
        kind = "an internal error" if code == EXIT_INTERNAL_ERROR else "a usage error"
        return RunResult(
            **base, error=f"pytest stopped with {kind} in the {label} run: {log_tail(log)}"
        )
    try:
        return _parse_results(_read_regular_file(results), base)
    except FileNotFoundError:
        error = (
            f"the {label} pytest process (exit {code}) wrote no results: was the andgate "
            f"plugin disabled or the process killed? {log_tail(log)}"
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        # OSError: a test replaced the file by a folder or an unreadable file.
        error = f"the {label} results file is malformed ({exc.__class__.__name__}: {exc})"
    return RunResult(**base, error=error)


def _read_regular_file(path: Path) -> str:
    """The text of a regular file. Opened non-blocking: a FIFO a test left in
    place of its results file must not hang the gate."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError(f"{path.name} is not a regular file")
        return fh.read().decode("utf-8")


def _parse_results(text: str, base: dict[str, Any]) -> RunResult:
    """A results file's run. Its items and reports are decoded one element at a
    time and compacted as they come (`_Compact`): the whole document as dicts
    never exists (packaging's 53,632-item oracle shard: a 99 MiB peak for
    json.loads and records, 19 MiB this way)."""
    compact = _Compact()
    streamed = {"items": ("[", compact.items), "reports": ("{", compact.reports)}
    payload, done = _decode_object(text, streamed)
    if payload.get("schema") != "andgate.results/1":
        raise ValueError(f"unknown results schema {payload.get('schema')!r}")
    items = payload["items"] if "items" in done else compact.items(payload["items"])
    reports = payload["reports"]
    if "reports" not in done:
        reports = compact.reports(reports.items())
    seeds = {str(k): tuple(v) for k, v in payload["seeds"].items()}
    errors = tuple((str(e["nodeid"]), str(e["message"])) for e in payload["collection_errors"])
    foreign = [str(f) for f in payload.get("foreign_imports", ())]
    error = None
    if foreign:
        error = (
            f"the {base['label']} pytest process imported {foreign[0]}"
            f"{f' (and {len(foreign) - 1} more)' if len(foreign) > 1 else ''}, not from its "
            "worktree, so it did not test head; install the project so that andgate can "
            "redirect it (pip install -e . or pip install .), or report the layout"
        )
    unscanned = tuple(
        (str(u["module"]), str(u["path"]), str(u["target"]), str(u["why"]))
        for u in payload.get("unscanned_imports", ())
    )
    return RunResult(
        **base,
        items=items,
        reports=reports,
        seeds=seeds,
        collection_errors=errors,
        error=error,
        unscanned=unscanned,
    )


class _Compact:
    """One results file's values, each repeated value held once: node ids are
    interned (the oracle run, base's collection and the replays name the same
    items), paths, names, classes, reasons and marker sets are shared within the
    file, and so are identical report entries (read-only everywhere: `reports`
    is a Mapping). Values of other types than str stay as they were, so a
    malformed file fails exactly as it did."""

    def __init__(self) -> None:
        self.strings: dict[str, str] = {}
        self.marker_sets: dict[tuple[str, ...], frozenset[Any]] = {}
        self.entries: dict[tuple[Any, ...], dict[str, Any]] = {}

    def share(self, value: Any) -> Any:
        return self.strings.setdefault(value, value) if type(value) is str else value

    def items(self, raw: Iterable[Any]) -> tuple[CollectedItem, ...]:
        return tuple(self.item(i) for i in raw)

    def item(self, i: Any) -> CollectedItem:
        share, skip, params = self.share, i.get("skip_mark"), i.get("params")
        xfail = i.get("xfail_mark")
        facts = ItemFacts(
            _intern(i["nodeid"]), share(i["path"]), share(i["name"]), self.markers(i["markers"])
        )
        return CollectedItem(
            facts,
            share(str(i["class"])),
            share(str(i["why"])),
            None if skip is None else share(str(skip)),
            None if params is None else str(params),
            None if xfail is None else str(xfail),
        )

    def markers(self, raw: Any) -> frozenset[Any]:
        if type(raw) is not list or not all(type(m) is str for m in raw):
            return frozenset(raw)
        key = tuple(raw)
        found = self.marker_sets.get(key)
        if found is None:
            found = self.marker_sets[key] = frozenset(self.share(m) for m in raw)
        return found

    def reports(self, raw: Iterable[tuple[Any, Any]]) -> dict[str, Mapping[str, Any]]:
        return {_intern(str(k)): self.entry(v) for k, v in raw}

    def entry(self, raw: Any) -> dict[str, Any]:
        entry = dict(raw)
        # The types are part of the key: 1 == True, but `reruns: 1` is no `wasxfail: true`.
        key = (*entry, *map(type, entry), *entry.values(), *map(type, entry.values()))
        try:
            return self.entries.setdefault(key, entry)
        except TypeError:  # a list in it (pytest-rerunfailures' attempts): not shared
            return entry


def _intern(value: Any) -> Any:
    return sys.intern(value) if type(value) is str else value


_DECODER = json.JSONDecoder()


_SPACE = re.compile(r"[ \t\n\r]*")


def _decode_object(
    text: str, streamed: Mapping[str, tuple[str, Callable[[Iterator[Any]], Any]]]
) -> tuple[dict[str, Any], set[str]]:
    """`json.loads(text)` for a JSON object (anything else is a ValueError), except
    that a member named in `streamed` whose value opens with the bracket given is
    handed to its function element by element (an array's values, an object's
    (key, value) pairs, each decoded on its own) and the function's answer is the
    member's value. Also returns which members were streamed (the last of
    duplicate keys counts, as for json.loads)."""
    out: dict[str, Any] = {}
    done: set[str] = set()
    idx = _skip(text, _expect(text, _skip(text, 0), "{"))
    if text.startswith("}", idx):
        idx += 1
    else:
        while True:
            key, idx = _member_key(text, idx)
            stream = streamed.get(key)
            if stream is not None and text.startswith(stream[0], idx):
                elements = _Elements(text, idx)
                out[key] = stream[1](iter(elements))
                if elements.end < 0:
                    raise ValueError(f"{key!r} was not read to its end")
                idx = elements.end
                done.add(key)
            else:
                out[key], idx = _DECODER.raw_decode(text, idx)
                done.discard(key)
            idx = _skip(text, idx)
            if text.startswith("}", idx):
                idx += 1
                break
            idx = _skip(text, _expect(text, idx, ","))
    if _skip(text, idx) != len(text):
        raise ValueError(f"extra data after the results object at {idx}")
    return out, done


class _Elements:
    """The elements of the array (values) or object ((key, value) pairs) that
    opens at `text[start]`, decoded one at a time; `end` is the index past its
    closing bracket once they are all read (-1 until then)."""

    def __init__(self, text: str, start: int) -> None:
        self.text, self.start, self.end = text, start, -1

    def __iter__(self) -> Iterator[Any]:
        text = self.text
        pairs = text[self.start] == "{"
        close = "}" if pairs else "]"
        idx = _skip(text, self.start + 1)
        if text.startswith(close, idx):
            self.end = idx + 1
            return
        while True:
            if pairs:
                key, idx = _member_key(text, idx)
                value, idx = _DECODER.raw_decode(text, idx)
                yield key, value
            else:
                value, idx = _DECODER.raw_decode(text, idx)
                yield value
            idx = _skip(text, idx)
            if text.startswith(close, idx):
                self.end = idx + 1
                return
            idx = _skip(text, _expect(text, idx, ","))


def _member_key(text: str, idx: int) -> tuple[str, int]:
    """An object member's key at `idx` and where its value starts."""
    # json.decoder.scanstring exists (the C scanner's fallback) but typeshed omits it
    key, idx = json.decoder.scanstring(text, _expect(text, idx, '"'))  # type: ignore[attr-defined]
    return key, _skip(text, _expect(text, _skip(text, idx), ":"))


def _skip(text: str, idx: int) -> int:
    match = _SPACE.match(text, idx)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _expect(text: str, idx: int, char: str) -> int:
    """The index past `char`, which must be at `idx`."""
    if not text.startswith(char, idx):
        raise ValueError(f"expected {char!r} at {idx} in the results file")
    return idx + 1


def _bootstrap_problem(log: Path) -> str:
    with contextlib.suppress(OSError):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("andgate-bootstrap: "):
                return line.removeprefix("andgate-bootstrap: ").strip()
    return "pytest is not importable"


def log_tail(log: Path, lines: int = 3) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])


def merge_results(label: str, parts: Sequence[RunResult]) -> RunResult:
    """One result from the shards of a class; any shard's error is the class's error."""
    if len(parts) == 1:
        return parts[0]
    errors = [p.error for p in parts if p.error]
    return RunResult(
        label=label,
        exit_code=max((p.exit_code for p in parts if p.exit_code is not None), default=None),
        seconds=max(p.seconds for p in parts),
        items=tuple(i for p in parts for i in p.items),
        reports={k: v for p in parts for k, v in p.reports.items()},
        seeds={k: v for p in parts for k, v in p.seeds.items()},
        collection_errors=tuple(e for p in parts for e in p.collection_errors),
        error="; ".join(errors) if errors else None,
        unscanned=tuple(u for p in parts for u in p.unscanned),
    )


def collection_error_line(nodeid: str, message: str, where: str = "") -> str:
    """A collection error in one line: where, and pytest's last line (the error)."""
    last = (message.splitlines() or [""])[-1]
    return f"{nodeid or '<session>'}{where}: {last}"[:300]


def collection_error_lines(result: RunResult) -> tuple[str, ...]:
    """One line per collection error of a process, naming the process."""
    where = f" ({result.label} process)"
    return tuple(collection_error_line(n, m, where) for n, m in result.collection_errors)


def class_facts(result: RunResult | None, role: Role) -> ClassFacts:
    """A class process's facts: each of its items' outcome, its collection errors,
    and why it could not run (None: it never ran, which is no pass either)."""
    if result is None:
        return ClassFacts()
    return ClassFacts(
        results=tuple(
            ItemResult(
                i.facts.nodeid, result.outcome(i.facts.nodeid), result.message(i.facts.nodeid)
            )
            for i in result.selected(role)
        ),
        collection_errors=collection_error_lines(result),
        error=result.error,
    )
