"""Text helpers."""

import re


def chunk(seq, n):
    """Split seq into lists of n items; the last one may be shorter."""
    if n < 1:
        raise ValueError("n must be at least 1")
    items = list(seq)
    return [items[i : i + n] for i in range(0, len(items), n)]


def slugify(text):
    """Lower-case words joined by single dashes."""
    return re.sub(r"[^a-z0-9]", "-", text.lower()).strip("-")
