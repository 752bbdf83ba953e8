"""How sure a median of timed runs is: a confidence interval that assumes nothing of the runs' distribution.

The median of the call's time lies between the k-th smallest and the k-th largest of n independent runs with
probability ``1 - 2 P(Binomial(n, 1/2) < k)``; the interval given is the narrowest such pair at :data:`LEVEL` or
more, and where even the fastest and the slowest run reach less (n < 6), that pair with the level it reaches. A
speedup's interval puts the two figures' intervals at their extremes (the baseline's low over the candidate's
high, and its high over the candidate's low): it holds at the product of the two levels or more.
"""

from __future__ import annotations

import math
from typing import Sequence

LEVEL = 0.95


def median_interval(samples: Sequence[float], level: float = LEVEL) -> tuple[float, float, float]:
    """(low, high, the level reached) of the median of ``samples``; (0, 0, 0) for none."""
    ordered = sorted(samples)
    n = len(ordered)
    if n == 0:
        return 0.0, 0.0, 0.0
    best = 1
    for k in range(1, n // 2 + 1):
        if _coverage(n, k) >= level:
            best = k
        else:
            break
    return ordered[best - 1], ordered[n - best], _coverage(n, best)


def _coverage(n: int, k: int) -> float:
    """P(the k-th smallest <= median <= the k-th largest) of n runs."""
    below = sum(math.comb(n, i) for i in range(k)) / 2 ** n
    return 1.0 - 2.0 * below


def speedup_interval(baseline: tuple[float, float], candidate: tuple[float, float]) -> tuple[float, float] | None:
    """The speedup's interval from the baseline's and the candidate's (low, high); None where either is unknown."""
    if min(*baseline, *candidate) <= 0:
        return None
    return baseline[0] / candidate[1], baseline[1] / candidate[0]
