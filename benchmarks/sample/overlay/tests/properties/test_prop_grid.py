"""Seeded properties of benchlib.grid."""

import random

import pytest
from benchlib import flood_count, life, rotate, transpose

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

# INVARIANT: rotating a grid four times or transposing it twice gives it back
SEEDS = [1, 2, 3, 4, 5]


@pytest.mark.parametrize("seed", SEEDS)
def test_rotate_four_times(seed):
    rng = random.Random(seed)
    for _ in range(30):
        rows = ["".join(rng.choice(".#") for _ in range(9)) for _ in range(7)]
        assert rotate(rotate(rotate(rotate(rows)))) == rows


@pytest.mark.parametrize("seed", SEEDS)
def test_transpose_twice(seed):
    rng = random.Random(seed)
    for _ in range(30):
        rows = ["".join(rng.choice(".#") for _ in range(9)) for _ in range(7)]
        assert transpose(transpose(rows)) == rows


@pytest.mark.parametrize("seed", SEEDS)
def test_flood_bounded(seed):
    rng = random.Random(seed)
    for _ in range(20):
        rows = ["".join(rng.choice("..#") for _ in range(12)) for _ in range(12)]
        assert flood_count(rows, 0, 0) <= "".join(rows).count(".")


@pytest.mark.parametrize("seed", SEEDS)
def test_life_stays_on_board(seed):
    rng = random.Random(seed)
    cells = {(rng.randrange(12), rng.randrange(12)) for _ in range(40)}
    assert all(0 <= y < 12 and 0 <= x < 12 for y, x in life(cells, 8))
