"""Text helpers."""

import re


def slugify(text):
    """Lower-case words joined by single dashes."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def chunk(seq, n):
    """Split seq into lists of n items; the last one may be shorter."""
    if n < 1:
        raise ValueError("n must be at least 1")
    items = list(seq)
    return [items[i : i + n] for i in range(0, len(items), n)]


def wrap(text, width):
    """Greedy word wrap: lines of at most width characters (longer words stand alone)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def count_words(text):
    """How often each word occurs, in alphabetical order."""
    counts = {}
    for word in re.findall(r"[a-z']+", text.lower()):
        counts[word] = counts.get(word, 0) + 1
    return dict(sorted(counts.items()))


def truncate(text, limit):
    """text cut to at most limit characters, ending in '...' when it was cut."""
    if limit < 3:
        raise ValueError("limit must be at least 3")
    if len(text) <= limit:
        return text
    return text[: limit - 3] + "..."
