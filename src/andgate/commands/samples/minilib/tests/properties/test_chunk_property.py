"""Seeded property for minilib.chunk."""

import random

import pytest
from minilib import chunk

# INVARIANT: chunk(seq, n) returns pieces of exactly n items except a shorter last piece, and joining them gives seq back
SEEDS = [1, 2, 3]


@pytest.mark.parametrize("seed", SEEDS)
def test_chunk_roundtrip(seed):
    rng = random.Random(seed)
    for _ in range(30):
        n = rng.randint(1, 5)
        seq = [rng.randint(0, 9) for _ in range(rng.randint(0, 15))]
        pieces = chunk(seq, n)
        assert [x for piece in pieces for x in piece] == seq
        assert all(len(piece) == n for piece in pieces[:-1])
