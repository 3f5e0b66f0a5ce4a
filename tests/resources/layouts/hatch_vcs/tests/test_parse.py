import pytest
from durfmt import parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1h30m", 5400), ("2d", 172800), ("45s", 45), ("1h 1m 1s", 3661), ("10M", 600)],
)
def test_parse(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1x", "h", "3 days"])
def test_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)
