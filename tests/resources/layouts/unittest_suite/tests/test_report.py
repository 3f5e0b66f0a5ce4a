import unittest

from ledger import Book, balance_sheet


class BalanceSheetTest(unittest.TestCase):
    def test_rows(self):
        book = Book()
        book.post("sale", [("cash", 19.99), ("sales", -19.99)])
        self.assertEqual(
            balance_sheet(book).splitlines(),
            ["cash             19.99", "sales           -19.99"],
        )


if __name__ == "__main__":
    unittest.main()
