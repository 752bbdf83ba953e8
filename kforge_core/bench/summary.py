"""A suite's figures: correctness, failures by class, KernelBench's fast_p and the geomean speedups.

fast_p (KernelBench): the fraction of all problems whose solution is correct AND faster than ``p`` times the
baseline, ``sum(correct_i and speedup_i > p) / total``, over the problems finished (all of them, once the bench
is). fast_0 is the correctness rate. ``fast_p`` is taken against
the faster baseline of each problem (KForge's headline speedup, the harder one to beat) and, in
``fast_p_by_baseline``, against each baseline. Speedups are by the headline timer (``harness.timer``; ``timers``
says which); ``figures_geomean_ms`` gives every timer's geomean runtime, ``baseline_origins`` where the
baselines' figures came from, and ``baselines_missing`` how many timed solutions lack a baseline's figure (left out
of its geomean and fast_p: the baseline's ``torch.compile`` build was still under way, or it failed; each
``baseline_errors`` says why). A suite written by ``kforge hotspots --extract`` holds a ``model.json`` that weighs
each problem by its share of the model's time: ``weighted_fast_p`` counts each problem by that weight, and
``model_time_weighed`` says how much of the model's time the suite's problems hold.

Against the speed of light (``kforge_core.speed_of_light``): ``geomean_sol_score`` is the geometric mean of the
correct problems' SOL scores (SOL-ExecBench: 0.5 at the faster baseline, 1 at the limit), and ``sol_fraction`` the
distribution of the fractions of the limit the solutions reach, with the baselines' own beside them. With
``--time-shapes``, ``across_shapes`` says how the solutions did across their shapes (``bench/shape_summary.py``).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable

from .results import ProblemResult
from .shape_summary import shape_summary

THRESHOLDS = (0.0, 1.0, 1.5, 2.0)


def threshold_key(p: float) -> str:
    """``"0"``, ``"1"``, ``"1.5"``, ``"2"``: how thresholds are keyed in JSON."""
    return f"{p:g}"


def fast_p(results: list[ProblemResult], total: int, p: float, baseline: str | None = None) -> float | None:
    """The fraction of ``total`` problems correct and faster than ``p`` x the baseline (the faster one when
    ``baseline`` is None); None when ``p`` > 0 and correct solutions were not timed against it (``--no-timing``):
    unknown, where a bench with nothing correct has fast_p 0."""
    if total == 0:
        return None
    if p == 0:
        return sum(r.correct for r in results) / total
    speeds = [_speedup(r, baseline) for r in results if r.correct]
    if speeds and all(s is None for s in speeds):
        return None
    return sum(1 for s in speeds if s is not None and s > p) / total


def geomean(values: Iterable[float]) -> float | None:
    logs = [math.log(v) for v in values if v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


def baselines_of(results: list[ProblemResult]) -> list[str]:
    """The baselines any result was compared with, in the order first seen."""
    names: list[str] = []
    for result in results:
        names += [name for name, _ in result.speedups if name not in names]
    return names


def weighted_fast_p(results: list[ProblemResult], weights: dict[str, float], p: float) -> float | None:
    """fast_p with each problem counted by its weight (a model's time share, from the suite's ``model.json``):
    the weight of the problems correct and faster than ``p`` x the faster baseline over the weight of all the
    suite's weighed problems (finished or not). None where nothing weighs, or, for ``p`` > 0, nothing was timed."""
    total = sum(weights.values())
    if total <= 0:
        return None
    if p == 0:
        return sum(weights.get(r.key, 0.0) for r in results if r.correct) / total
    speeds = [(r.key, r.best_speedup) for r in results if r.correct]
    if speeds and all(s is None for _, s in speeds):
        return None
    return sum(weights.get(key, 0.0) for key, s in speeds if s is not None and s > p) / total


def summarize(results: list[ProblemResult], total: int | None = None,
              weights: dict[str, float] | None = None) -> dict[str, Any]:
    """The ``summary`` of ``kforge bench --json``; ``total`` counts problems not finished yet too. fast_p is over
    the finished problems: one not run yet (an interrupted bench) is no failure, and for a finished bench the two
    are the same. ``weights`` (each problem's share of a model's time) adds ``weighted_fast_p``."""
    total = len(results) if total is None else total
    finished = len(results)
    baselines = baselines_of(results)
    correct = [r for r in results if r.correct]
    across_shapes = shape_summary(results, THRESHOLDS, threshold_key, geomean)
    weighted = {} if weights is None else {
        "weighted_fast_p": {threshold_key(p): weighted_fast_p(results, weights, p) for p in THRESHOLDS},
        "model_time_weighed": sum(weights.values())}
    return {
        "total": total,
        "finished": finished,
        "not_run": total - finished,
        "correct": len(correct),
        "failures": dict(sorted(Counter(r.failure for r in results if r.failure is not None).items())),
        "flagged": sum(1 for r in correct if r.flags),
        "fast_p": {threshold_key(p): fast_p(results, finished, p) for p in THRESHOLDS},
        "fast_p_by_baseline": {name: {threshold_key(p): fast_p(results, finished, p, name) for p in THRESHOLDS}
                               for name in baselines},
        "geomean_speedup": {name: geomean(s for r in correct if (s := r.speedup(name)) is not None)
                            for name in baselines},
        "geomean_best_speedup": geomean(s for r in correct if (s := r.best_speedup) is not None),
        "timed": sum(1 for r in correct if r.speedups),
        "timers": sorted({r.timer for r in correct if r.runtime_ms is not None}),
        "figures_geomean_ms": {timer: geomean(ms for r in correct for t, ms in r.figures_ms if t == timer)
                               for timer in _timers(correct)},
        "baseline_origins": _origins(correct),
        "baselines_missing": _missing(correct),
        "geomean_sol_score": geomean(r.sol_score for r in correct if r.sol_score is not None),
        "sol_scored": sum(1 for r in correct if r.sol_score is not None),
        "sol_fraction": {"solutions": distribution([r.sol_fraction for r in correct if r.sol_fraction is not None]),
                         **{name: distribution([f for r in correct for b, f in r.baseline_fractions if b == name])
                            for name in baselines}},
        "seconds": sum(r.seconds for r in results),
        "llm": _usage(results),
        **weighted,
        **({"across_shapes": across_shapes} if across_shapes is not None else {}),
    }


def distribution(values: list[float]) -> dict[str, Any]:
    """``{"count", "median", "p25", "p75", "min", "max"}`` of ``values`` (None each when there are none)."""
    ordered = sorted(values)
    if not ordered:
        return {"count": 0, "median": None, "p25": None, "p75": None, "min": None, "max": None}

    def quantile(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return {"count": len(ordered), "median": quantile(0.5), "p25": quantile(0.25), "p75": quantile(0.75),
            "min": ordered[0], "max": ordered[-1]}


def _timers(results: list[ProblemResult]) -> list[str]:
    found: list[str] = []
    for result in results:
        found += [timer for timer, _ in result.figures_ms if timer not in found]
    return found


def _origins(results: list[ProblemResult]) -> dict[str, int]:
    """How many baseline figures were measured now, confirmed from a prior, or re-measured after a prior failed."""
    counts: Counter[str] = Counter()
    for result in results:
        for source in result.baseline_sources:
            counts["confirmed from a prior" if "confirmed now" in source else
                   "re-measured (prior disagreed)" if "re-measured" in source else "measured now"] += 1
    return dict(counts)


def _missing(results: list[ProblemResult]) -> dict[str, int]:
    """How many timed solutions lack each baseline's figure (its ``torch.compile`` build still under way, or the
    baseline failed): the geomean against it leaves them out."""
    counts: Counter[str] = Counter()
    for result in results:
        if result.runtime_ms is not None:
            counts.update(name for name, _ in result.baseline_errors)
    return dict(counts)


def _speedup(result: ProblemResult, baseline: str | None) -> float | None:
    return result.best_speedup if baseline is None else result.speedup(baseline)


def _usage(results: list[ProblemResult]) -> dict[str, Any] | None:
    used = [r.usage for r in results if r.usage is not None]
    if not used:
        return None
    costs = [u.cost_usd for u in used]
    return {"calls": sum(u.calls for u in used), "input_tokens": sum(u.input_tokens for u in used),
            "output_tokens": sum(u.output_tokens for u in used),
            "cost_usd": sum(c for c in costs if c is not None) if any(c is not None for c in costs) else None,
            "cost_complete": all(c is not None for c in costs)}
