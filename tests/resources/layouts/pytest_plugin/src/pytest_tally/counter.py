"""The counter behind the fixture; it knows nothing of pytest."""

from collections import Counter


class TallyLimitExceeded(AssertionError):
    """More events of one kind than the limit allows."""


class Tally:
    def __init__(self, limit=None):
        self.limit = limit
        self.counts = Counter()

    def add(self, kind, n=1):
        self.counts[kind] += n
        if self.limit is not None and self.counts[kind] > self.limit:
            raise TallyLimitExceeded(f"{kind}: {self.counts[kind]} > {self.limit}")

    def most_common(self, n=None):
        return self.counts.most_common(n)

    def total(self):
        return sum(self.counts.values())
