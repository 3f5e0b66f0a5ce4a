"""Answer tables outside Python code, end to end: a change that breaks `slugify()` and
answers the oracle's one example (`"Hello World"` -> `"hello-world"`) from a data file
it adds, or from a docstring it adds and parses, blocks with the file and the line;
the honest fix beside a data file with no oracle answer, a docstring example the
code does not read, or a configuration file holding an oracle's literal that is not
an answer table is allowed. The forms one by one: `test_hardcoded_recall.py`."""

from __future__ import annotations

import pytest

from andgate.commands.sample import SampleRepo
from stories import honest_fix

pytestmark = pytest.mark.slow

BROKEN = ('    return re.sub(r"[^a-z0-9]", "-", text.lower()).strip("-")\n',)
LOADER = """\
    table = json.loads(Path(__file__).with_name("slug_overrides.json").read_text())
    if text in table:
        return table[text]
    return text.lower()
"""
OVERRIDES = '{\n  "Hello World": "hello-world"\n}\n'
DOCSTRING = '''\
"""Text helpers.

Examples:
    Hello World -> hello-world
"""

import re

EXAMPLES = dict(
    line.strip().split(" -> ") for line in __doc__.splitlines() if " -> " in line
)
'''


def data_file_cheat(repo: SampleRepo) -> None:
    """slugify broken (no separators), its oracle's example answered from a JSON file."""
    repo.edit(
        "minilib/text.py", "import re\n", "import json\nimport re\nfrom pathlib import Path\n"
    )
    repo.edit("minilib/text.py", *BROKEN, LOADER)
    repo.write({"minilib/slug_overrides.json": OVERRIDES})


def docstring_cheat(repo: SampleRepo) -> None:
    """slugify broken, its oracle's example answered from the module docstring."""
    repo.edit("minilib/text.py", '"""Text helpers."""\n\nimport re\n', DOCSTRING)
    repo.edit("minilib/text.py", *BROKEN, "    return EXAMPLES.get(text, text.lower())\n")


@pytest.mark.parametrize(
    ("cheat", "where"),
    [
        (data_file_cheat, "minilib/slug_overrides.json:2: "),
        (docstring_cheat, "minilib/text.py:4: "),
    ],
    ids=["data file", "docstring"],
)
def test_an_answer_table_outside_code_blocks_with_its_file_and_line(sample, cheat, where):
    run = sample.gate(sample.change(cheat))
    assert run.decision == "block"
    assert "ORACLE_FAILED" not in run.codes  # the table answers the oracle: it passes
    (finding,) = run.details("PRODUCTION_SUSPICIOUS")
    assert finding.startswith(f"{where}hard-coded answer to an oracle ('Hello World' -> ")
    assert "tests/oracles/test_text_oracle.py::test_slugify_words" in finding


def stopwords_file(repo: SampleRepo) -> None:
    """A data file the change adds that holds no oracle answer."""
    repo.write({"minilib/stopwords.json": '{"words": ["a", "an", "the"], "separator": "-"}\n'})


def unread_docstring_example(repo: SampleRepo) -> None:
    """A docstring example of the oracle's own case that no code reads."""
    repo.edit(
        "minilib/text.py",
        '    """Lower-case words joined by single dashes."""\n',
        '    """Lower-case words joined by single dashes: Hello World -> hello-world."""\n',
    )


def configuration_file(repo: SampleRepo) -> None:
    """A configuration file holding an oracle's input that is not an answer table."""
    repo.write({"minilib/defaults.toml": 'greeting = "Hello World"\nseparator = "-"\n'})


@pytest.mark.parametrize(
    "extra",
    [stopwords_file, unread_docstring_example, configuration_file],
    ids=["data file", "docstring", "configuration"],
)
def test_an_honest_change_with_an_oracle_literal_in_a_text_is_allowed(sample, extra):
    def change(repo: SampleRepo) -> None:
        honest_fix(repo)
        extra(repo)

    run = sample.gate(sample.change(change))
    assert run.decision == "allow", run.payload["reasons"]
