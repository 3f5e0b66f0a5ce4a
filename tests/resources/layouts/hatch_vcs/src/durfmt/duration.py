"""Parse and format durations written with the units d, h, m and s."""

import re

UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
PART = re.compile(r"(\d+)([dhms])")


def parse_duration(text):
    text = text.replace(" ", "").lower()
    if not text or PART.sub("", text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(n) * UNITS[unit] for n, unit in PART.findall(text))


def format_duration(seconds):
    if seconds < 0:
        raise ValueError("a duration is never negative")
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in UNITS.items():
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
