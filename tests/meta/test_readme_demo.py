"""The README says what `andgate demo` does (issue 43, item 8): as many canned changes as
the demo gates, each listed. (The verdict the README shows is the demo's own:
`tests/commands/test_readme_verdict.py`.)"""

from __future__ import annotations

import re
from pathlib import Path

from andgate.commands.demo import CHANGES

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
NUMBERS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]


def test_the_readme_counts_and_lists_the_demos_changes():
    count = NUMBERS[len(CHANGES)]
    assert f"decide {count} canned changes" in README
    listed = re.search(rf"gates {count} canned changes to it:(.*?)\. It prints", README, re.S)
    assert listed is not None, f"README: 'gates {count} canned changes to it: ...' is missing"
    assert len(listed.group(1).split(";")) == len(CHANGES)
