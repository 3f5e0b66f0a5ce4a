"""Shared by the conftest files and the tests (the tests folder is on sys.path)."""


def cents(text):
    """'12.34' -> 1234"""
    whole, _, frac = text.partition(".")
    return int(whole) * 100 + int(frac.ljust(2, "0"))
