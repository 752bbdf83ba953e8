"""The speedup per shape (``--time-shapes``) in one wording for reports and the console: a table, the weighted
speedup where shapes carry weights, and ``shapes.png``, the speedup against the size of the inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..harness.verdict import ShapeTiming, weighted_speedup
from .plot import pyplot

SHAPES_PLOT = "shapes.png"


def shape_rows(timings: Iterable[ShapeTiming]) -> list[list[str]]:
    """One row per shape: shape, inputs, elements, runtime, each baseline, speedup (or why none), weight."""
    rows = []
    for t in timings:
        baselines = ", ".join(f"{name} {ms:.4g}" for name, ms in t.baselines_ms) or "-"
        speedup = f"{t.speedup:.2f}x" if t.speedup is not None else (t.message or "-")
        rows.append([t.shape, t.inputs, f"{t.elements:,}", f"{t.runtime_ms:.4g}" if t.runtime_ms else "-", baselines,
                     speedup, f"{t.weight:.0%}" if t.weight else "-"])
    return rows


SHAPE_HEADERS = ["shape", "inputs", "elements", "runtime (ms)", "baselines (ms)", "speedup", "weight"]


def shape_markdown(title: str, timings: tuple[ShapeTiming, ...]) -> list[str]:
    """A markdown table of ``timings`` under ``title``, with the weighted speedup where there is one."""
    lines = [f"**{title}**", "", "| " + " | ".join(SHAPE_HEADERS) + " |", "|" + " --- |" * len(SHAPE_HEADERS)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in shape_rows(timings)]
    weighted = weighted_speedup(timings)
    if weighted is not None:
        lines += ["", f"Weighted by the passes served at each shape: {weighted:.2f}x."]
    return lines


def plot_shape_speedups(series: list[tuple[str, tuple[ShapeTiming, ...]]], title: str, target: Path) -> bool:
    """Draw each series' speedup against the elements of its inputs into ``target`` (the problem's own shape
    circled); False, and nothing drawn, where no series has a speedup."""
    drawn = [(label, sorted((t for t in timings if t.speedup is not None), key=lambda t: t.elements))
             for label, timings in series]
    drawn = [(label, points) for label, points in drawn if points]
    if not drawn:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="faster baseline")
    for label, points in drawn:
        line, = ax.plot([t.elements for t in points], [t.speedup for t in points], marker="o", label=label)
        own = [t for t in points if t.shape == "own"]
        if own:
            ax.scatter([own[0].elements], [own[0].speedup], s=140, facecolors="none", edgecolors=line.get_color())
    ax.set_xscale("log")
    ax.set_xlabel("elements of the inputs (circled: the problem's own shape)")
    ax.set_ylabel("speedup vs the faster baseline")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(target)
    plt.close(fig)
    return True
