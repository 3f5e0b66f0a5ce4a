"""An ordinary, untrusted test."""

from minilib import clamp


def test_clamp_inside_range():
    assert clamp(3, 0, 5) == 3
