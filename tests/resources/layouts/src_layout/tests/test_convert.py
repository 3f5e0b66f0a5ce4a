import pytest
from tempconv import celsius_to_fahrenheit, celsius_to_kelvin, fahrenheit_to_celsius


@pytest.mark.parametrize(("c", "f"), [(0, 32), (100, 212), (-40, -40), (37, 98.6)])
def test_celsius_to_fahrenheit(c, f):
    assert celsius_to_fahrenheit(c) == pytest.approx(f)


def test_round_trip():
    assert fahrenheit_to_celsius(celsius_to_fahrenheit(21.5)) == pytest.approx(21.5)


def test_kelvin():
    assert celsius_to_kelvin(0) == pytest.approx(273.15)


def test_below_absolute_zero():
    with pytest.raises(ValueError, match="absolute zero"):
        celsius_to_kelvin(-300)
