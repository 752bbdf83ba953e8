"""How figures name their timing method and where their baselines came from, in every report (console, report.md,
bench summary) and in the verdict's own notes: one wording, so that no figure is shown without both."""

from __future__ import annotations

from typing import Any



def statistic_words(statistic: str) -> str:
    """How a runtime's statistic reads in a sentence: "median", or "fastest run"."""
    return "fastest run" if statistic == "min" else "median"


def figures_of(verdict: Any) -> tuple[tuple[str, float], ...]:
    """A verdict's candidate runtimes by timer (each ``RuntimeStats.figure``):
    ``(("wall", 0.23), ("events", 0.05))``."""
    return tuple((timer, stats.figure) for timer, stats in verdict.figures)


def sources_of(verdict: Any) -> tuple[str, ...]:
    """A verdict's baseline sources in short ("eager measured now (2026-11-25 14:16:01)")."""
    return tuple(source.short() for source in verdict.baseline_sources)


def timer_caption(timer: str, figures_ms: tuple[tuple[str, float], ...], statistic: str = "median") -> str:
    """``"wall time; events 0.051 ms, device 0.048 ms"``: the headline's timer, and the other figures; ``"wall time,
    fastest run"`` where the statistic is the fastest run (a median goes without saying, as everywhere else)."""
    others = ", ".join(f"{name} {ms:.4g} ms" for name, ms in figures_ms if name != timer)
    return f"{timer} time" + (f", {statistic_words(statistic)}" if statistic == "min" else "") \
        + (f"; {others}" if others else "")


def sources_caption(sources: tuple[str, ...]) -> str:
    """``"baselines: eager measured now (...), compile from the baseline cache (...), confirmed now"``."""
    return "baselines: " + ("; ".join(sources) if sources else "where from not recorded")
