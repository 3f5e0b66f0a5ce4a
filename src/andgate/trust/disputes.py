"""Oracle disputes (contract section 4): a change says an oracle item contradicts the
specification, instead of editing it.

The disputes file (`disputes_file` in base's manifest, default `.andgate/disputes.yaml`)
is written by the change and read from head with the strict safe loader:

    disputes:
      - nodeid: "tests/oracles/test_text.py::test_slugify_words"
        reason: "the task says words are joined with underscores"

A dispute can only block. A malformed file blocks (ORACLE_DISPUTED naming the entry and
the fix); an entry whose node id equals exactly one oracle item base collected turns that
item's failure into ORACLE_DISPUTED (still a block); any other entry is DISPUTE_MOOT. No
dispute changes authorship, the oracle set, a replay or any bit.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from andgate.errors import AndgateError
from andgate.git import Git
from andgate.records import Dispute, DisputeFacts
from andgate.trust.freeze_edit import yaml_string
from andgate.trust.manifest import load_yaml
from andgate.verdict import escaped

FIELDS = ("nodeid", "reason")
MAX_REASON = 2000  # characters: a paragraph, not a document
SOURCE_LINES = 40  # lines of a disputed test's source shown to the reviewer
ENTRY_SHAPE = "each entry is a mapping with exactly nodeid and reason (strings)"
HEADER = (
    "# Oracle disputes: oracle tests this change says contradict the specification.\n"
    "# Written by `andgate dispute NODEID --reason TEXT`; `andgate check` blocks with\n"
    "# ORACLE_DISPUTED and shows each reason to the oracle's owner (docs/disputes.md).\n"
)


class DisputesFileError(AndgateError):
    """The disputes file is not of the schema (one line: file, entry, fix)."""


@dataclass(frozen=True)
class DisputeEntry:
    nodeid: str
    reason: str


@dataclass(frozen=True)
class SourceAtBase:
    """A disputed test as base has it: where it starts and its lines (for the reviewer)."""

    path: str
    line: int
    text: str


# -- the schema ---------------------------------------------------------------------------


def parse_disputes(text: bytes | str | None, source: str) -> tuple[DisputeEntry, ...]:
    """Every entry of the file; no file (None) or an empty one has none."""
    if text is None:
        return ()
    data = load_yaml(text, source, DisputesFileError)
    entries = _entries(data, source)
    parsed = [_entry(entry, index, source) for index, entry in enumerate(entries, 1)]
    seen: set[str] = set()
    for index, entry in enumerate(parsed, 1):
        if entry.nodeid in seen:
            raise DisputesFileError(
                f"{source}: entry {index} ({entry.nodeid}): disputed twice; keep one entry "
                "per oracle item"
            )
        seen.add(entry.nodeid)
    return tuple(parsed)


def _entries(data: Any, source: str) -> list[Any]:
    fix = "write `disputes:` followed by `- nodeid: ...` / `reason: ...` entries"
    if data is None:
        return []
    if not isinstance(data, Mapping):
        raise DisputesFileError(f"{source}: must be a mapping with a 'disputes' list; {fix}")
    for key in data:
        if key != "disputes":
            hint = difflib.get_close_matches(str(key), ["disputes"], n=1)
            fix_key = "did you mean 'disputes'?" if hint else "only 'disputes' is allowed"
            raise DisputesFileError(f"{source}: unknown key {key!r}; {fix_key}")
    entries = data.get("disputes")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise DisputesFileError(f"{source}: 'disputes' must be a list of entries; {fix}")
    return entries


def _entry(entry: Any, index: int, source: str) -> DisputeEntry:
    where = f"{source}: entry {index}"
    if not isinstance(entry, Mapping):
        raise DisputesFileError(f"{where}: not a mapping; {ENTRY_SHAPE}")
    nodeid = entry.get("nodeid")
    if isinstance(nodeid, str) and nodeid.strip():
        where += f" ({escaped(nodeid, 200)})"  # a message stays one line
    for key in entry:
        if key not in FIELDS:
            hint = difflib.get_close_matches(str(key), FIELDS, n=1)
            fix = f"did you mean {hint[0]!r}?" if hint else ENTRY_SHAPE
            raise DisputesFileError(f"{where}: unknown key {key!r}; {fix}")
    for field in FIELDS:
        value = entry.get(field)
        if not isinstance(value, str) or not value.strip():
            raise DisputesFileError(f"{where}: {field} is missing or empty; {ENTRY_SHAPE}")
    return DisputeEntry(_checked_nodeid(entry["nodeid"], where), _checked_reason(entry, where))


def _checked_nodeid(nodeid: str, where: str) -> str:
    nodeid = nodeid.strip()
    if not nodeid.isprintable():
        raise DisputesFileError(
            f"{where}: nodeid holds a line break or control character; give one node id "
            "as pytest prints it (path::test)"
        )
    return nodeid


def _checked_reason(entry: Mapping[str, Any], where: str) -> str:
    reason: str = entry["reason"].strip()
    if len(reason) > MAX_REASON:
        raise DisputesFileError(
            f"{where}: reason has {len(reason)} characters, over {MAX_REASON}; say in a "
            "paragraph which part of the specification the test contradicts"
        )
    if any(not (c.isprintable() or c in "\n\t") for c in reason):
        raise DisputesFileError(f"{where}: reason holds a control character; write plain text")
    return reason


# -- reading it in a check ----------------------------------------------------------------


@dataclass(frozen=True)
class DisputesRead:
    """The disputes file at head, read before any test runs, with each disputed
    test's source at base."""

    facts: DisputeFacts
    sources: Mapping[str, SourceAtBase]


def read_disputes(git: Git, base: str, head: str, path: str) -> DisputesRead:
    """The file named by base's manifest, as head has it. A malformed file is a
    problem (it blocks); its entries then count for nothing."""
    source = f"{path} (at {head[:12]})"
    try:
        entries = parse_disputes(_file_at(git, head, path, source), source)
    except DisputesFileError as exc:
        return DisputesRead(DisputeFacts(path=path, problem=str(exc)), {})
    disputes = tuple(Dispute(e.nodeid, e.reason) for e in entries)
    return DisputesRead(
        DisputeFacts(path=path, disputes=disputes), sources_at_base(git, base, entries)
    )


def _file_at(git: Git, commit: str, path: str, source: str) -> bytes | None:
    entries = [e for e in git.ls_tree(commit, [path]) if e.path == path]
    if not entries:
        return None
    if entries[0].kind != "blob" or entries[0].mode == "120000":
        raise DisputesFileError(f"{source}: not a regular file; commit the disputes as a file")
    return git.read_blob(commit, path)


def judged(facts: DisputeFacts, base_oracle: Collection[str] | None) -> DisputeFacts:
    """Each dispute with whether its node id is exactly one oracle item base collected
    (`base_oracle`: those node ids; None: base's collection did not complete)."""
    if base_oracle is None:
        return facts
    return replace(
        facts,
        disputes=tuple(
            replace(d, oracle_at_base=d.nodeid in base_oracle, hint=_hint(d.nodeid, base_oracle))
            for d in facts.disputes
        ),
    )


def _hint(nodeid: str, oracle: Collection[str]) -> str:
    """Why a node id is no oracle item, when a near one is."""
    if nodeid in oracle:
        return ""
    under = items_under(nodeid, oracle)
    if under:
        return f"it names {len(under)} oracle items, e.g. {under[0]}"
    close = closest(nodeid, oracle)
    return f"did you mean {close}?" if close else ""


def items_under(nodeid: str, ids: Iterable[str]) -> list[str]:
    """The ids a folder, file, class or unparametrised name stands for."""
    prefixes = (f"{nodeid}::", f"{nodeid}[", f"{nodeid.rstrip('/')}/")
    return sorted(n for n in ids if n.startswith(prefixes))


def closest(nodeid: str, ids: Iterable[str]) -> str | None:
    """The id a typo most likely meant (among its file's ids, when it names a file
    that has some: difflib over a whole large suite takes seconds)."""
    ids = list(ids)
    path = nodeid.split("::", 1)[0]
    same_file = [n for n in ids if n.startswith(f"{path}::")]
    found = difflib.get_close_matches(nodeid, same_file or ids, n=1, cutoff=0.8)
    return found[0] if found else None


# -- the disputed test's source at base -------------------------------------------------------


def sources_at_base(
    git: Git, base: str, entries: Iterable[DisputeEntry]
) -> dict[str, SourceAtBase]:
    found = {}
    for entry in entries:
        path = entry.nodeid.split("::", 1)[0]
        blob = git.read_blob(base, path)
        located = test_source(blob, entry.nodeid) if blob is not None else None
        if located is not None:
            found[entry.nodeid] = SourceAtBase(path, *located)
    return found


def test_source(source: bytes, nodeid: str) -> tuple[int, str] | None:
    """(first line, text) of the test function or method a node id names, decorators
    included, at most SOURCE_LINES lines; None when it cannot be found."""
    names = [part.split("[", 1)[0] for part in nodeid.split("::")[1:] if part]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    node = _find(tree, names)
    if node is None:
        return None
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = source.decode("utf-8", "replace").splitlines()[start - 1 : node.end_lineno]
    if len(lines) > SOURCE_LINES:
        lines = [*lines[:SOURCE_LINES], f"... ({len(lines) - SOURCE_LINES} more lines)"]
    return start, "\n".join(lines)


test_source.__test__ = False  # type: ignore[attr-defined]  # not a test, despite its name

Defn = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _find(node: ast.AST, names: Sequence[str]) -> Defn | None:
    if not names:
        return None
    for child in ast.iter_child_nodes(node):
        if isinstance(child, Defn) and child.name == names[0]:
            # A method the class does not define itself (inherited): show the class.
            return (_find(child, names[1:]) or child) if len(names) > 1 else child
    return None


# -- writing an entry (`andgate dispute`) ---------------------------------------------------


def with_entry(entries: Sequence[DisputeEntry], new: DisputeEntry) -> str:
    """The file with one more entry. Written whole, from the validated entries (the
    caller re-parses the result); the header says how the file is meant to be edited."""
    lines = [HEADER.rstrip("\n"), "disputes:"]
    for entry in (*entries, new):
        lines.append(f"  - nodeid: {yaml_string(entry.nodeid)}")
        lines.append(f"    reason: {yaml_string(entry.reason)}")
    return "\n".join(lines) + "\n"
