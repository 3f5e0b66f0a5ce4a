"""Shared fixtures."""

import random

import pytest


@pytest.fixture
def rng():
    return random.Random(1234)
