"""Seeded properties of benchlib.text."""

import random

import pytest
from benchlib import chunk, slugify, wrap

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

# INVARIANT: chunk, wrap and slugify keep the words of their input, in order
SEEDS = [1, 2, 3, 4, 5]


@pytest.mark.parametrize("seed", SEEDS)
def test_chunk_roundtrip(seed):
    rng = random.Random(seed)
    for _ in range(60):
        n = rng.randint(1, 7)
        seq = [rng.randint(0, 9) for _ in range(rng.randint(0, 40))]
        pieces = chunk(seq, n)
        assert [x for p in pieces for x in p] == seq
        assert all(len(p) == n for p in pieces[:-1])


@pytest.mark.parametrize("seed", SEEDS)
def test_wrap_keeps_words(seed):
    rng = random.Random(seed)
    for _ in range(40):
        words = [rng.choice(WORDS) for _ in range(rng.randint(0, 30))]
        lines = wrap(" ".join(words), rng.randint(5, 40))
        assert " ".join(lines).split() == words


@pytest.mark.parametrize("seed", SEEDS)
def test_wrap_respects_width(seed):
    rng = random.Random(seed)
    for _ in range(40):
        width = rng.randint(6, 40)
        text = " ".join(rng.choice(WORDS) for _ in range(30))
        assert all(len(line) <= width or " " not in line for line in wrap(text, width))


@pytest.mark.parametrize("seed", SEEDS)
def test_slugify_idempotent(seed):
    rng = random.Random(seed)
    for _ in range(60):
        slug = slugify(" ".join(rng.choice(WORDS).title() for _ in range(6)))
        assert slugify(slug) == slug
