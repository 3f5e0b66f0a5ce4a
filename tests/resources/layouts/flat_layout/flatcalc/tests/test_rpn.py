import pytest

from flatcalc import evaluate, tokenize


def test_tokenize():
    assert tokenize(" 3  4 +") == ["3", "4", "+"]


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("3 4 + 2 *", 14),
        ("10 4 -", 6),
        ("1 2 3 * +", 7),
        ("9 2 /", 4.5),
        ("15 7 1 1 + - / 3 * 2 1 1 + + -", 5),
    ],
)
def test_evaluate(expression, value):
    assert evaluate(expression) == value
