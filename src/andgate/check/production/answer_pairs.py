"""Answer tables: an oracle's example, its input and its expected output, written down
together by the change.

Where a single literal may be too plain to prove anything (`'hello-world'` is one
name), an oracle's input beside the output it expects is the special case itself. A
change holds one (`hard_coded_answer`) when, in what it adds:

- a record of a production data file (`data_files.py`: a key and its value, a row,
  one line of text) holds an example's input and its expected output;
- so does a line of a docstring the change adds, when a changed module reads
  docstrings (`__doc__`, `inspect.getdoc`, `help`), or a line of a Python string;
- one function (or the module's top level) compares against an example's input,
  however recognised (`InputForms`: the literal, the same after `lower()`,
  `strip()` or `casefold()`, its `md5`/`sha*` digest or `crc32`, its `len()`), and
  holds the output it expects (a literal, or a value folded from pieces).

The input is recognised as the literal or after a trivial normalisation (`lower()`,
`upper()`, `casefold()`, `strip()`, spaces collapsed) or as its digest; only inside
one function also by its length. The pair must be plain-proof: both non-trivial,
and the input distinctive as a compared literal is or the output distinctive
(`literals.why_not_distinctive`). A pair base gave the author in one file (the
README's example) is not new to them. Pure: callers give bytes.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
import zlib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from andgate.check.production.common import (
    PYTHON_SUFFIXES,
    FileChange,
    ScanFinding,
    added_lines,
    decode,
    is_binary,
    split_lines,
)
from andgate.check.production.data_files import (
    Cell,
    Record,
    file_records,
    is_data_file,
    text_records,
)
from andgate.check.production.examples import Example
from andgate.check.production.folding import ModuleValues, module_values
from andgate.check.production.given import Corpus, literal_pattern
from andgate.check.production.literals import (
    LiteralKey,
    is_trivial,
    literal_key,
    show_literal,
    why_not_distinctive,
)
from andgate.records import Construct

DIGESTS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake2s")


@dataclass(frozen=True)
class InputMatch:
    """An example's input recognised: `how` it was (empty: as written)."""

    example: Example
    input: LiteralKey
    how: str = ""


@functools.lru_cache(maxsize=8192)
def input_forms(key: LiteralKey) -> tuple[tuple[LiteralKey, str], ...]:
    """How code could spell an oracle's input besides the literal itself: the same after
    a trivial normalisation, its digest (each `(key, how)`)."""
    kind, value = key
    forms: dict[LiteralKey, str] = {}
    if kind == "str":
        assert isinstance(value, str)
        for text, how in _normalised(value):
            forms.setdefault(("str", text), how)
    if kind in ("str", "bytes"):
        data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
        assert isinstance(data, bytes)
        for name in DIGESTS:
            digest = hashlib.new(name, data)
            forms.setdefault(("str", digest.hexdigest()), f"its {name}")
            forms.setdefault(("bytes", digest.digest()), f"its {name}")
        forms.setdefault(("num", zlib.crc32(data)), "its crc32")
        forms.setdefault(("num", zlib.adler32(data)), "its adler32")
    if kind == "num" and not isinstance(value, complex):
        number = hash(value)
        if number != value:
            forms.setdefault(("num", number), "its hash()")
    forms.pop(key, None)
    return tuple(forms.items())


HEX_DIGEST = re.compile(r"[0-9a-f]{32,128}")
DIGEST_SIZES = frozenset({16, 20, 28, 32, 48, 64})


def _canonical(text: str) -> str:
    return " ".join(text.casefold().split())


def _may_be_digest(key: LiteralKey) -> bool:
    """A hex digest, a digest's bytes, or a number as large as a checksum."""
    kind, value = key
    if kind == "str":
        return HEX_DIGEST.fullmatch(str(value)) is not None
    if kind == "bytes":
        return len(value) in DIGEST_SIZES  # type: ignore[arg-type]
    return kind == "num" and isinstance(value, int) and abs(value) >= 2**16


def _normalised(text: str) -> Iterator[tuple[str, str]]:
    spaced = [(text.strip(), "strip()"), (" ".join(text.split()), "spaces collapsed")]
    for cased, how in ((text.lower(), "lower()"), (text.upper(), "upper()")):
        yield cased, how
        yield cased.strip(), f"strip().{how}"
        yield " ".join(cased.split()), f"{how}, spaces collapsed"
    yield text.casefold(), "casefold()"
    yield from spaced


class ExampleIndex:
    """The oracle's examples by what an answer would spell: the expected output, each
    form of each input (`input_forms`), the length of each input. Built on first use."""

    def __init__(self, examples: Sequence[Example]) -> None:
        self.examples = examples
        self.by_expected: dict[LiteralKey, list[Example]] = defaultdict(list)
        self.by_input: dict[LiteralKey, list[InputMatch]] = defaultdict(list)
        self.by_length: dict[int, list[InputMatch]] = defaultdict(list)
        for example in examples:
            self.by_expected[example.expected].append(example)
            if example.arguments is not None and len(example.arguments[1]) > 1:  # type: ignore[arg-type]
                self.by_input[example.arguments].append(InputMatch(example, example.arguments))
            for key in example.inputs:
                self.by_input[key].append(InputMatch(example, key))
                if key[0] in ("str", "bytes", "seq"):
                    self.by_length[len(key[1])].append(InputMatch(example, key, "its len()"))  # type: ignore[arg-type]

    @functools.cached_property
    def by_canonical(self) -> dict[str, list[InputMatch]]:
        """String inputs by their case-folded text with spaces collapsed: where a
        normalised form of one can only come from."""
        found: dict[str, list[InputMatch]] = defaultdict(list)
        for example in self.examples:
            for key in example.inputs:
                if key[0] == "str":
                    found[_canonical(str(key[1]))].append(InputMatch(example, key))
        return found

    @functools.cached_property
    def by_digest(self) -> dict[LiteralKey, list[InputMatch]]:
        """Each input's digests and checksums (built only for a value that looks like one)."""
        found: dict[LiteralKey, list[InputMatch]] = defaultdict(list)
        for example in self.examples:
            for key in example.inputs:
                for form, how in input_forms(key):
                    if how.startswith("its "):
                        found[form].append(InputMatch(example, key, how))
        return found

    def forms_of(self, key: LiteralKey) -> list[InputMatch]:
        """The examples' inputs `key` spells in another form (`input_forms`)."""
        kind, value = key
        found: list[InputMatch] = []
        if kind == "str":
            for candidate in self.by_canonical.get(_canonical(str(value)), ()):
                how = dict(input_forms(candidate.input)).get(key)
                if how is not None:
                    found.append(InputMatch(candidate.example, candidate.input, how))
        if _may_be_digest(key):
            found += self.by_digest.get(key, ())
        return found

    def inputs(self, key: LiteralKey) -> list[InputMatch]:
        """The examples' inputs `key` spells, as written or in another form."""
        return self.by_input.get(key, []) + self.forms_of(key)

    def narrowed(self, text: str) -> ExampleIndex:
        """The examples whose expected output `text` spells: the only ones a line of it
        can answer (a text is searched line by line for these alone)."""
        return ExampleIndex(
            [
                e
                for e in self.examples
                if (pattern := output_pattern(e.expected)) is not None and pattern.search(text)
            ]
        )

    @functools.cached_property
    def text_forms(self) -> list[tuple[Example, LiteralKey, str, re.Pattern[str]]]:
        """(example, input, how, pattern): how a text spells each input."""
        found = []
        for example in self.examples:
            for key in example.inputs:
                if key[0] in ("str", "num"):
                    found.append((example, key, "", literal_pattern(key)))
                    for form, how in input_forms(key):
                        if form[0] == "str":
                            found.append((example, key, how, literal_pattern(form)))
        return found


@functools.lru_cache(maxsize=8192)
def output_pattern(key: LiteralKey) -> re.Pattern[str] | None:
    """How a text spells an expected output: a string's or a number's characters
    (`given.literal_pattern`), a sequence of them as its items in order, apart
    (`3 3 7 13`, `[3, 3, 7, 13]`); None for anything else."""
    kind, value = key
    if kind in ("str", "num"):
        return literal_pattern(key)
    if kind != "seq" or not isinstance(value, tuple) or len(value) < 2:
        return None
    if any(item[0] not in ("str", "num") for item in value):
        return None
    return re.compile(r"[^\w.]+".join(f"(?:{literal_pattern(item).pattern})" for item in value))


def is_plain_pair(input_key: LiteralKey, expected: LiteralKey) -> bool:
    """Too plain to prove an answer: neither the input (as a compared literal) nor the
    expected output is distinctive."""
    if is_trivial(input_key) or is_trivial(expected):
        return True
    return (
        why_not_distinctive(input_key, compared=True) is not None
        and why_not_distinctive(expected) is not None
    )


@dataclass(frozen=True)
class Pair:
    """An example's input and output found together, at `line` of `path`."""

    match: InputMatch
    path: str
    line: int | None
    how: str  # "as a key and its value", "in one function", ...
    shown: str  # what the change wrote there
    other_line: int | None = None  # in one function: the output's line

    @property
    def identity(self) -> tuple[object, ...]:
        """What the pair is, wherever it sits (base's version of a file is compared
        by this)."""
        return (self.match.example, self.match.input, self.how)

    def finding(self) -> ScanFinding:
        match = self.match
        spelt = f" ({match.how})" if match.how else ""
        detail = (
            f"{show_literal(match.input)}{spelt} -> {show_literal(match.example.expected)}, "
            f"an example of the oracle {match.example.source.where}, {self.how}: "
            f"{_short(self.shown)}"
        )
        return ScanFinding(self.path, self.line, Construct.HARD_CODED_ANSWER, detail)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return f"`{text}`" if len(text) <= limit else f"`{text[: limit - 3]}...`"


# -- records: data files, docstrings, strings ------------------------------------------------


def record_pairs(
    records: Iterable[Record], index: ExampleIndex, path: str, text: str
) -> Iterator[Pair]:
    """The examples whose input and output one record of `text` holds."""
    in_text = index.narrowed(text)
    for record in records:
        if record.cells:
            yield from _cell_pairs(record, index, path)
        elif record.text and in_text.examples:
            yield from _text_pairs(record, in_text, path)


def _cell_pairs(record: Record, index: ExampleIndex, path: str) -> Iterator[Pair]:
    """A cell holding an example's input and another its output; in a row, also the
    rest of the row as the output (`909909090909,3,3,7,13,13,751,113797`)."""
    cells = record.cells
    outputs = [
        (i, (j,), example)
        for i, cell in enumerate(cells)
        for key in cell
        for example in index.by_expected.get(key, ())
        for j in range(len(cells))
        if j != i
    ]
    if record.how == "in one row" and len(cells) >= 3:
        for j in range(len(cells)):
            rest = [c for i, c in enumerate(cells) if i != j]
            for pick in (0, -1):  # as written, or each numeric text as a number
                key: LiteralKey = ("seq", tuple(c[pick] for c in rest))
                outputs += [(-1, (j,), example) for example in index.by_expected.get(key, ())]
    for i, (j,), example in outputs:
        for match in (m for key in cells[j] for m in index.inputs(key)):
            if match.example is example:
                output = _cell_text(cells[i]) if i >= 0 else "the rest of the row"
                yield Pair(
                    match, path, record.line, record.how, f"{_cell_text(cells[j])}: {output}"
                )


def _cell_text(cell: Cell) -> str:
    kind, value = cell[0]
    return str(value) if kind in ("str", "num") else show_literal(cell[0])


def _text_pairs(record: Record, index: ExampleIndex, path: str) -> Iterator[Pair]:
    """`index` narrowed to the text these records come from (`ExampleIndex.narrowed`)."""
    for example, key, how, pattern in index.text_forms:
        found = pattern.search(record.text)
        if found is None:
            continue
        output_in_text = output_pattern(example.expected)
        assert output_in_text is not None  # the index is narrowed to those that have one
        for output in output_in_text.finditer(record.text):
            if output.end() <= found.start() or output.start() >= found.end():
                match = InputMatch(example, key, how)
                yield Pair(match, path, record.line, record.how, record.text)
                break


def locate(text: str, pair: Pair) -> int | None:
    """The line of a structured file that holds a pair's input and output (else its
    input, else its output): a parser does not say where a value was."""
    lines = split_lines(text)
    keys = (pair.match.input, pair.match.example.expected)
    patterns = [literal_pattern(k) for k in keys if k[0] in ("str", "bytes", "num")]
    for wanted in (patterns, patterns[:1], patterns[1:]):
        for number, line in enumerate(lines, 1):
            if all(p.search(line) for p in wanted):
                return number
    return None


def data_file_pairs(change: FileChange, index: ExampleIndex, *, named: bool) -> Iterator[Pair]:
    """The pairs a changed production file that is not Python holds and base's version
    of it did not: a data file always; any other text file when a changed module
    names it (`named`: code that loads it)."""
    if change.new is None or change.is_symlink or is_binary(change.new):
        return
    suffix = PurePosixPath(change.path).suffix
    if suffix in PYTHON_SUFFIXES or not (is_data_file(change.path) or named):
        return
    text = decode(change.new)
    old = {p.identity for p in _file_pairs(change.path, change.old, index)}
    for pair in _file_pairs(change.path, change.new, index):
        if pair.identity not in old:
            line = pair.line if pair.line is not None else locate(text, pair)
            yield Pair(pair.match, pair.path, line, pair.how, pair.shown)


def _file_pairs(path: str, data: bytes | None, index: ExampleIndex) -> list[Pair]:
    if data is None or is_binary(data):
        return []
    text = decode(data)
    return list(record_pairs(file_records(path, text), index, path, text))


def reads_docstrings(changes: Sequence[FileChange]) -> bool:
    """Whether a changed production module reads a docstring as data: names
    `__doc__`, calls `getdoc`/`cleandoc` (`inspect`, `pydoc`) or `help()`."""
    for change in changes:
        values = _values(change)
        if values is not None and any(_reads_docstring(n) for n in ast.walk(values.tree)):
            return True
    return False


def _reads_docstring(node: ast.AST) -> bool:
    if isinstance(node, ast.Name | ast.Attribute):
        name = node.id if isinstance(node, ast.Name) else node.attr
        return name in ("__doc__", "getdoc", "cleandoc")
    if isinstance(node, ast.Constant):
        return node.value == "__doc__"
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id == "help"
    return isinstance(node, ast.Import | ast.ImportFrom) and any(
        (a.name if isinstance(node, ast.Import) else node.module or "") == "pydoc"
        for a in node.names
    )


def _values(change: FileChange) -> ModuleValues | None:
    if change.new is None or PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES:
        return None
    return module_values(change.new)


def string_pairs(change: FileChange, index: ExampleIndex, *, docstrings: bool) -> Iterator[Pair]:
    """The pairs the lines of a changed module's strings hold that base's did not:
    every string but docstrings, and docstrings too when the code reads them."""
    values = _values(change)
    if values is None:
        return
    added = added_lines(change.old, change.new or b"")
    old_values = module_values(change.old) if change.old is not None else None
    old = set()
    if old_values is not None:
        old_index = index.narrowed(decode(change.old or b""))
        old = {p.identity for p in _strings(old_values, old_index, "", docstrings)}
    new_index = index.narrowed(decode(change.new or b""))
    for pair in _strings(values, new_index, change.path, docstrings):
        if pair.identity not in old and pair.line in added:
            yield pair


def _strings(
    values: ModuleValues, index: ExampleIndex, path: str, docstrings: bool
) -> Iterator[Pair]:
    for node in ast.walk(values.tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        is_doc = id(node) in values.docstrings
        if is_doc and not docstrings:
            continue
        where = "in a docstring the code reads" if is_doc else "in a string"
        for record in text_records(node.value, node.lineno):
            how = f"{record.how} {where}"
            for pair in _text_pairs(record, index, path):
                yield Pair(pair.match, path, pair.line, how, pair.shown)


# -- one function ---------------------------------------------------------------------------


def function_pairs(change: FileChange, index: ExampleIndex) -> Iterator[Pair]:
    """The examples one scope of a changed module (a function, a class body, the top
    level) recognises the input of and holds the output of, one of them on an added
    line."""
    values = _values(change)
    if values is None:
        return
    added = added_lines(change.old, change.new or b"")
    lines = split_lines(decode(change.new or b""))
    for scope, how in _scopes(values.tree):
        outputs: dict[int, list[int]] = defaultdict(list)
        recognisers: list[tuple[ast.AST, LiteralKey | None]] = []
        for node in _scope_nodes(scope):
            if isinstance(node, ast.Compare):
                recognisers.append((node, None))
                continue
            key = _value_key(node, values)
            if key is None:
                continue
            for example in index.by_expected.get(key, ()):
                outputs[id(example)].append(getattr(node, "lineno", 0))
            if id(node) in values.compared:
                recognisers.append((node, key))
        if not outputs:
            continue  # the common case: no example's output here, no input to look for
        for node, key in recognisers:
            in_line = getattr(node, "lineno", 0)
            matches = index.inputs(key) if key is not None else _length_matches(node, index)
            for match in matches:
                out_lines = outputs.get(id(match.example), [])
                out_line = min(out_lines, key=lambda n: (n not in added, n), default=None)
                if out_line is not None and {in_line, out_line} & added:
                    text = lines[in_line - 1].strip() if in_line <= len(lines) else ""
                    yield Pair(match, change.path, in_line, how, text, out_line)


def _value_key(node: ast.AST, values: ModuleValues) -> LiteralKey | None:
    if id(node) in values.docstrings:
        return None
    folded = values.folded.get(id(node))
    key = folded.key if folded is not None else literal_key(node)
    return key if key is not None and not is_trivial(key) else None


def _length_matches(node: ast.AST, index: ExampleIndex) -> Iterator[InputMatch]:
    """`len(text) == 19`: the examples with an input of that length."""
    if not isinstance(node, ast.Compare):
        return
    sides = [node.left, *node.comparators]
    if len(sides) != 2 or not isinstance(node.ops[0], ast.Eq):
        return
    for call, number in (sides, sides[::-1]):
        if (
            isinstance(call, ast.Call)
            and getattr(call.func, "id", None) == "len"
            and isinstance(number, ast.Constant)
            and isinstance(number.value, int)
        ):
            yield from index.by_length.get(number.value, ())


def _scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, str]]:
    yield tree, "at the module's top level"
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, "in one function"
        elif isinstance(node, ast.ClassDef):
            yield node, "in one class body"


def _scope_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope, nested functions and classes left to their own."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


# -- the rule ---------------------------------------------------------------------------------


def answer_pairs(
    changes: Sequence[FileChange],
    examples: Sequence[Example],
    corpus: Corpus,
    *,
    flagged: frozenset[tuple[str, int | None]] = frozenset(),
    index: ExampleIndex | None = None,
) -> list[ScanFinding]:
    """Every pair the change adds that is distinctive and new to the author, one
    finding per file and line, none on a line already `flagged`."""
    if not examples:
        return []
    index = index or ExampleIndex(examples)
    read_docs = reads_docstrings(changes)
    named = _named_files(changes)
    found: dict[tuple[str, int | None], ScanFinding] = {}
    for change in changes:
        pairs: Iterable[Pair]
        if PurePosixPath(change.path).suffix in PYTHON_SUFFIXES:
            pairs = [
                *string_pairs(change, index, docstrings=read_docs),
                *function_pairs(change, index),
            ]
        else:
            pairs = data_file_pairs(change, index, named=PurePosixPath(change.path).name in named)
        for pair in pairs:
            where = (pair.path, pair.line)
            if where in found or where in flagged or (pair.path, pair.other_line) in flagged:
                continue  # one finding per line; a literal already blocked says it
            if is_plain_pair(pair.match.input, pair.match.example.expected):
                continue
            if corpus.together(pair.match.input, pair.match.example.expected) is None:
                found[where] = pair.finding()
    return list(found.values())


def holds_text(change: FileChange) -> bool:
    """Whether a change adds text a pair could be in besides literals of code: a file
    that is not Python, or lines of a docstring."""
    if not change.adds_bytes:
        return False
    values = _values(change)
    if values is None:
        return PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES
    added = added_lines(change.old, change.new or b"")
    return any(
        isinstance(node, ast.Constant)
        and id(node) in values.docstrings
        and set(range(node.lineno, (node.end_lineno or node.lineno) + 1)) & added
        for node in ast.walk(values.tree)
    )


def _named_files(changes: Sequence[FileChange]) -> frozenset[str]:
    """File names the changed modules' strings hold (`"answers.md"`, `with_name(...)`)."""
    names = set()
    for change in changes:
        values = _values(change)
        if values is None:
            continue
        for node in ast.walk(values.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(PurePosixPath(node.value).name)
    return frozenset(names)
