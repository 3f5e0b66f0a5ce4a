"""Iterator helpers."""

import itertools


def take(n, seq):
    """The first n items of seq."""
    return list(itertools.islice(seq, n))


def partition_all(n, seq):
    """Tuples of n items of seq; the last one may be shorter."""
    it = iter(seq)
    while True:
        piece = tuple(itertools.islice(it, n))
        if not piece:
            return
        yield piece


def frequencies(seq):
    """How many times each item occurs in seq."""
    counts = {}
    for item in seq:
        counts[item] = counts.get(item, 0) + 1
    return counts


def unique(seq):
    """The items of seq without repeats, in first-seen order."""
    seen = set()
    for item in seq:
        if item not in seen:
            seen.add(item)
            yield item
