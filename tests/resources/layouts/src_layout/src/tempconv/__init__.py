"""Temperature conversions."""

from tempconv.convert import celsius_to_fahrenheit, celsius_to_kelvin, fahrenheit_to_celsius
from tempconv.parse import Reading, parse_reading

__all__ = [
    "Reading",
    "celsius_to_fahrenheit",
    "celsius_to_kelvin",
    "fahrenheit_to_celsius",
    "parse_reading",
]
