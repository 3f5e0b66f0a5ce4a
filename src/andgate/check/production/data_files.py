"""Production texts read as records: what a data file, a docstring or a string writes
down together.

An answer table need not be Python: `{"Hello World": "hello-world"}` in a JSON file
the code loads, `Hello World -> hello-world` under a docstring's "Examples" the code
parses from `__doc__`. A `Record` is values written down together, where an
example's input and output would sit side by side:

- a structured file (JSON, TOML, YAML, INI/CFG, CSV/TSV; `DATA_SUFFIXES`), parsed
  with the standard library or `yaml.safe_load`: each key with its value (and with
  the items of a list or object it holds), each object's values and each list of
  scalars as a row, each CSV row, each INI option; every string in it also as text;
- a text (a `.txt` file, a file that does not parse, a file the code names, a
  docstring, a Python string): each line, and a doctest's `>>>` line with the output
  line after it.

Pure: callers give bytes.
"""

from __future__ import annotations

import configparser
import csv
import io
import json
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

import yaml

from andgate.check.production.common import split_lines
from andgate.check.production.literals import LiteralKey, data_key

JSON_SUFFIXES = frozenset({".json", ".jsonl", ".geojson"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})
INI_SUFFIXES = frozenset({".ini", ".cfg", ".conf"})
CSV_SUFFIXES = frozenset({".csv", ".tsv"})
TEXT_SUFFIXES = frozenset({".txt", ".text", ".dat", ".data", ".tab", ".lst"})
DATA_SUFFIXES = (
    JSON_SUFFIXES | YAML_SUFFIXES | INI_SUFFIXES | CSV_SUFFIXES | TEXT_SUFFIXES | {".toml"}
)
NUMBER = re.compile(r"[-+]?(?:\d[\d_]*\.?\d*(?:[eE][-+]?\d+)?|\.\d+)")
MAX_CELLS = 200  # a row wider than this is a blob of data, read as its strings only


# A cell: the keys one written value stands for ("391" is the string and the number).
Cell = tuple[LiteralKey, ...]


@dataclass(frozen=True)
class Record:
    """Values written down together. `cells` for structured data; `text` for a line
    of text (matched by what it spells); `line` where it is, when known."""

    how: str  # "as a key and its value", "in one row", "on one line"
    cells: tuple[Cell, ...] = ()
    text: str = ""
    line: int | None = None


def is_data_file(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in DATA_SUFFIXES


def file_records(path: str, text: str) -> Iterator[Record]:
    """The records of a production file read as its kind says (a file that does not
    parse as its kind is read as text)."""
    suffix = PurePosixPath(path).suffix.lower()
    try:
        documents = _documents(suffix, text)
    except (ValueError, yaml.YAMLError, configparser.Error, csv.Error, RecursionError):
        documents = None
    if documents is None:
        yield from text_records(text)
        return
    for document in documents:
        yield from structure_records(document)


def _documents(suffix: str, text: str) -> list[object] | None:
    """The parsed documents, None to read the file as text; raises when it does not parse."""
    if suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if suffix in JSON_SUFFIXES:
        return [json.loads(text)]
    if suffix == ".toml":
        return [tomllib.loads(text)]
    if suffix in YAML_SUFFIXES:
        return list(yaml.safe_load_all(text))
    if suffix in INI_SUFFIXES:
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read_string(text)
        return [{name: dict(parser.items(name)) for name in parser.sections()}]
    if suffix in CSV_SUFFIXES:
        rows = list(csv.reader(io.StringIO(text), delimiter="\t" if suffix == ".tsv" else ","))
        return [rows]
    return None


def structure_records(document: object) -> Iterator[Record]:
    """Each key with its value, each row, and each string as text, at any depth."""
    todo = [document]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            items = list(value.items())[:MAX_CELLS]
            for key, item in items:
                yield Record("as a key and its value", (cell(key), cell(item)))
                inner = list(item.values()) if isinstance(item, dict) else item
                if isinstance(inner, list | tuple):
                    scalars = [cell(v) for v in inner[:MAX_CELLS] if _is_scalar(v)]
                    if scalars:
                        yield Record("as a key and its values", (cell(key), *scalars))
            row = [cell(v) for _, v in items if _is_cell(v)]
            if len(row) >= 2:
                yield Record("in one record", tuple(row))
            todo.extend(value.keys())
            todo.extend(value.values())
        elif isinstance(value, list | tuple):
            row = [cell(v) for v in value[:MAX_CELLS] if _is_cell(v)]
            if len(row) >= 2:
                yield Record("in one row", tuple(row))
            todo.extend(value)
        elif isinstance(value, str):
            yield from text_records(value)


def _is_scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _is_cell(value: object) -> bool:
    """A value a row holds as one cell: a scalar, or a list of scalars (an input list)."""
    if isinstance(value, list | tuple):
        return all(_is_scalar(item) for item in value)
    return _is_scalar(value)


def cell(value: object) -> Cell:
    """The keys a written value stands for: a string that spells a number is both."""
    key = data_key(value)
    keys: list[LiteralKey] = [key] if key is not None else [("str", str(value))]
    if isinstance(value, str) and NUMBER.fullmatch(value.strip()):
        number = _number(value.strip())
        if number is not None:
            keys.append(("num", number))
    return tuple(keys)


def _number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


# -- texts ---------------------------------------------------------------------------------

DOCTEST = re.compile(r"^\s*>>>\s")


def text_records(text: str, first_line: int = 1) -> Iterator[Record]:
    """Each line of a text (numbered from `first_line`), and a doctest's `>>>` line
    with the output line that follows it."""
    lines = split_lines(text)
    for index, line in enumerate(lines):
        if line.strip():
            yield Record("on one line", text=line, line=first_line + index)
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if DOCTEST.match(line) and following.strip() and not DOCTEST.match(following):
            both = f"{line}\n{following}"
            yield Record("as a doctest and its output", text=both, line=first_line + index)
