"""Hard-coded answers: production code that knows the oracle's examples.

The cheapest way to make an oracle pass without solving its task is to answer its
own examples: a table keyed by its inputs, an `if` chain on them, the expected
string returned for the one input that needs it, the same table in a data file or a
docstring the code parses. The oracle then passes, and no test run can tell.

A literal on a line the change adds to production code is a hard-coded answer
(`hard_coded_answer`, PRODUCTION_SUSPICIOUS) when all of these hold:

- an oracle test at base holds the same literal (an input, an expected value, a
  parametrized case: any literal of its code, docstrings aside; or a value of an
  oracle's JSON fixture); a value the added code computes from literals alone
  (`folding.py`: `"The Lord of " + "the Rings"`, a `join`, an f-string of constants,
  `17 * 23`, a `base64` literal decoded) counts as the literal it computes, and a
  literal the line compares against also as an oracle input after a trivial
  normalisation (`lower()`, `strip()`, ...) or as its digest (`answer_pairs.input_forms`);
- it is distinctive (`literals.why_not_distinctive`): a string of at least
  `MIN_STRING_CHARS` characters that is not one word or name, or a number with at
  least `MIN_SIGNIFICANT_DIGITS` significant digits; for a literal the added line
  compares against (`==`, `!=`, `in`, `is`, a dict key, a `match` case) the bar is lower
  (`MIN_COMPARED_CHARS`, and single words count) because a comparison with an
  oracle's input is the special case itself;
- it appears nowhere in what the author was given (`given.Corpus`): base's files
  outside the test side (production code with its docstrings and comments, README,
  docs/, data files). A literal the documentation shows is one the author may use.

An oracle's input and its expected output written down together are an answer too
(`answer_pairs.py`): in a record of a data file the change adds or edits (JSON, TOML,
YAML, INI/CFG, CSV, text; `data_files.py`), in a line of a docstring the code reads,
or in one function that recognises the input and holds the output.

A literal an oracle holds that falls short of these stays the warning ORACLE_LITERAL,
which says why it did not block. An oracle parametrised over values it imports from
the project's packages is the warning ORACLE_FROM_PRODUCTION
(`oracle_parameters_from_production`): the change under review controls its
examples. What a literal is and which an oracle holds: `literals.py`; an oracle's
examples: `examples.py`. Pure: callers give bytes.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from andgate.check.production.answer_pairs import (
    ExampleIndex,
    InputMatch,
    answer_pairs,
    holds_text,
)
from andgate.check.production.common import (
    PYTHON_SUFFIXES,
    FileChange,
    ScanContext,
    ScanFinding,
    added_lines,
    decode,
    is_allowed,
    split_lines,
    unique,
)
from andgate.check.production.examples import Example, oracle_examples
from andgate.check.production.folding import module_values
from andgate.check.production.given import Corpus
from andgate.check.production.literals import (
    LiteralKey,
    OracleSource,
    is_trivial,
    literal_key,
    oracle_literals,
    show_literal,
    why_not_distinctive,
)
from andgate.check.production.rules import Family
from andgate.records import Construct

__all__ = ["why_not_distinctive"]  # the bar is in literals.py; read here for the rule

# -- what the change adds ---------------------------------------------------------------------


@dataclass(frozen=True)
class AddedLiteral:
    key: LiteralKey
    path: str
    line: int
    text: str  # the production line, stripped
    compared: str | None  # how the line compares against it (`==`, `in`, ...), if it does


def added_literals(changes: Sequence[FileChange]) -> Iterator[AddedLiteral]:
    """Every non-trivial literal on a line a change adds to a Python file, docstrings
    aside (a docstring answers nothing but as data, `answer_pairs.py`), and every
    value it computes from literals with a piece on an added line; each with the
    comparison it is an operand of."""
    for change in changes:
        if change.new is None or PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES:
            continue
        added = added_lines(change.old, change.new)
        values = module_values(change.new) if added else None
        if values is None:
            continue
        lines = split_lines(decode(change.new))
        found: list[tuple[LiteralKey, int, ast.AST]] = []
        for node in ast.walk(values.tree):
            line = getattr(node, "lineno", None)
            key = literal_key(node)
            if key is not None and line in added and id(node) not in values.docstrings:
                found.append((key, line, node))
        for folded in values.folded.values():
            touched = sorted(folded.lines & added)
            if touched:
                line = folded.node.lineno if folded.node.lineno in added else touched[0]
                found.append((folded.key, line, folded.node))
        for key, line, node in found:
            if not is_trivial(key):
                text = lines[line - 1].strip() if line <= len(lines) else ""
                yield AddedLiteral(key, change.path, line, text, values.compared.get(id(node)))


# -- the finding ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HardCodedResult:
    """Blocking hard-coded answers, and the oracle literals that only warn."""

    answers: tuple[ScanFinding, ...] = ()
    warnings: tuple[ScanFinding, ...] = ()


@dataclass(frozen=True)
class Oracles:
    """What base's oracles hold: each non-trivial literal (-> where first) and each
    example (`examples.py`)."""

    literals: Mapping[LiteralKey, OracleSource]
    examples: Sequence[Example]

    @classmethod
    def read(cls, oracle_sources: Mapping[str, bytes]) -> Oracles:
        return cls(oracle_literals(oracle_sources), oracle_examples(oracle_sources))


def hard_coded_answers(
    oracle_sources: Mapping[str, bytes],
    given: Iterable[tuple[str, bytes]],
    changes: Sequence[FileChange],
    *,
    allow: Mapping[str, frozenset[Construct]] = {},
) -> HardCodedResult:
    """The hard-coded answers in what `changes` add: blocking when distinctive and
    new to the author (`given`: base's files outside the test side, path and bytes,
    read only if an added literal or pair is one an oracle holds), else the
    ORACLE_LITERAL warning saying why not."""
    added = list(added_literals(changes))
    if not added and not any(holds_text(change) for change in changes):
        return HardCodedResult()  # nothing an oracle could hold: its files are not read
    return answers_in(
        changes, Oracles.read(oracle_sources), Corpus(given), allow=allow, added=added
    )


def answers_in(
    changes: Sequence[FileChange],
    oracles: Oracles,
    corpus: Corpus,
    *,
    allow: Mapping[str, frozenset[Construct]] = {},
    added: Sequence[AddedLiteral] | None = None,
) -> HardCodedResult:
    """Every form at once: the added literals (`judge`; `added` if already read), then
    the pairs (`answer_pairs`) on lines the literals did not already block."""
    index = ExampleIndex(oracles.examples)
    if added is None:
        added = list(added_literals(changes))
    literals = judge(added, oracles.literals, corpus, index=index)
    blocked = frozenset((f.path, f.line) for f in literals.answers)
    pairs = answer_pairs(changes, oracles.examples, corpus, flagged=blocked, index=index)
    blocked |= {(f.path, f.line) for f in pairs}
    warnings = [f for f in literals.warnings if (f.path, f.line) not in blocked]
    return HardCodedResult(
        tuple(unique(f for f in (*literals.answers, *pairs) if not is_allowed(f, allow))),
        tuple(unique(f for f in warnings if not is_allowed(f, allow))),
    )


def judge(
    added: Sequence[AddedLiteral],
    oracles: Mapping[LiteralKey, OracleSource],
    corpus: Corpus,
    *,
    index: ExampleIndex | None = None,
) -> HardCodedResult:
    """Sort the added literals an oracle holds into answers and warnings; with `index`,
    a compared literal that spells an oracle's input in another form blocks too."""
    answers, warnings = [], []
    for literal in added:
        if literal.key not in oracles:
            if literal.compared and index is not None:
                answers += _input_forms(literal, index, corpus)
            continue
        source = oracles[literal.key]
        why = why_not_distinctive(literal.key, compared=literal.compared is not None)
        if why is None and corpus.where(literal.key) is None:
            answers.append(_answer(literal, source))
        elif why is not None and source.expected and corpus.where(literal.key) is None:
            warnings.append(_warning(literal, source, why))
    blocked = {(f.path, f.line) for f in answers}
    warnings = [f for f in warnings if (f.path, f.line) not in blocked]
    return HardCodedResult(tuple(unique(answers)), tuple(unique(warnings)))


def _input_forms(literal: AddedLiteral, index: ExampleIndex, corpus: Corpus) -> list[ScanFinding]:
    """A compared literal that is an oracle's input after `lower()`, `strip()`, or its
    digest: the first distinctive one new to the author."""
    if literal.key[0] not in ("str", "bytes", "num"):
        return []
    for match in index.forms_of(literal.key):
        if why_not_distinctive(match.input, compared=True) is not None:
            continue
        if corpus.where(match.input) is None and corpus.where(literal.key) is None:
            return [_form_answer(literal, match)]
    return []


def _answer(literal: AddedLiteral, source: OracleSource) -> ScanFinding:
    how = f", {literal.compared}" if literal.compared else ""
    detail = (
        f"{show_literal(literal.key)} from the oracle {source.where}{how}: {_short(literal.text)}"
    )
    return ScanFinding(literal.path, literal.line, Construct.HARD_CODED_ANSWER, detail)


def _form_answer(literal: AddedLiteral, match: InputMatch) -> ScanFinding:
    detail = (
        f"{show_literal(literal.key)}, the input {show_literal(match.input)} ({match.how}) of "
        f"the oracle {match.example.source.where}, {literal.compared}: {_short(literal.text)}"
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
