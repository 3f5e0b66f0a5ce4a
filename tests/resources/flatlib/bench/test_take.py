"""A benchmark script, named like a test (as toolz's bench/ folder): never an oracle."""

from flatlib import take

seq = list(range(1000))


def test_take():
    take(500, seq)
