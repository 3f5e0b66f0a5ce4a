"""What the author was given: base's files outside the test side. A literal (or an
example's input and output together) base gives the author is one the change may
use: the README's example, a docstring, a data file. Read on first use and once
(`Corpus`): it can be most of a repository. Pure: callers give bytes.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from andgate.check.production.common import PYTHON_SUFFIXES, decode, parse
from andgate.check.production.folding import folded_values
from andgate.check.production.literals import LiteralKey, is_trivial, literal_key, parts

GIVEN_PYTHON = frozenset({*PYTHON_SUFFIXES, ".pyi"})


class Corpus:
    """What the author was given: base's files outside the test side, read on first
    use (it can be most of a repository). A literal is given when a Python file
    holds it as a literal (however its source spells it: implicit concatenation,
    escapes, another quote, pieces it computes) or any file's text or name holds it;
    a sequence, when each of its items is; a format template (`"no such option: {}"`),
    when base holds its text with placeholders of any style (`%s`, `{name}`, an
    f-string's)."""

    def __init__(self, files: Iterable[tuple[str, bytes]]) -> None:
        self._files = files
        self._texts: list[tuple[str, str]] = []
        self._literals: dict[LiteralKey, str] | None = None
        self._shapes: dict[str, str] = {}
        self._by_path: dict[str, frozenset[LiteralKey]] = {}

    def where(self, key: LiteralKey) -> str | None:
        """A file that holds the literal, or None."""
        if self._literals is None:
            self._read()
        assert self._literals is not None
        if key in self._literals:
            return self._literals[key]
        if key[0] in ("seq", "dict"):
            places = [self.where(item) for item in parts(key) if not is_trivial(item)]
            return places[0] if places and all(places) else None
        shape = template_shape(key)
        if shape is not None and shape in self._shapes:
            return self._shapes[shape]
        pattern = literal_pattern(key)
        return next((path for path, text in self._texts if pattern.search(text)), None)

    def together(self, first: LiteralKey, second: LiteralKey) -> str | None:
        """A file that holds both (an example's input and its output): as literals of
        a Python file, or in any file's text."""
        if self._literals is None:
            self._read()
        for path, text in self._texts:
            held = self._by_path.get(path, frozenset())
            if all(key in held or self._in_text(key, text) for key in (first, second)):
                return path
        return None

    @staticmethod
    def _in_text(key: LiteralKey, text: str) -> bool:
        if key[0] in ("seq", "dict"):
            items = [item for item in parts(key) if not is_trivial(item)]
            return bool(items) and all(Corpus._in_text(item, text) for item in items)
        return literal_pattern(key).search(text) is not None

    def _read(self) -> None:
        self._literals, self._shapes, self._by_path = {}, {}, {}
        paths = []
        for path, data in self._files:
            paths.append(path)
            self._texts.append((path, decode(data)))
            if PurePosixPath(path).suffix in GIVEN_PYTHON:
                self._by_path[path] = file_literals(data)
                for key in self._by_path[path]:
                    self._literals.setdefault(key, path)
                    shape = template_shape(key)
                    if shape is not None:
                        self._shapes.setdefault(shape, path)
        # A file's or folder's name is given too (`locale/it_IT/`: the locale `it_IT`).
        self._texts.append(("base's file names", "\n".join(paths)))


@functools.lru_cache(maxsize=4096)
def file_literals(data: bytes) -> frozenset[LiteralKey]:
    """Every literal a Python file holds, docstrings included, and every value it
    computes from literals (`folding.py`: `"The Lord of " + "the Rings"` gives the
    whole title). Cached: a history measurement asks for the same files at every
    commit."""
    tree = parse(data)
    if tree is None:
        return frozenset()
    found = {k for k in map(literal_key, ast.walk(tree)) if k is not None}
    return frozenset(found | {f.key for f in folded_values(tree)})


# A placeholder of str.format, an f-string or %-formatting: `{}`, `{name!r}`, `%s`, `%(n)d`.
PLACEHOLDER = re.compile(r"\{[^{}]*\}|%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifgxXeEc]")


def template_shape(key: LiteralKey) -> str | None:
    """A format template's text with each placeholder as NUL; None for anything else."""
    kind, value = key
    if kind != "str" or not PLACEHOLDER.search(str(value)):
        return None
    return PLACEHOLDER.sub("\0", str(value))


def literal_pattern(key: LiteralKey) -> re.Pattern[str]:
    """How a string or number reads in a file's text: a string's characters (also
    as a Python literal would escape them; a template's placeholders in any style),
    a number's digits."""
    kind, value = key
    if kind in ("str", "bytes"):
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        forms = {text, repr(text)[1:-1]}
        return re.compile("|".join(sorted(_text_pattern(form) for form in forms)))
    return re.compile(rf"(?<![\w.]){re.escape(repr(value))}(?![\w.])")


def _text_pattern(text: str) -> str:
    pieces = PLACEHOLDER.split(text)
    return f"(?:{PLACEHOLDER.pattern})".join(re.escape(piece) for piece in pieces)
