import pytest
from pytest_tally import Tally, TallyLimitExceeded


def test_counts_by_kind():
    t = Tally()
    t.add("read")
    t.add("read")
    t.add("write", 3)
    assert t.most_common() == [("write", 3), ("read", 2)]
    assert t.total() == 5


def test_limit():
    t = Tally(limit=2)
    t.add("read", 2)
    with pytest.raises(TallyLimitExceeded, match="read: 3 > 2"):
        t.add("read")
