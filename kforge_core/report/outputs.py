"""What a run leaves at the top of its directory: ``best.py`` (and the best candidate's other files),
``report.md`` and ``speedup.png``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..secrets import redact
from ..store import RunStore
from .markdown import render_markdown
from .plot import plot_search, plot_speedups
from .run_report import RunReport
from .shape_speedups import SHAPES_PLOT, plot_shape_speedups

BEST = "best.py"
REPORT = "report.md"
PLOT = "speedup.png"
SEARCH_PLOT = "search.png"  # a wide search's best speedup by round and by wall time
_RESERVED = {BEST, REPORT, PLOT, SEARCH_PLOT, SHAPES_PLOT, "steps"}


@dataclass(frozen=True)
class RunOutputs:
    report: RunReport
    report_path: Path
    best_path: Path | None
    plot_path: Path


def write_outputs(store: RunStore, run_id: str) -> RunOutputs:
    report = RunReport.from_store(store, run_id)
    run_dir = report.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    best_path = _write_best(report, run_dir)
    plot_path = run_dir / PLOT
    plot_speedups(report, plot_path)
    search_plot = None
    if report.wide:
        plot_search(report, run_dir / SEARCH_PLOT)
        search_plot = SEARCH_PLOT
    shapes_plot = None
    if report.shape_timings and plot_shape_speedups(
            [(report.shapes_timed_for, report.shape_timings)],
            f"{report.run.problem_name}: the best candidate at each shape", run_dir / SHAPES_PLOT):
        shapes_plot = SHAPES_PLOT
    text = render_markdown(report, plot_file=PLOT, best_file=BEST if best_path else None,
                           search_plot_file=search_plot, shapes_plot_file=shapes_plot)
    report_path = run_dir / REPORT
    report_path.write_text(redact(text))
    return RunOutputs(report, report_path, best_path, plot_path)


def read_outputs(store: RunStore, run_id: str) -> RunOutputs:
    """What the run left, as it is: its report from the store and its files' paths; nothing is written."""
    report = RunReport.from_store(store, run_id)
    best_path = report.run_dir / BEST
    return RunOutputs(report, report.run_dir / REPORT, best_path if best_path.exists() else None,
                      report.run_dir / PLOT)


def _write_best(report: RunReport, run_dir: Path) -> Path | None:
    """The best candidate's entry module as ``best.py``, its other files next to it (under their own names)."""
    best = report.best
    if best is None or best.candidate is None:
        (run_dir / BEST).unlink(missing_ok=True)
        return None
    candidate = best.candidate
    for f in candidate.files:
        name = BEST if f.name == candidate.entry else f.name
        if name != BEST and name.split("/")[0] in _RESERVED:
            name = f"best_files/{name}"  # never let a candidate's file overwrite the run's own outputs
        target = run_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(redact(f.text))
    return run_dir / BEST
