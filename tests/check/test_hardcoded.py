"""Hard-coded answers (`andgate.check.production.hardcoded`): added production lines that hold a
distinctive literal of an oracle, or compare against one, block; what is plain or
was given to the author (base's docs, production code, data files) at most warns
(ORACLE_LITERAL, saying why). Pure, except the last tests, which run the scan on
the sample repository with git as the gate does (no pytest process)."""

from __future__ import annotations

import textwrap

import pytest

from andgate.check.production.common import FileChange
from andgate.check.production.hardcoded import (
    HardCodedResult,
    hard_coded_answers,
    why_not_distinctive,
)
from andgate.check.production.literals import literal_key
from andgate.check.production.scan import WARNINGS, scan_production
from andgate.records import Construct
from andgate.verdict import authorship_findings

C = Construct
CORE = "src/pkg/core.py"
ORACLE_PATH = "tests/oracles/test_core.py"
ORACLE = """
import pytest
from pkg import shout, area, duration, roman, greet, magic, header, boil

def test_shout():
    assert shout("hello world") == "HELLO WORLD!"

@pytest.mark.parametrize(("w", "h", "expected"), [(17, 23, 391), (12, 13, 156)])
def test_area(w, h, expected):
    assert area(w, h) == expected

def test_duration():
    text = "2h45m15s"
    assert duration(text) == 9915

def test_greet():
    assert greet("alice") == "Hi"

class TestMath:
    def test_magic(self):
        self.assertAlmostEqual(magic(), 3.14159)

    def test_boil(self):
        assert boil() == -273.15

def test_header():
    assert header(b"\\x89PNG-fake-head") == "png"

def test_window():
    assert window([1, 2]) == [13, 17, 23]
"""


def src(text: str) -> bytes:
    return textwrap.dedent(text).lstrip("\n").encode()


def check(
    head: str,
    base: str = "def shout(s):\n    return s.upper()\n",
    *,
    given: dict[str, str] | None = None,
    oracles: dict[str, bytes] | None = None,
    allow: dict[str, frozenset[Construct]] | None = None,
) -> HardCodedResult:
    """The scan of one change to CORE; `given` defaults to base's CORE."""
    files = {CORE: base} if given is None else given
    return hard_coded_answers(
        {ORACLE_PATH: src(ORACLE)} if oracles is None else oracles,
        [(path, src(text)) for path, text in files.items()],
        [FileChange(CORE, src(base), src(head))],
        allow=allow or {},
    )


def lines(found: HardCodedResult) -> tuple[set[int | None], set[int | None]]:
    """(lines that block, lines that only warn)."""
    return {f.line for f in found.answers}, {f.line for f in found.warnings}


BASE = "def shout(s):\n    return s.upper()\n"


# -- each literal kind ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("added", "literal"),
    [
        ('    return "HELLO WORLD!"', "'HELLO WORLD!'"),  # an expected string
        ('    return header(b"\\x89PNG-fake-head")', "b'\\x89PNG-fake-head'"),  # bytes
        ("    return 9915", "9915"),  # an expected number
        ("    return 3.14159", "3.14159"),  # a float, from assertAlmostEqual
        ("    return -273.15", "-273.15"),  # a negative number
        ("    return [13, 17, 23]", "(13, 17, 23)"),  # plain items, a distinctive sequence
        ('    text = "2h45m15s"', "'2h45m15s'"),  # an input the oracle assigned first
    ],
    ids=["str", "bytes", "int", "float", "negative", "sequence", "input"],
)
def test_each_literal_kind_an_oracle_holds_is_a_hard_coded_answer(added: str, literal: str):
    found = check(f"def shout(s):\n{added}\n")
    ((answer,),) = [found.answers]
    assert (answer.path, answer.line, answer.construct) == (CORE, 2, C.HARD_CODED_ANSWER)
    assert answer.detail.startswith(f"{literal} from the oracle {ORACLE_PATH}::")
    assert f": `{added.strip()}`" in answer.detail  # the production line, named
    assert found.warnings == ()


def test_the_finding_names_the_literal_the_oracle_test_and_the_line() -> None:
    head = "def area(w, h):\n    return 391 if (w, h) == (17, 23) else w * h\n"
    ((answer,),) = [check(head).answers]
    assert answer.message == (
        "src/pkg/core.py:2: hard-coded answer to an oracle (391 from the oracle "
        "tests/oracles/test_core.py::test_area (line 7): "
        "`return 391 if (w, h) == (17, 23) else w * h`) in added code [hard_coded_answer]"
    )


# -- each comparison form: "alice" is too plain to block anywhere else ----------------------


@pytest.mark.parametrize(
    ("code", "form"),
    [
        ('def greet(n):\n    if n == "alice":\n        return "Hi"\n', "compared with =="),
        ('def greet(n):\n    if "alice" != n:\n        return "Hello"\n', "compared with !="),
        ('def greet(n):\n    if n in ("alice", "bob"):\n        return "Hi"\n', "searched with in"),
        (
            'def greet(n):\n    if n not in {"alice"}:\n        return "Hello"\n',
            "searched with not in",
        ),
        ('def greet(n):\n    return {\n        "alice": "Hi",\n    }.get(n)\n', "as a dict key"),
        (
            'def greet(n):\n    match n:\n        case "alice":\n            return "Hi"\n',
            "as a match case",
        ),
    ],
    ids=["==", "!=", "in", "not in", "dict key", "match case"],
)
def test_each_comparison_with_an_oracle_input_is_a_hard_coded_answer(code: str, form: str):
    found = check(code)
    ((answer,),) = [found.answers]
    assert "'alice' from the oracle tests/oracles/test_core.py::test_greet" in answer.detail
    assert f", {form}: " in answer.detail


def test_the_same_plain_literal_not_compared_only_warns() -> None:
    """`"alice"` held, not compared: five letters are below the bar, so the warning
    says why it did not block."""
    found = check('USER = "alice"\n')
    assert found.answers == ()
    (warning,) = found.warnings
    assert warning.construct is C.ORACLE_LITERAL
    assert warning.detail == (
        "'alice', expected by tests/oracles/test_core.py:16; "
        "not blocking: fewer than 6 letters or digits"
    )


# -- ORACLE_LITERAL: what is not distinctive, and why ----------------------------------------


@pytest.mark.parametrize(
    ("oracle", "head", "why"),
    [
        ('assert f("yes") == "hello-world"', 'X = "hello-world"\n', "one word or name"),
        ("assert f(1) == 15", "X = 15\n", "fewer than 3 significant digits"),
        ("assert f(1) == 4096", "X = 4096\n", "a common number"),
        ("assert f(1) == (12, 17)", "X = (12, 17)\n", "a sequence of fewer than 3 items"),
    ],
    ids=["name", "small number", "common number", "short sequence"],
)
def test_a_plain_oracle_literal_warns_saying_why_it_did_not_block(oracle, head, why):
    found = check(head, oracles={ORACLE_PATH: f"def test_x():\n    {oracle}\n".encode()})
    assert found.answers == ()
    (warning,) = found.warnings
    assert f"; not blocking: {why}" in warning.detail


def test_trivial_literals_neither_block_nor_warn() -> None:
    oracle = b'def test_x():\n    assert f("ab", 3, 100) == ""\n'
    assert check('X = ("ab", 3, 100, "")\n', oracles={ORACLE_PATH: oracle}) == HardCodedResult()


@pytest.mark.parametrize(
    ("literal", "compared", "why"),
    [
        ("'hello world'", False, None),
        ("'HELLO WORLD!'", False, None),
        ("'__%s__'", False, "fewer than 6 letters or digits"),
        ("'partition_all'", False, "one word or name"),
        ("'partition_all'", True, None),
        ("'x-y-z'", True, "fewer than 4 letters or digits"),
        ("391", False, None),
        ("3.5", False, "too plain"),
        ("65535", False, "a common number"),
        ("1.25e-07", False, None),
    ],
)
def test_distinctive_thresholds(literal: str, compared: bool, why: str | None) -> None:
    key = literal_key(compile(literal, "<x>", "eval", 1024).body)  # type: ignore[attr-defined]
    assert key is not None
    assert why_not_distinctive(key, compared=compared) == why


# -- given to the author: base's docs, production code, data files -----------------------------


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("README.md", "Example: shout('hello world') gives HELLO WORLD!\n"),
        ("docs/usage.rst", "    >>> shout('x')\n    'HELLO WORLD!'\n"),
        ("src/pkg/other.py", 'def f():\n    """Returns HELLO WORLD! for a greeting."""\n'),
        ("src/pkg/other.py", 'GREETING = (\n    "HELLO "\n    "WORLD!"\n)\n'),  # spelt apart
        ("src/pkg/data/greetings.json", '{"loud": "HELLO WORLD!"}\n'),
    ],
    ids=["README", "docs", "docstring", "production literal", "data file"],
)
def test_a_literal_base_gave_the_author_does_not_block(path: str, text: str) -> None:
    head = 'def shout(s):\n    return "HELLO WORLD!"\n'
    assert check(head, given={CORE: BASE, path: text}) == HardCodedResult()
    assert check(head, given={CORE: BASE}).answers  # and without it, it blocks


@pytest.mark.parametrize(
    "base_line",
    [
        'MESSAGE = "no such option: %s"\n',
        'def f(name):\n    return f"no such option: {name}"\n',
        'MESSAGE = "no such option: {option!r}"\n',
    ],
    ids=["%s", "f-string", "format field"],
)
def test_a_format_template_base_holds_in_another_style_does_not_block(base_line: str) -> None:
    """A template is its text; the placeholders' style is a refactoring's choice."""
    oracle = b'def test_x():\n    assert f() == "no such option: {}".format("x")\n'
    head = 'def f(name):\n    return "no such option: {}".format(name)\n'
    given = {CORE: BASE, "src/pkg/errors.py": base_line}
    assert check(head, given=given, oracles={ORACLE_PATH: oracle}) == HardCodedResult()
    assert check(head, oracles={ORACLE_PATH: oracle}).answers  # and without it, it blocks


def test_only_added_lines_and_no_docstring_count() -> None:
    base = 'def shout(s):\n    return "HELLO WORLD!"\n'
    head = (
        base
        + 'def area(w, h):\n    """391 for (17, 23), as the oracle says."""\n    return w * h\n'
    )
    assert check(head, base, given={}) == HardCodedResult()


def test_an_oracle_fixture_file_holds_oracle_literals() -> None:
    fixture = b'{"duration": [["1h2m3s", 3723]]}'
    found = check(
        'def duration(s):\n    return {"1h2m3s": 3723}[s]\n',
        oracles={"tests/oracles/fixtures/cases.json": fixture},
    )
    ((answer,),) = [found.answers]
    assert "from the oracle tests/oracles/fixtures/cases.json, as a dict key" in answer.detail


class Untouchable(dict):
    """An argument the scan must not read: any iteration or lookup fails the test."""

    def _fail(self, *args, **kwargs):
        raise AssertionError("read although no added literal needed it")

    __iter__ = keys = values = items = __getitem__ = __len__ = _fail  # type: ignore[assignment]


def _never_iterated():
    raise AssertionError("base's files read although no added literal is an oracle's")
    yield ("README.md", b"")  # a generator


def test_base_is_read_only_for_an_added_literal_an_oracle_holds() -> None:
    """Base's files can be most of a repository: a change whose added literals no
    oracle holds never reads them, and one with no literal at all never reads the
    oracles either."""
    oracles = {ORACLE_PATH: src(ORACLE)}
    unexpected = [FileChange(CORE, src(BASE), src(BASE + 'GREETING = "good morning"\n'))]
    assert hard_coded_answers(oracles, _never_iterated(), unexpected) == HardCodedResult()
    bare = [FileChange(CORE, src(BASE), src(BASE + "X = 3\n"))]
    assert hard_coded_answers(Untouchable(), _never_iterated(), bare) == HardCodedResult()
    read = []

    def given():
        read.append(True)
        yield CORE, src(BASE)

    expected = [FileChange(CORE, src(BASE), src(BASE + 'GREETING = "HELLO WORLD!"\n'))]
    (answer,) = hard_coded_answers(oracles, given(), expected).answers
    assert (answer.line, read) == (3, [True])


def test_production_scan_allow_lifts_it() -> None:
    head = 'def shout(s):\n    return "HELLO WORLD!"\n'
    assert check(head).answers
    assert check(head, allow={"src/pkg/**": frozenset({C.HARD_CODED_ANSWER})}) == (
        HardCodedResult()
    )
    other = check(head, allow={"src/pkg/**": frozenset({C.HARNESS_REFERENCE})})
    assert other.answers  # another construct's allowance lifts nothing


def test_the_scan_runs_it_beside_the_other_families() -> None:
    """`scan_production`, the one entry point `check` calls, with base's oracles and
    what the author was given: the answer blocks, the plain literal warns (its
    construct is in `WARNINGS`), another family's finding stands beside them, and
    the allow-list lifts the family's findings as any other."""
    head = 'import pytest\n\n\ndef shout(s):\n    return "HELLO WORLD!"\n\n\ndef greet(n):\n'
    changes = [FileChange(CORE, src(BASE), src(head + '    return "alice"\n'))]

    def found(**kwargs: object) -> set[tuple[int | None, Construct]]:
        given = [(CORE, src(BASE))]
        scanned = scan_production(
            changes,
            shadowed=frozenset(),
            project_packages=frozenset({"pkg"}),
            given=given,
            **kwargs,
        )
        return {(f.line, f.construct) for f in scanned}

    oracles = {ORACLE_PATH: src(ORACLE)}
    harness = (1, C.HARNESS_REFERENCE)
    assert found(oracle_sources=oracles) == {
        harness,
        (5, C.HARD_CODED_ANSWER),
        (9, C.ORACLE_LITERAL),
    }
    assert C.ORACLE_LITERAL in WARNINGS and C.HARD_CODED_ANSWER not in WARNINGS
    assert found() == {harness}  # no oracle holds a literal
    allow = {"src/pkg/**": frozenset({C.HARD_CODED_ANSWER, C.ORACLE_LITERAL})}
    assert found(oracle_sources=oracles, allow=allow) == {harness}


# -- on the sample repository, as the gate runs it --------------------------------------------

SPECIAL_CASE = (
    '    """Lower-case words joined by single dashes."""\n',
    '    """Lower-case words joined by single dashes."""\n'
    '    if text == "Hello World":\n        return "hello-world"\n',
)


def _special_case(repo) -> None:  # type: ignore[no-untyped-def]
    repo.edit("minilib/text.py", *SPECIAL_CASE)


def test_the_gate_blocks_a_hard_coded_answer_unless_an_owner_approves(sample) -> None:
    from test_gate_before_tests import before_tests

    head = sample.change(_special_case)
    found = before_tests(sample, head).changes
    (suspicious,) = found.suspicious
    assert suspicious.startswith(
        "minilib/text.py:16: hard-coded answer to an oracle ('Hello World'"
    )
    assert "tests/oracles/test_text_oracle.py::test_slugify_words" in suspicious
    assert [f.code.value for f in authorship_findings(found)] == [
        "ORACLE_LITERAL",  # "hello-world" on the next line: one name
        "PRODUCTION_SUSPICIOUS",
    ]
    approved = before_tests(sample, head, approved_by=("alice",)).changes
    assert [f.code.value for f in authorship_findings(approved)] == ["ORACLE_LITERAL"]


def test_the_gate_reads_the_allowance_from_base(sample) -> None:
    from test_gate_before_tests import before_tests

    with (sample.path / "tests/trust_manifest.yaml").open("a") as manifest:
        manifest.write('production_scan:\n  allow:\n    "minilib/*.py": [hard_coded_answer]\n')
    sample.base = sample.repo.commit("allow hard-coded answers in minilib")
    found = before_tests(sample, sample.change(_special_case)).changes
    assert found.suspicious == ()
    assert [f.code.value for f in authorship_findings(found)] == ["ORACLE_LITERAL"]
