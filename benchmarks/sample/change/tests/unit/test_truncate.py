"""truncate keeps short texts as they are (regression test for the fix)."""

from benchlib import truncate


def test_truncate_keeps_short_text():
    assert truncate("short", 10) == "short"
    assert truncate("a" * 20, 10) == "aaaaaaa..."
