"""A double-entry ledger."""

from ledger.book import Book, UnbalancedEntry
from ledger.report import balance_sheet

__all__ = ["Book", "UnbalancedEntry", "balance_sheet"]
