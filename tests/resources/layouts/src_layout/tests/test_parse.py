import pytest
from tempconv import Reading, parse_reading


def test_parse_celsius():
    assert parse_reading("21.5C") == Reading(21.5, "C")


def test_parse_fahrenheit_with_space_and_case():
    reading = parse_reading(" 70 f")
    assert reading == Reading(70.0, "F")
    assert reading.in_celsius() == pytest.approx(21.111, abs=1e-3)


@pytest.mark.parametrize("text", ["", "21", "21K"])
def test_rejects_unknown_units(text):
    with pytest.raises(ValueError):
        parse_reading(text)
