"""Count events in a test: the `tally` fixture."""

from pytest_tally.counter import Tally, TallyLimitExceeded

__all__ = ["Tally", "TallyLimitExceeded"]
