import unittest
from decimal import Decimal

from ledger import Book, UnbalancedEntry


class PostTest(unittest.TestCase):
    def setUp(self):
        self.book = Book()
        self.book.post("rent", [("rent", 1200), ("cash", -1200)])

    def test_balances_move(self):
        self.assertEqual(self.book.balance("rent"), Decimal(1200))
        self.assertEqual(self.book.balance("cash"), Decimal(-1200))

    def test_unbalanced_entry_is_refused(self):
        with self.assertRaises(UnbalancedEntry):
            self.book.post("typo", [("cash", 10), ("food", -9)])
        self.assertEqual(len(self.book.entries), 1)

    def test_cents_add_up(self):
        self.book.post("coffee", [("food", 0.1), ("food", 0.2), ("cash", -0.3)])
        self.assertEqual(self.book.balance("food"), Decimal("0.3"))


class AccountsTest(unittest.TestCase):
    def test_zero_balances_are_left_out(self):
        book = Book()
        book.post("loan", [("cash", 50), ("loan", -50)])
        book.post("repay", [("loan", 50), ("cash", -50)])
        self.assertEqual(book.accounts(), [])

    def test_sorted(self):
        book = Book()
        for account in ("b", "c", "a"):
            with self.subTest(account=account):
                book.post(account, [(account, 1), ("equity", -1)])
        self.assertEqual(book.accounts(), ["a", "b", "c", "equity"])


if __name__ == "__main__":
    unittest.main()
