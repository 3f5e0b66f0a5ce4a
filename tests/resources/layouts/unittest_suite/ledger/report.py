"""A plain-text balance sheet."""


def balance_sheet(book):
    rows = [f"{account:<12}{book.balance(account):>10.2f}" for account in book.accounts()]
    return "\n".join(rows)
