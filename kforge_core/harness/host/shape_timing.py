"""``--time-shapes``: a correct candidate timed at each of its problem's shape variants as well as at its own shape.

Each variant is evaluated as a problem of its own (``shapes/problem_file.py``): the candidate is verified and
timed there against the baselines timed there, through the same Harness, which then goes back to the problem. The
rows give the speedup per shape; a problem that states the passes a model serves at each shape gets the weighted
speedup too (``verdict.weighted_speedup``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import KForgeError
from ...problem import load_problem
from ...records import Candidate, Problem, ValueSpec
from ...shapes.problem_file import variant_problem_file
from ..verdict import ShapeTiming, Verdict

if TYPE_CHECKING:
    from .harness import Harness


def time_at_shapes(harness: Harness, candidate: Candidate, verdict: Verdict, directory: Path
                   ) -> tuple[ShapeTiming, ...]:
    """The candidate at its problem's own shape (from ``verdict``) and at each shape variant (evaluated now; the
    variants' problem files are written in ``directory``)."""
    problem = harness.problem
    return (_row("own", problem.inputs, verdict, problem.shapes.own_weight),
            *variant_timings(harness, candidate, directory))


def own_timing(problem: Problem, runtime_ms: float, baselines_ms: tuple[tuple[str, float], ...],
               speedup: float | None) -> ShapeTiming:
    """The row of the problem's own shape, from figures already measured there."""
    return ShapeTiming("own", _inputs(problem.inputs), _elements(problem.inputs), runtime_ms, baselines_ms, speedup,
                       problem.shapes.own_weight)


def variant_timings(harness: Harness, candidate: Candidate, directory: Path) -> tuple[ShapeTiming, ...]:
    """The candidate verified and timed at each shape variant of the harness's problem (its problem files written
    in ``directory``); the harness is back on its problem afterwards."""
    problem = harness.problem
    rows: list[ShapeTiming] = []
    try:
        for variant in problem.shapes.variants:
            try:
                at = load_problem(variant_problem_file(problem, variant, directory))
                harness.use_problem(at)
                there = harness.evaluate(candidate)
            except KForgeError as error:  # the reference itself cannot run there: not the candidate's doing
                rows.append(ShapeTiming(variant.name, _inputs(variant.inputs), _elements(variant.inputs),
                                        weight=variant.weight, message=f"not timed: {error}"))
                continue
            rows.append(_row(variant.name, at.inputs, there, variant.weight))
    finally:
        harness.use_problem(problem)
    return tuple(rows)


def _row(shape: str, inputs: tuple[ValueSpec, ...], verdict: Verdict, weight: float) -> ShapeTiming:
    timed = verdict.correct and verdict.runtime_ms is not None
    message = "" if timed else (f"{verdict.failure.value}: {verdict.message.strip().splitlines()[0]}"
                                if verdict.failure is not None else "not timed")
    return ShapeTiming(shape, _inputs(inputs), _elements(inputs), verdict.runtime_ms if timed else None,
                       verdict.baselines_ms if timed else (), verdict.best_speedup if timed else None, weight,
                       message)


def _inputs(inputs: tuple[ValueSpec, ...]) -> str:
    return ", ".join(spec.describe() for spec in inputs)


def _elements(inputs: tuple[ValueSpec, ...]) -> int:
    return sum(math.prod(t.shape) for spec in inputs for t in spec.tensors())


