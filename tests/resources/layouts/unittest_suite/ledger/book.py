"""Entries move amounts between accounts; every entry balances."""

from collections import defaultdict
from decimal import Decimal


class UnbalancedEntry(ValueError):
    """The debits and credits of an entry differ."""


class Book:
    def __init__(self):
        self.entries = []
        self._balances = defaultdict(Decimal)

    def post(self, memo, lines):
        """lines: (account, amount) pairs; debits positive, credits negative."""
        amounts = [Decimal(str(amount)) for _, amount in lines]
        if sum(amounts) != 0:
            raise UnbalancedEntry(f"{memo}: off by {sum(amounts)}")
        for (account, _), amount in zip(lines, amounts, strict=True):
            self._balances[account] += amount
        self.entries.append((memo, tuple(lines)))

    def balance(self, account):
        return self._balances[account]

    def accounts(self):
        return sorted(a for a, amount in self._balances.items() if amount)
