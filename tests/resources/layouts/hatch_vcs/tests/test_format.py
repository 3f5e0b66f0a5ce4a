import pytest
from durfmt import format_duration, parse_duration


def test_format():
    assert format_duration(5400) == "1h30m"
    assert format_duration(90061) == "1d1h1m1s"
    assert format_duration(0) == "0s"


def test_round_trip():
    for seconds in (1, 59, 61, 3600, 86399, 86400, 100000):
        assert parse_duration(format_duration(seconds)) == seconds


def test_negative():
    with pytest.raises(ValueError):
        format_duration(-1)
