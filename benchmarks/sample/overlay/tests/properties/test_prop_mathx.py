"""Seeded properties of benchlib.mathx."""

import random

import pytest
from benchlib import clamp, mean, median, variance

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

# INVARIANT: clamp, median and mean stay within the range of their inputs
SEEDS = [1, 2, 3, 4, 5]


@pytest.mark.parametrize("seed", SEEDS)
def test_clamp_in_range(seed):
    rng = random.Random(seed)
    for _ in range(300):
        lo = rng.randint(-50, 50)
        hi = lo + rng.randint(0, 50)
        assert lo <= clamp(rng.randint(-200, 200), lo, hi) <= hi


@pytest.mark.parametrize("seed", SEEDS)
def test_median_between(seed):
    rng = random.Random(seed)
    for _ in range(60):
        xs = [rng.randint(-99, 99) for _ in range(rng.randint(1, 50))]
        assert min(xs) <= median(xs) <= max(xs)


@pytest.mark.parametrize("seed", SEEDS)
def test_mean_between(seed):
    rng = random.Random(seed)
    for _ in range(60):
        xs = [rng.randint(-99, 99) for _ in range(rng.randint(1, 50))]
        assert min(xs) <= mean(xs) <= max(xs)


@pytest.mark.parametrize("seed", SEEDS)
def test_variance_non_negative(seed):
    rng = random.Random(seed)
    for _ in range(60):
        xs = [rng.random() for _ in range(rng.randint(1, 50))]
        assert variance(xs) >= 0
