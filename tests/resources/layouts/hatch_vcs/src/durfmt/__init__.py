"""Durations such as `1h30m` to seconds and back."""

from ._version import __version__
from .duration import format_duration, parse_duration

__all__ = ["__version__", "format_duration", "parse_duration"]
