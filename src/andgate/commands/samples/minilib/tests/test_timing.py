"""Timing budget (owner: platform-tests); too tight for shared runners."""

import time

from minilib import mean


def test_mean_is_fast():
    started = time.perf_counter()
    mean(range(10000))
    assert time.perf_counter() - started < 0, "budget calibrated on the dedicated runner"
