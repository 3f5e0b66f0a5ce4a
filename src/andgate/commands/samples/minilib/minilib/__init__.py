"""minilib: a tiny library gated by andgate."""

from minilib.mathx import clamp, mean
from minilib.text import chunk, slugify

__all__ = ["chunk", "clamp", "mean", "slugify"]
