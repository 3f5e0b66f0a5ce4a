import pytest
from slugkit import slugify


def test_words_are_joined():
    assert slugify("Hello, World!") == "hello-world"


def test_separator():
    assert slugify("a b  c", separator="_") == "a_b_c"


def test_max_length_does_not_end_in_a_separator():
    assert slugify("The quick brown fox", max_length=10) == "the-quick"


@pytest.mark.unicode
def test_accents_are_dropped():
    assert slugify("Crème brûlée à Paris") == "creme-brulee-a-paris"
