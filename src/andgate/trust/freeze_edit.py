"""Line-level edits of the freeze file that keep its comments, order and layout.

A YAML round trip through PyYAML would drop every comment, and owners write
why a test is frozen in those comments. So the file is parsed only to find
where things are (PyYAML's node marks give line and column), and the edit is
done on the text: an entry block is appended after the last line of the
`freezes:` list, or an entry's own lines are removed. The caller re-parses the
result with `andgate.trust.freeze` and refuses to write anything that does not
validate to exactly the intended entries.

Only the layouts the contract shows are edited: a block list (any indent,
dash on the entry's line or alone on its own), `freezes: []`, `freezes:` with
no value, a file of comments only, or no file. A non-empty flow list
(`freezes: [{...}]`) is refused with the fix, never rewritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import yaml

from andgate.errors import FreezeEditError
from andgate.trust.manifest import StrictLoader

BOM = "\ufeff"
# YAML's line breaks (and PyYAML's line count); str.splitlines knows more.
LINE = re.compile(r"[^\r\n\x85\u2028\u2029]*(?:\r\n|[\r\n\x85\u2028\u2029])")
ENTRY_KEYS = ("id", "reason", "first_seen", "expires", "owner")


@dataclass(frozen=True)
class Layout:
    """Where the `freezes:` key and its list are in the text."""

    lines: list[str]
    key: yaml.Node | None
    value: yaml.Node | None
    newline: str


def split_lines(text: str) -> list[str]:
    """Lines with their line breaks, split exactly where YAML counts lines."""
    lines = LINE.findall(text)
    rest = text[sum(map(len, lines)) :]
    return [*lines, rest] if rest else lines


def yaml_string(value: str) -> str:
    """A double-quoted YAML scalar (JSON escapes are YAML escapes). Characters
    YAML reads as line breaks are escaped too, so a value stays one line."""
    quoted = json.dumps(value, ensure_ascii=False)
    for char in ("\x85", "\u2028", "\u2029"):
        quoted = quoted.replace(char, f"\\u{ord(char):04x}")
    return quoted


def _layout(text: str, source: str) -> Layout:
    lines = split_lines(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    try:
        root = yaml.compose(text, Loader=StrictLoader)
    except yaml.YAMLError as exc:
        raise FreezeEditError(f"{source}: invalid YAML; fix the syntax first ({exc})") from exc
    if root is None:
        return Layout(lines, None, None, newline)
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise FreezeEditError(
            f"{source}: expected a block mapping with a 'freezes' list; "
            "write it as in the contract (freezes: followed by '- id: ...' entries)"
        )
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "freezes":
            return Layout(lines, key, value, newline)
    raise FreezeEditError(f"{source}: no 'freezes' key; add `freezes: []` at the top level")


def _is_flow(node: yaml.Node) -> bool:
    return bool(getattr(node, "flow_style", False))


def _entry_lines(entry: Mapping[str, str], dash_col: int, key_col: int, nl: str) -> list[str]:
    keys = [k for k in ENTRY_KEYS if k in entry] + [k for k in entry if k not in ENTRY_KEYS]
    lines = []
    for number, key in enumerate(keys):
        lead = (
            " " * dash_col + "-" + " " * (key_col - dash_col - 1) if number == 0 else " " * key_col
        )
        lines.append(f"{lead}{key}: {yaml_string(entry[key])}{nl}")
    return lines


def _end_line(node: yaml.Node, lines: list[str]) -> int:
    """The last line that holds text of `node` (a block scalar's end mark sits
    at the start of the next line; blank lines after it are not the node's)."""
    while (
        isinstance(node, (yaml.MappingNode, yaml.SequenceNode))
        and node.value
        and not _is_flow(node)
    ):
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    mark = node.end_mark
    line = mark.line if mark.column > 0 else mark.line - 1
    while line > node.start_mark.line and not lines[line].strip():
        line -= 1
    return line


def _ensure_final_newline(lines: list[str], nl: str) -> None:
    if lines and not LINE.fullmatch(lines[-1]):
        lines[-1] += nl


def _cut(line: str, start: int, end: int) -> str:
    """`line` without columns [start, end), keeping what came after (a comment)."""
    head, tail = line[:start].rstrip(" "), line[end:]
    return head + (" " + tail.lstrip(" ") if tail.strip() else tail.lstrip(" "))


def add_entry(text: str, entry: Mapping[str, str], source: str) -> str:
    """`text` with `entry` appended as the last item of the freezes list."""
    bom = text.startswith(BOM)
    layout = _layout(text.removeprefix(BOM), source)
    lines, nl = list(layout.lines), layout.newline
    _ensure_final_newline(lines, nl)
    key, value = layout.key, layout.value
    if key is None or value is None:
        lines += [f"freezes:{nl}", *_entry_lines(entry, 2, 4, nl)]
    elif isinstance(value, yaml.SequenceNode) and value.value and not _is_flow(value):
        dash_col = value.start_mark.column
        first = value.value[0]
        same_line = first.start_mark.line == value.start_mark.line
        key_col = first.start_mark.column if same_line else dash_col + 2
        at = _end_line(value, lines) + 1
        lines[at:at] = _entry_lines(entry, dash_col, key_col, nl)
    elif _is_empty_value(value):
        row = key.start_mark.line
        if value.start_mark.line == row and value.end_mark.line == row:
            lines[row] = _cut(lines[row], value.start_mark.column, value.end_mark.column)
        lines[row + 1 : row + 1] = _entry_lines(
            entry, key.start_mark.column + 2, key.start_mark.column + 4, nl
        )
    else:
        raise FreezeEditError(
            f"{source}: 'freezes' is not a block list andgate can append to; write it as "
            "'freezes:' followed by '  - id: ...' entries"
        )
    return (BOM if bom else "") + "".join(lines)


def _is_empty_value(node: yaml.Node) -> bool:
    if isinstance(node, yaml.ScalarNode):
        return node.tag == "tag:yaml.org,2002:null"
    return isinstance(node, yaml.SequenceNode) and not node.value


def remove_entries(text: str, indexes: Iterable[int], source: str) -> str:
    """`text` without the list items at `indexes` (their own lines only:
    comments above an entry are kept, since they may describe the list)."""
    drop = set(indexes)
    if not drop:
        return text
    bom = text.startswith(BOM)
    layout = _layout(text.removeprefix(BOM), source)
    value = layout.value
    if not isinstance(value, yaml.SequenceNode) or _is_flow(value):
        raise FreezeEditError(
            f"{source}: 'freezes' is not a block list; remove the entries by hand"
        )
    lines = list(layout.lines)
    dash_col = value.start_mark.column
    for index in sorted(drop, reverse=True):
        item = value.value[index]
        start = _dash_line(lines, item.start_mark.line, dash_col)
        del lines[start : _end_line(item, lines) + 1]
    if len(drop) == len(value.value):
        assert layout.key is not None
        _mark_empty(lines, layout.key)
    return (BOM if bom else "") + "".join(lines)


def _dash_line(lines: list[str], line: int, dash_col: int) -> int:
    """The line of the `-` that opens an item starting at `line` (the same
    line for `- id: x`, an earlier one for a dash alone on its line)."""
    while line > 0 and not (
        lines[line][dash_col : dash_col + 1] == "-" and not lines[line][:dash_col].strip()
    ):
        line -= 1
    return line


def _mark_empty(lines: list[str], key: yaml.Node) -> None:
    """`freezes:` with every entry gone becomes `freezes: []`, which says so."""
    row, col = key.start_mark.line, key.end_mark.column
    line = lines[row]
    colon = line.index(":", col)
    lines[row] = line[: colon + 1] + " []" + line[colon + 1 :]
