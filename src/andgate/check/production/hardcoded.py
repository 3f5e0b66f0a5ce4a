"""Hard-coded answers: production lines that know the oracle's examples.

The cheapest way to make an oracle pass without solving its task is to answer its
own examples: a table keyed by its inputs, an `if` chain on them, the expected
string returned for the one input that needs it. The oracle then passes, and no
test run can tell.

A literal on a line the change adds to production code is a hard-coded answer
(`hard_coded_answer`, PRODUCTION_SUSPICIOUS) when all of these hold:

- an oracle test at base holds the same literal (an input, an expected value, a
  parametrized case: any literal of its code, docstrings aside; or a value of an
  oracle's JSON fixture);
- it is distinctive (`why_not_distinctive`): a string of at least
  `MIN_STRING_CHARS` characters that is not one word or name, or a number with at
  least `MIN_SIGNIFICANT_DIGITS` significant digits; for a literal the added line
  compares against (`==`, `!=`, `in`, `is`, a dict key, a `match` case) the bar is lower
  (`MIN_COMPARED_CHARS`, and single words count) because a comparison with an
  oracle's input is the special case itself;
- it appears nowhere in what the author was given: base's files outside the test
  side (production code with its docstrings and comments, README, docs/, data
  files). A literal the documentation shows is one the author may use.

A literal an oracle holds that falls short of one of these stays the warning
ORACLE_LITERAL, which says why it did not block. An oracle parametrised over values
it imports from the project's packages is the warning ORACLE_FROM_PRODUCTION
(`oracle_parameters_from_production`): the change under review controls its
examples. What a literal is and which an oracle holds: `literals.py`. Pure:
callers give bytes.
"""

from __future__ import annotations

import ast
import decimal
import functools
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from andgate.check.production.common import (
    PYTHON_SUFFIXES,
    FileChange,
    ScanContext,
    ScanFinding,
    added_lines,
    decode,
    is_allowed,
    is_docstring,
    parse,
    split_lines,
    unique,
)
from andgate.check.production.literals import (
    LiteralKey,
    OracleSource,
    is_trivial,
    literal_key,
    oracle_literals,
    show_literal,
)
from andgate.check.production.rules import Family
from andgate.records import Construct

# -- distinctive ------------------------------------------------------------------------

# A string with fewer letters and digits is something anyone types ("yes", "__%s__").
MIN_STRING_CHARS = 6
# The bar for a literal the line compares against: the comparison is the special case.
MIN_COMPARED_CHARS = 4
# 123, 391, 3.14159: a number anyone might type has fewer significant digits.
MIN_SIGNIFICANT_DIGITS = 3
# A sequence of this many non-trivial items is distinctive even when each is plain.
MIN_SEQUENCE_ITEMS = 3
# One word or one name (`default`, `max_length`, `utf-8`): the vocabulary of code,
# typed into honest changes daily. Hyphens and dots join words of one name too.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)*")
# Numbers programs are full of whatever their tests say: limits, masks, ports, codes.
COMMON_NUMBERS = frozenset(
    {
        127, 128, 255, 256, 511, 512, 1023, 1024, 2047, 2048, 4095, 4096, 8191, 8192,
        65535, 65536, 32767, 32768, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1,
        100, 200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 409, 500, 502, 503,
        1900, 1970, 8000, 8080, 8443, 3600, 86400,
    }
)  # fmt: skip


def why_not_distinctive(key: LiteralKey, *, compared: bool = False) -> str | None:
    """Why the literal is too plain to prove anything (None: it is distinctive)."""
    if is_trivial(key):
        return "too plain"
    kind, value = key
    if kind in ("str", "bytes"):
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        return _plain_text(text.strip(), compared)
    if kind == "num":
        return _plain_number(value)
    assert isinstance(value, tuple)
    if any(why_not_distinctive(item, compared=compared) is None for item in value):
        return None
    if sum(not is_trivial(item) for item in value) >= MIN_SEQUENCE_ITEMS:
        return None  # (12, 17, 23): plain alone, an oracle's example together
    return f"a sequence of fewer than {MIN_SEQUENCE_ITEMS} items that are not plain"


def _plain_text(text: str, compared: bool) -> str | None:
    """Only letters and digits count: `'__%s__'` and `' -> '` are punctuation."""
    letters = sum(c.isalnum() for c in text)
    least = MIN_COMPARED_CHARS if compared else MIN_STRING_CHARS
    if letters < least:
        return f"fewer than {least} letters or digits"
    if compared:
        return None
    if NAME.fullmatch(text):
        return "one word or name"
    return None


def _plain_number(value: object) -> str | None:
    assert isinstance(value, int | float | complex)
    if isinstance(value, complex):
        return "a complex number"
    if isinstance(value, int) and abs(value) in COMMON_NUMBERS:
        return "a common number"
    digits = decimal.Decimal(repr(abs(value))).normalize().as_tuple().digits
    if len(digits) < MIN_SIGNIFICANT_DIGITS:
        return f"fewer than {MIN_SIGNIFICANT_DIGITS} significant digits"
    return None


# -- what the change adds ---------------------------------------------------------------------


@dataclass(frozen=True)
class AddedLiteral:
    key: LiteralKey
    path: str
    line: int
    text: str  # the production line, stripped
    compared: str | None  # how the line compares against it (`==`, `in`, ...), if it does


COMPARE_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def added_literals(changes: Sequence[FileChange]) -> Iterator[AddedLiteral]:
    """Every non-trivial literal on a line a change adds to a Python file, docstrings
    aside (a docstring answers nothing), with the comparison it is an operand of."""
    for change in changes:
        if change.new is None or PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES:
            continue
        added = added_lines(change.old, change.new)
        tree = parse(change.new) if added else None
        if tree is None:
            continue
        lines = split_lines(decode(change.new))
        compared = _compared_literals(tree)
        docstrings = {
            id(s.value) for s in ast.walk(tree) if isinstance(s, ast.stmt) and is_docstring(s)
        }
        for node in ast.walk(tree):
            line = getattr(node, "lineno", None)
            if line not in added or id(node) in docstrings:
                continue
            key = literal_key(node)
            if key is not None and not is_trivial(key):
                text = lines[line - 1].strip() if line <= len(lines) else ""
                yield AddedLiteral(key, change.path, line, text, compared.get(id(node)))


def _compared_literals(tree: ast.Module) -> dict[int, str]:
    """id(literal node) -> the form comparing against it: an operand of `==`, `!=`,
    `in`, `is`, an item of the container `in` searches, a dict key, a `match` case."""
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for index, op in enumerate(node.ops):
                form = COMPARE_OPS.get(type(op))
                if form is None:
                    continue
                for side in operands[index : index + 2]:
                    found.setdefault(id(side), f"compared with {form}")
                    if form in ("in", "not in") and isinstance(
                        side, ast.Tuple | ast.List | ast.Set
                    ):
                        for item in side.elts:
                            found.setdefault(id(item), f"searched with {form}")
        elif isinstance(node, ast.Dict):
            for dict_key in node.keys:
                if dict_key is not None:
                    found.setdefault(id(dict_key), "as a dict key")
        elif isinstance(node, ast.MatchValue):
            found.setdefault(id(node.value), "as a match case")
    return found


# -- the finding ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HardCodedResult:
    """Blocking hard-coded answers, and the oracle literals that only warn."""

    answers: tuple[ScanFinding, ...] = ()
    warnings: tuple[ScanFinding, ...] = ()


class Corpus:
    """What the author was given: base's files outside the test side, read on first
    use (it can be most of a repository). A literal is given when a Python file
    holds it as a literal (however its source spells it: implicit concatenation,
    escapes, another quote) or any file's text holds it; a sequence, when each of
    its items is; a format template (`"no such option: {}"`), when base holds its
    text with placeholders of any style (`%s`, `{name}`, an f-string's)."""

    def __init__(self, files: Iterable[tuple[str, bytes]]) -> None:
        self._files = files
        self._texts: list[tuple[str, str]] = []
        self._literals: dict[LiteralKey, str] | None = None
        self._shapes: dict[str, str] = {}

    def where(self, key: LiteralKey) -> str | None:
        """A file that holds the literal, or None."""
        if self._literals is None:
            self._read()
        assert self._literals is not None
        if key in self._literals:
            return self._literals[key]
        kind, value = key
        if kind == "seq":
            assert isinstance(value, tuple)
            places = [self.where(item) for item in value if not is_trivial(item)]
            return places[0] if places and all(places) else None
        shape = template_shape(key)
        if shape is not None and shape in self._shapes:
            return self._shapes[shape]
        pattern = literal_pattern(key)
        return next((path for path, text in self._texts if pattern.search(text)), None)

    def _read(self) -> None:
        self._literals, self._shapes = {}, {}
        for path, data in self._files:
            self._texts.append((path, decode(data)))
            if PurePosixPath(path).suffix in GIVEN_PYTHON:
                for key in file_literals(data):
                    self._literals.setdefault(key, path)
                    shape = template_shape(key)
                    if shape is not None:
                        self._shapes.setdefault(shape, path)


GIVEN_PYTHON = frozenset({*PYTHON_SUFFIXES, ".pyi"})


@functools.lru_cache(maxsize=4096)
def file_literals(data: bytes) -> frozenset[LiteralKey]:
    """Every literal a Python file holds, docstrings included (cached: a history
    measurement asks for the same files at every commit)."""
    tree = parse(data)
    if tree is None:
        return frozenset()
    return frozenset(k for k in map(literal_key, ast.walk(tree)) if k is not None)


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
    parts = PLACEHOLDER.split(text)
    return f"(?:{PLACEHOLDER.pattern})".join(re.escape(part) for part in parts)


def hard_coded_answers(
    oracle_sources: Mapping[str, bytes],
    given: Iterable[tuple[str, bytes]],
    changes: Sequence[FileChange],
    *,
    allow: Mapping[str, frozenset[Construct]] = {},
) -> HardCodedResult:
    """The added production literals an oracle holds: blocking when distinctive and
    new to the author (`given`: base's files outside the test side, path and
    bytes), else the ORACLE_LITERAL warning saying why not.

    Cheapest question first: the added literals, then the oracles, and `given` is
    read only when an added literal is one an oracle holds."""
    added = list(added_literals(changes))
    if not added:
        return HardCodedResult()
    return judge(added, oracle_literals(oracle_sources), given, allow=allow)


def judge(
    added: Sequence[AddedLiteral],
    oracles: Mapping[LiteralKey, OracleSource],
    given: Iterable[tuple[str, bytes]],
    *,
    allow: Mapping[str, frozenset[Construct]] = {},
) -> HardCodedResult:
    """Sort the added literals an oracle holds into answers and warnings."""
    candidates = [a for a in added if a.key in oracles]
    if not candidates:
        return HardCodedResult()
    corpus = Corpus(given)
    answers, warnings = [], []
    for literal in candidates:
        source = oracles[literal.key]
        why = why_not_distinctive(literal.key, compared=literal.compared is not None)
        if why is None and corpus.where(literal.key) is None:
            answers.append(_answer(literal, source))
        elif why is not None and source.expected and corpus.where(literal.key) is None:
            warnings.append(_warning(literal, source, why))
    blocked = {(f.path, f.line) for f in answers}
    warnings = [f for f in warnings if (f.path, f.line) not in blocked]
    return HardCodedResult(
        tuple(unique(f for f in answers if not is_allowed(f, allow))),
        tuple(unique(f for f in warnings if not is_allowed(f, allow))),
    )


def _answer(literal: AddedLiteral, source: OracleSource) -> ScanFinding:
    how = f", {literal.compared}" if literal.compared else ""
    detail = (
        f"{show_literal(literal.key)} from the oracle {source.where}{how}: {_short(literal.text)}"
    )
    return ScanFinding(literal.path, literal.line, Construct.HARD_CODED_ANSWER, detail)


def _warning(literal: AddedLiteral, source: OracleSource, why: str) -> ScanFinding:
    detail = (
        f"{show_literal(literal.key)}, expected by {source.path}:{source.line}; not blocking: {why}"
    )
    return ScanFinding(literal.path, literal.line, Construct.ORACLE_LITERAL, detail)


def _short(text: str, limit: int = 60) -> str:
    return f"`{text}`" if len(text) <= limit else f"`{text[: limit - 3]}...`"


# -- oracle parameters computed from production code ----------------------------------


def oracle_parameters_from_production(
    oracle_sources: Mapping[str, bytes], project_packages: frozenset[str]
) -> list[str]:
    """Oracle tests whose `parametrize` values are names imported from the project's
    production packages (`@pytest.mark.parametrize("x", mylib.EXAMPLES)`): the change
    under review controls those values (ORACLE_FROM_PRODUCTION). base's collection
    pins the values per id, so changing them is ORACLE_FAILED as well."""
    found = []
    for path, source in sorted(oracle_sources.items()):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        production = _production_names(tree, project_packages)
        for func in _definitions(tree):
            for decorator in func.decorator_list:
                used = _parametrize_sources(decorator, production)
                if used:
                    found.append(
                        f"{path}::{func.name} is parametrised over {', '.join(sorted(used))} "
                        "from production code; keep the oracle's examples on the test side"
                    )
    return found


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _definitions(tree: ast.Module) -> Iterator[Definition]:
    """Every function and class the module defines, at any depth, in `ast.walk`'s
    order. Only statements hold definitions, so the walk skips the expressions, most
    of a test file's nodes."""
    todo: deque[ast.AST] = deque(tree.body)
    while todo:
        node = todo.popleft()
        if isinstance(node, Definition):
            yield node
        todo.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, STATEMENT_HOLDERS))


def _production_names(tree: ast.Module, packages: frozenset[str]) -> dict[str, str]:
    """Local name -> the production module it came from, for the module's imports."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in packages:
                    names[(alias.asname or alias.name).split(".")[0]] = alias.name
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] in packages
        ):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _parametrize_sources(decorator: ast.expr, production: Mapping[str, str]) -> set[str]:
    if not (isinstance(decorator, ast.Call) and _dotted(decorator.func).endswith("parametrize")):
        return set()
    values = decorator.args[1:2] + [k.value for k in decorator.keywords if k.arg == "argvalues"]
    used = set()
    for value in values:
        for node in ast.walk(value):
            if isinstance(node, ast.Name) and node.id in production:
                used.add(production[node.id])
    return used


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


# -- the family -------------------------------------------------------------------------------


def answers_to_oracles(
    changes: Sequence[FileChange], context: ScanContext
) -> Iterator[ScanFinding]:
    """The scan's rule: the hard-coded answers and the ORACLE_LITERAL warnings in what
    `changes` add, against the oracles and what the author was given in `context`."""
    if not context.oracle_sources:
        return  # no oracle holds a literal
    result = hard_coded_answers(context.oracle_sources, context.given, changes)
    yield from result.answers
    yield from result.warnings


FAMILY = Family(
    name="hard-coded answers",
    constructs=frozenset({Construct.HARD_CODED_ANSWER}),
    warns=frozenset({Construct.ORACLE_LITERAL}),
    change_rules=(answers_to_oracles,),
)
