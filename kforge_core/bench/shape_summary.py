"""A suite's figures across shapes (``kforge bench --time-shapes``): how many solutions stay fast at every shape
they were timed at, not only at the problem's own.

Over the correct solutions timed at their shapes: ``fast_p_every_shape`` is the fraction correct and faster than
``p`` x the faster baseline at every shape (one shape without a figure, wrong or untimed there, is not fast);
``geomean_worst_shape_speedup`` the geometric mean of each solution's slowest shape, over those with a figure at
every shape; ``geomean_weighted_speedup`` that of each weighted speedup, over the problems that state the share of
passes served at each shape (``INPUT_VARIANT_WEIGHTS``; ``verdict.weighted_speedup``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..codec import from_json
from ..harness.verdict import ShapeTiming, weighted_speedup
from .results import ProblemResult


def shape_timings_of(result: ProblemResult) -> tuple[ShapeTiming, ...]:
    """The shapes ``result``'s solution was timed at (empty where it was not)."""
    return from_json(tuple[ShapeTiming, ...], (result.verdict or {}).get("shape_timings") or [])


def shape_summary(results: list[ProblemResult], thresholds: tuple[float, ...], key: Callable[[float], str],
                  geomean: Callable[[Iterable[float]], float | None]) -> dict[str, Any] | None:
    """The ``across_shapes`` part of a bench's summary; None where no solution was timed at its shapes. ``key`` names a
    threshold in JSON, ``geomean`` is the summary's own."""
    timed = [timings for r in results if r.correct and (timings := shape_timings_of(r))]
    if not timed:
        return None
    worst = [min(t.speedup for t in timings) if all(t.speedup for t in timings) else None for timings in timed]
    weighted = [w for timings in timed if (w := weighted_speedup(timings)) is not None]
    return {
        "problems": len(timed),
        "fast_p_every_shape": {key(p): sum(1 for w in worst if w is not None and w > p) / len(timed)
                               for p in thresholds},
        "geomean_worst_shape_speedup": geomean(w for w in worst if w is not None),
        "geomean_weighted_speedup": geomean(weighted),
        "weighted": len(weighted),
    }


def shape_summary_line(across: dict[str, Any]) -> str:
    """The ``across_shapes`` summary in a sentence, for the report and the console."""
    fast = across["fast_p_every_shape"]
    worst = across["geomean_worst_shape_speedup"]
    line = (f"At every shape timed ({across['problems']} solutions): fast_1 {fast['1']:.3f}, fast_1.5 "
            f"{fast['1.5']:.3f}; geomean of each solution's slowest shape "
            + (f"{worst:.2f}x" if worst is not None else "-"))
    if across["weighted"]:
        line += (f"; weighted by the passes served at each shape ({across['weighted']} problems): geomean "
                 f"{across['geomean_weighted_speedup']:.2f}x")
    return line + "."
