from flatlib import frequencies, partition_all, take, unique


def test_take():
    assert take(2, [1, 2, 3]) == [1, 2]
    assert take(5, [1, 2]) == [1, 2]


def test_partition_all():
    assert list(partition_all(2, [1, 2, 3])) == [(1, 2), (3,)]


def test_frequencies():
    assert frequencies("abca") == {"a": 2, "b": 1, "c": 1}


def test_unique():
    assert list(unique([3, 1, 3, 2, 1])) == [3, 1, 2]
