"""The bench's figures as drawn: nothing cut off at the figure's edge, the legend clear of the bars."""

from __future__ import annotations

import pytest

from kforge_core.bench.plots import fast_p_figure, plot_fast_p, plot_speedup_histogram, speedup_histogram_figure
from kforge_core.bench.results import ProblemResult


def _correct(key: str, speedup: float) -> ProblemResult:
    return ProblemResult(key, True, None, speedups=(("eager", speedup * 1.5), ("compile", speedup)))


# most problems land in the rightmost bin, where the legend sits unless there is room above the bars
RESULTS = [_correct("a", 0.7), *(_correct(k, 3.5) for k in "bcdefg"), ProblemResult("h", False, "numerical_mismatch")]


@pytest.fixture
def drawn():
    figures = []

    def draw(figure):
        figures.append(figure)
        figure.canvas.draw()
        return figure, figure.canvas.get_renderer()

    yield draw
    for figure in figures:
        figure.clf()


def _inside(inner, outer) -> bool:
    return inner.x0 >= outer.x0 and inner.y0 >= outer.y0 and inner.x1 <= outer.x1 and inner.y1 <= outer.y1


def test_the_fast_p_figure_keeps_its_axis_labels_inside(drawn):
    figure, renderer = drawn(fast_p_figure(RESULTS, len(RESULTS), "level1 on cpu (bench-x)\nfp32 contract"))
    ax = figure.axes[0]
    for label in (ax.yaxis.label, ax.xaxis.label, ax.title):
        assert _inside(label.get_window_extent(renderer), figure.bbox), label.get_text()


def test_the_histograms_legend_covers_no_bar(drawn):
    figure, renderer = drawn(speedup_histogram_figure(RESULTS, "level1 on cpu (bench-x)\nfp32 contract"))
    ax = figure.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [patch.get_window_extent(renderer) for patch in ax.patches if patch.get_height() > 0]
    assert bars and not any(legend.overlaps(bar) for bar in bars)
    assert _inside(ax.yaxis.label.get_window_extent(renderer), figure.bbox)


def test_the_figures_are_written(tmp_path):
    plot_fast_p(RESULTS, len(RESULTS), "t", tmp_path / "fast_p.png")
    plot_speedup_histogram(RESULTS, "t", tmp_path / "speedups.png")
    assert (tmp_path / "fast_p.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "speedups.png").read_bytes()[:4] == b"\x89PNG"
