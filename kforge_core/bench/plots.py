"""A bench's figures: the fast_p curve (the fraction of problems correct and faster than p x the baseline, as
p grows), the histogram of the speedups of the correct problems, and each problem's speedup against the fraction of
its speed of light it reaches, beside its baselines' own fractions."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..report.plot import pyplot
from .results import ProblemResult
from .summary import THRESHOLDS, baselines_of, fast_p

_HEADROOM = 1.4  # the histogram's top above its tallest bar: room for the legend in the upper corner


def plot_fast_p(results: list[ProblemResult], total: int, title: str, target: Path) -> None:
    """Draw :func:`fast_p_figure` into ``target``."""
    _save(fast_p_figure(results, total, title), target)


def plot_speedup_histogram(results: list[ProblemResult], title: str, target: Path) -> None:
    """Draw :func:`speedup_histogram_figure` into ``target``."""
    _save(speedup_histogram_figure(results, title), target)


def fast_p_figure(results: list[ProblemResult], total: int, title: str) -> Any:
    """fast_p against the faster baseline and against each baseline, for p from 0 to past the largest speedup."""
    plt = pyplot()
    largest = max((s for r in results if r.correct for _, s in r.speedups), default=2.0)
    top = max(2.5, min(largest * 1.1, 1000.0))
    ps = [top * i / 400 for i in range(401)]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    curves = [("faster baseline", None)] + [(name, name) for name in baselines_of(results)]
    for label, baseline in curves:
        ys = [fast_p(results, total, p, baseline) for p in ps]
        if any(y is not None for y in ys):
            ax.plot(ps, [y or 0.0 for y in ys], label=f"vs {label}", linewidth=2 if baseline is None else 1)
    for p in THRESHOLDS[1:]:
        ax.axvline(p, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("p (speedup threshold)")
    ax.set_ylabel("fast_p: fraction of problems\ncorrect and faster than p x baseline")  # two lines fit 4 inches
    ax.set_xlim(0, top)
    ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def speedup_histogram_figure(results: list[ProblemResult], title: str) -> Any:
    """The correct problems' speedups against the faster baseline, in bins even on a log scale."""
    plt = pyplot()
    speedups = [s for r in results if r.correct and (s := r.best_speedup) is not None and s > 0]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    if speedups:
        low = min(math.floor(math.log2(min(speedups)) * 2) / 2, -1.0)
        high = max(math.ceil(math.log2(max(speedups)) * 2) / 2, 1.0)
        edges = [2 ** (low + 0.5 * i) for i in range(int((high - low) / 0.5) + 1)]
        counts, _, _ = ax.hist(speedups, bins=edges, color="tab:blue", edgecolor="white")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, max(counts) * _HEADROOM)
        ax.yaxis.get_major_locator().set_params(integer=True)  # counts of problems
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1, label="as fast as the faster baseline")
    ax.set_xlabel("speedup vs the faster baseline (log scale)")
    ax.set_ylabel("problems")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def plot_sol(results: list[ProblemResult], title: str, target: Path) -> None:
    """Draw :func:`sol_figure` into ``target``."""
    _save(sol_figure(results, title), target)


_BASELINE_MARKERS = {"eager": ("s", "tab:orange"), "compile": ("^", "tab:green")}


def sol_figure(results: list[ProblemResult], title: str) -> Any:
    """Per correct problem: its speedup against the faster baseline by the fraction of the speed of light it
    reaches (a dot), and each baseline at its own fraction and its speed relative to the faster one (joined to the
    dot by a thin line): how far each solution moved towards the limit, and how much room was left."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    placed = [r for r in results if r.correct and r.sol_fraction is not None and r.best_speedup]
    labelled: set[str] = set()
    for r in placed:
        fastest = min(ms for _, ms in r.baselines_ms) if r.baselines_ms else None
        for name, fraction in r.baseline_fractions:
            ms = dict(r.baselines_ms).get(name)
            if fastest is None or not ms:
                continue
            marker, color = _BASELINE_MARKERS.get(name, ("x", "tab:gray"))
            ax.plot([fraction, r.sol_fraction], [fastest / ms, r.best_speedup], color="lightgray", linewidth=0.7,
                    zorder=1)
            ax.scatter([fraction], [fastest / ms], marker=marker, color=color, s=18, zorder=2,
                       label=f"PyTorch {name}" if name not in labelled else None)
            labelled.add(name)
        ax.scatter([r.sol_fraction], [r.best_speedup], color="tab:blue", s=24, zorder=3,
                   label="solution" if "solution" not in labelled else None)
        labelled.add("solution")
    ax.set_yscale("log", base=2)
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("fraction of the speed of light reached (1: at the device's limit)")
    ax.set_ylabel("speedup vs the faster baseline (log scale)")
    ax.set_title(title + (f"\n{len(placed)} problems with a bound" if placed else "\nno problem has a bound"),
                 fontsize=9)
    if labelled:
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def _save(fig: Any, target: Path) -> None:
    fig.savefig(target)
    pyplot().close(fig)
