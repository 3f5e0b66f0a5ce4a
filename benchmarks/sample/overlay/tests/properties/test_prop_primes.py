"""Seeded properties of benchlib.primes."""

import random

import pytest
from benchlib import gcd_all, primes_upto

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

# INVARIANT: primes_upto returns exactly the primes up to n, in increasing order
SEEDS = [1, 2, 3, 4, 5]


@pytest.mark.parametrize("seed", SEEDS)
def test_primes_are_prime(seed):
    rng = random.Random(seed)
    for p in primes_upto(rng.randint(500, 1500)):
        assert all(p % d for d in range(2, int(p**0.5) + 1))


@pytest.mark.parametrize("seed", SEEDS)
def test_primes_sorted(seed):
    rng = random.Random(seed)
    ps = primes_upto(rng.randint(2000, 6000))
    assert ps == sorted(set(ps))


@pytest.mark.parametrize("seed", SEEDS)
def test_primes_complete(seed):
    rng = random.Random(seed)
    n = rng.randint(200, 600)
    brute = [k for k in range(2, n + 1) if all(k % d for d in range(2, k))]
    assert primes_upto(n) == brute


@pytest.mark.parametrize("seed", SEEDS)
def test_gcd_divides(seed):
    rng = random.Random(seed)
    for _ in range(100):
        xs = [rng.randint(1, 10**6) for _ in range(5)]
        assert all(x % gcd_all(xs) == 0 for x in xs)
