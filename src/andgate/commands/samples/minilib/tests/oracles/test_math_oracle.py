"""Human-owned oracle (owner: alice): recorded cases live in fixtures/cases.json."""

import json
import pathlib

import pytest
from minilib import clamp, mean

CASES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "cases.json").read_text())


@pytest.mark.parametrize("x, lo, hi, expected", CASES["clamp"])
def test_clamp_cases(x, lo, hi, expected):
    assert clamp(x, lo, hi) == expected


def test_mean():
    assert mean([1, 2, 3, 6]) == 3
