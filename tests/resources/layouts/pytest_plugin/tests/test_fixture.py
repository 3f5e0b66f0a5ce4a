def test_the_fixture_comes_from_the_entry_point(tally):
    tally.add("call")
    assert tally.total() == 1
    assert tally.limit is None
