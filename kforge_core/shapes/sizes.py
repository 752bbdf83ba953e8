"""The sizes a derived variant gives a free dimension: half of it and twice it (a batch or a sequence of another
length), and the largest prime below it (no multiple of any tile, so every tile loop has a tail)."""

from __future__ import annotations


def halved(size: int) -> int | None:
    """Half of ``size`` (rounded down); None where that leaves nothing to compare (below 1) or the same size."""
    new = size // 2
    return new if 1 <= new < size else None


def doubled(size: int) -> int:
    return 2 * size


def prime_below(size: int) -> int | None:
    """The largest prime below ``size`` (127 for 128, 4093 for 4096); None below 3."""
    for candidate in range(size - 1, 1, -1):
        if _is_prime(candidate):
            return candidate
    return None


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    factor = 3
    while factor * factor <= n:
        if n % factor == 0:
            return False
        factor += 2
    return True
