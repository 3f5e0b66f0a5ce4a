"""Readings written as a number and a unit letter: `21.5C`, `70 F`."""

from dataclasses import dataclass

from tempconv.convert import fahrenheit_to_celsius

UNITS = ("C", "F")


@dataclass(frozen=True)
class Reading:
    value: float
    unit: str

    def in_celsius(self):
        return self.value if self.unit == "C" else fahrenheit_to_celsius(self.value)


def parse_reading(text):
    text = text.strip().upper()
    if not text or text[-1] not in UNITS:
        raise ValueError(f"a reading ends in one of {', '.join(UNITS)}: {text!r}")
    return Reading(float(text[:-1]), text[-1])
