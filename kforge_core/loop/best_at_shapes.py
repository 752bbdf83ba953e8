"""``kforge run --time-shapes``: once the search has ended, its best candidate verified and timed at each of the
problem's shape variants too, as one journal step (a resumed run replays it rather than timing again), which
report.md shows as a table and ``shapes.png``, the speedup against the size of the inputs."""

from __future__ import annotations

from typing import Any

from ..codec import from_json, to_json
from ..harness.host.shape_timing import own_timing, variant_timings
from ..harness.verdict import ShapeTiming, weighted_speedup
from ..records import Problem
from ..store.attempts import Attempt, Place
from .journal import Journal
from .progress import Progress

STEP = "shape_timing"


def time_best_at_shapes(journal: Journal, evaluator: Any, best: Attempt, problem: Problem,
                        progress: Progress) -> None:
    """Time ``best`` (correct and timed at the problem's own shape) at each variant on ``evaluator`` (a Harness:
    each variant is evaluated there as a problem of its own), and record the rows."""
    candidate, outcome = best.candidate, best.outcome
    assert candidate is not None and outcome is not None and outcome.runtime_ms is not None

    def work(artifact_dir: str) -> tuple[dict[str, Any], None]:
        rows = (own_timing(problem, outcome.runtime_ms, outcome.baselines_ms, outcome.best_speedup),
                *variant_timings(evaluator, candidate, journal.run_dir.path / artifact_dir))
        return {"candidate_label": candidate.label, "shape_timings": to_json(rows)}, None

    progress.event(f"timing {candidate.label} at the problem's {len(problem.shapes.variants)} shape variants "
                   "(--time-shapes)")
    step = journal.step(STEP, candidate.digest, Place("setup"), STEP, work)
    rows = from_json(tuple[ShapeTiming, ...], step.data["shape_timings"])
    for row in rows:
        figure = f"{row.speedup:.2f}x" if row.speedup is not None else (row.message or "-")
        progress.event(f"  {row.shape}: {row.inputs}: {figure}")
    weighted = weighted_speedup(rows)
    if weighted is not None:
        progress.event(f"  weighted by the passes served at each shape: {weighted:.2f}x")
