"""Number helpers."""

import math


def clamp(x, lo, hi):
    """x limited to the closed range [lo, hi]."""
    return max(lo, min(x, hi))


def mean(xs):
    """Arithmetic mean of a non-empty sequence."""
    xs = list(xs)
    if not xs:
        raise ValueError("mean of an empty sequence")
    return sum(xs) / len(xs)


def median(xs):
    """Middle value (mean of the two middle values for an even count)."""
    s = sorted(xs)
    if not s:
        raise ValueError("median of an empty sequence")
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def variance(xs):
    """Population variance."""
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / len(xs)


def primes_upto(n):
    """All primes <= n, by the sieve of Eratosthenes."""
    if n < 2:
        return []
    sieve = bytearray([1]) * (n + 1)
    sieve[0] = sieve[1] = 0
    for p in range(2, math.isqrt(n) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytearray(len(range(p * p, n + 1, p)))
    return [i for i, flag in enumerate(sieve) if flag]


def gcd_all(xs):
    """Greatest common divisor of all values (0 for an empty sequence)."""
    g = 0
    for x in xs:
        g = math.gcd(g, x)
    return g
