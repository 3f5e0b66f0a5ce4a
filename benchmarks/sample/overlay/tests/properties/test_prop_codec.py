"""Seeded properties of benchlib.codec."""

import itertools
import random

import pytest
from benchlib import checksum, from_base, rle_decode, rle_encode, to_base

WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "merge",
    "gate",
    "oracle",
    "seed",
    "tree",
    "branch",
    "commit",
    "patch",
)

# INVARIANT: rle_decode inverts rle_encode and from_base inverts to_base
SEEDS = [1, 2, 3, 4, 5]


@pytest.mark.parametrize("seed", SEEDS)
def test_rle_roundtrip(seed):
    rng = random.Random(seed)
    for _ in range(40):
        text = "".join(rng.choice("aab ") for _ in range(rng.randint(0, 200)))
        assert rle_decode(rle_encode(text)) == text


@pytest.mark.parametrize("seed", SEEDS)
def test_rle_runs_are_maximal(seed):
    rng = random.Random(seed)
    for _ in range(40):
        pairs = rle_encode("".join(rng.choice("ab") for _ in range(100)))
        assert all(a[0] != b[0] for a, b in itertools.pairwise(pairs))


@pytest.mark.parametrize("seed", SEEDS)
def test_base_roundtrip(seed):
    rng = random.Random(seed)
    for _ in range(200):
        n, b = rng.randrange(10**20), rng.randint(2, 36)
        assert from_base(to_base(n, b), b) == n


@pytest.mark.parametrize("seed", SEEDS)
def test_checksum_in_range(seed):
    rng = random.Random(seed)
    for _ in range(20):
        data = rng.randbytes(rng.randint(0, 300))
        assert 0 <= checksum(data) < 2**32
