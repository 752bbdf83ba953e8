"""Baselines measured beside the candidate: the timed runs are split into blocks and taken in turn (candidate,
eager, compile, candidate, eager, compile, ...), the candidate's in its worker and the baselines' in the baseline
worker (which never runs candidate code), from the same seeded input sets, so that a speedup is a ratio of two
figures taken in the same window of the machine's life.

A baseline figure measured earlier (the baseline cache, or an earlier candidate of this session) is only a prior:
the baseline still runs in the first block, and if that fresh figure (its median, or its fastest run: the method's
statistic) lies within :data:`PRIOR_BAND` of the prior's, the prior's full figure stands (confirmed); otherwise the
baseline goes on through every block and is measured in full again (re-measured). Every figure carries a
:class:`~kforge_core.harness.verdict.BaselineSource` saying which.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from .. import flags as F
from ..protocol import BaselineResults, Reply, TimingOutcome
from ..verdict import BaselineSource, figure_of, statistic_words
from .outside_clock import Interval, TimedBlock

PRIOR_BAND = 0.10  # a fresh figure within ±10% of the prior's confirms the prior
BLOCKS = 4  # the timed runs are taken in this many blocks per callable, unless the device says otherwise

Figures = tuple[tuple[str, tuple[float, ...]], ...]  # timer -> samples


@dataclass(frozen=True)
class Prior:
    """A baseline's figures from before this window, and where they came from."""

    figures: Figures
    measured_at: float
    origin: str  # where it was measured, in words: "the baseline cache", "an earlier candidate's timing"

    def samples(self, timer: str) -> tuple[float, ...]:
        return dict(self.figures).get(timer, ())


@dataclass
class Window:
    """What one window measured: the candidate's timing (or the reply that ended it), and the baselines."""

    candidate: TimingOutcome | None = None
    failure: Reply | None = None
    baselines: BaselineResults = field(default_factory=lambda: BaselineResults((), (), None))
    sources: tuple[BaselineSource, ...] = ()
    measured: dict[str, Figures] = field(default_factory=dict)  # measured in full now (to keep as priors)
    order: list[tuple[str, tuple[int, int]]] = field(default_factory=list)  # what ran, in order
    # the baselines' blocks as their worker reported them and as the KForge process timed them: the outside
    # clock's calibration (``outside_clock.calibration``)
    baseline_blocks: list[TimedBlock] = field(default_factory=list)


def blocks(repetitions: int, count: int = BLOCKS) -> list[tuple[int, int]]:
    """The timed runs ``0..repetitions`` in ``count`` blocks (fewer when there are fewer runs), as even as can be."""
    count = max(1, min(count, repetitions))
    edges = [round(i * repetitions / count) for i in range(count + 1)]
    return [(edges[i], edges[i + 1]) for i in range(count)]


def confirms(fresh: tuple[float, ...], prior: tuple[float, ...], band: float = PRIOR_BAND,
             statistic: str = "median") -> bool:
    """Whether a fresh measurement's figure (its median, or its fastest run: ``TimingMethod.statistic``) lies
    within ``band`` of the prior's."""
    if not fresh or not prior:
        return False
    was = figure_of(prior, statistic)
    return was > 0 and abs(figure_of(fresh, statistic) - was) <= band * was


def measure_window(repetitions: int, names: tuple[str, ...], priors: dict[str, Prior],
                   time_candidate: Callable[[tuple[int, int]], Reply] | None,
                   time_baseline: Callable[[str, tuple[int, int]], Reply],
                   now: Callable[[], float] = time.time, count: int = BLOCKS, band: float = PRIOR_BAND,
                   baseline_calls: Callable[[], list[Interval]] = list) -> Window:
    """Time the candidate (when ``time_candidate`` is given) and the baselines ``names`` in ``count`` interleaved
    blocks (``Device.timing_blocks``); a prior stands when the first block comes within ``band`` of it
    (``Device.prior_band``).

    :param time_candidate: times the candidate's runs ``(start, stop)``; its reply's value is a TimingOutcome.
    :param time_baseline: times one baseline's runs; its reply's value is a BaselineResults.
    :param baseline_calls: the baseline's calls of the block just timed, by the KForge process's clock.
    :returns: the window; ``failure`` set when the candidate's timing failed (nothing else is used then).
    """
    window = Window()
    active = list(names)
    parts: list[TimingOutcome] = []
    measured: dict[str, list[Figures]] = {name: [] for name in names}
    errors: list[tuple[str, str]] = []
    confirmed: dict[str, str] = {}
    refuted: dict[str, str] = {}
    method = None
    for number, block in enumerate(blocks(repetitions, count)):
        if time_candidate is not None:
            window.order.append(("candidate", block))
            reply = time_candidate(block)
            if reply.failure is not None:
                window.failure = reply
                return window
            parts.append(reply.value)
        for name in list(active):
            window.order.append((name, block))
            reply = time_baseline(name, block)
            calls = baseline_calls()
            found = reply.value if reply.failure is None else None
            figures = dict(found.figures).get(name) if found is not None else None
            if figures is None:
                active.remove(name)
                errors.append((name, reply.message if found is None else dict(found.errors).get(name, "not measured")))
                continue
            method = found.method
            measured[name].append(figures)
            window.baseline_blocks.append(TimedBlock(block[0], {t: list(v) for t, v in figures}, tuple(calls)))
        if number == 0 and method is not None:
            for name in [n for n in active if n in priors]:
                fresh = dict(measured[name][0]).get(method.headline, ())
                prior = priors[name].samples(method.headline)
                detail = (f"fresh {statistic_words(method.statistic)} {figure_of(fresh, method.statistic):.4g} ms "
                          f"over {len(fresh)} runs vs {figure_of(prior, method.statistic):.4g} ms" if fresh and prior
                          else "no prior figure for this timer")
                if confirms(fresh, prior, band, statistic=method.statistic):
                    confirmed[name] = detail
                    active.remove(name)
                else:
                    refuted[name] = detail
    if parts:
        window.candidate = _merged(parts)
    window.baselines, window.sources, window.measured = _baselines(
        names, priors, measured, confirmed, refuted, errors, method, now(), band)
    return window


def _baselines(names: tuple[str, ...], priors: dict[str, Prior], measured: dict[str, list[Figures]],
               confirmed: dict[str, str], refuted: dict[str, str], errors: list[tuple[str, str]], method,
               at: float, band: float) -> tuple[BaselineResults, tuple[BaselineSource, ...], dict[str, Figures]]:
    failed = {name for name, _ in errors}
    samples, figures, sources, full = [], [], [], {}
    for name in names:
        if name in failed or method is None:
            continue
        if name in confirmed:
            prior = priors[name]
            chosen = prior.figures
            sources.append(BaselineSource(name, "confirmed", prior.measured_at, prior.origin, confirmed[name],
                                          band, checked_at=at))
        else:
            chosen = full[name] = _joined(measured[name])
            origin, prior = ("remeasured", priors[name].origin) if name in refuted else ("measured", "")
            sources.append(BaselineSource(name, origin, at, prior, refuted.get(name, ""), band, checked_at=at))
        samples.append((name, dict(chosen)[method.headline]))
        figures.append((name, chosen))
    notes = tuple((source.baseline, source.describe()) for source in sources)
    return BaselineResults(tuple(samples), tuple(errors), method, notes, tuple(figures)), tuple(sources), full


def _joined(blocks_figures: list[Figures]) -> Figures:
    joined: dict[str, list[float]] = {}
    for figures in blocks_figures:
        for timer, samples in figures:
            joined.setdefault(timer, []).extend(samples)
    return tuple((timer, tuple(samples)) for timer, samples in joined.items())


def _merged(parts: list[TimingOutcome]) -> TimingOutcome:
    """The candidate's blocks as one timing outcome."""
    return TimingOutcome(
        samples_ms=tuple(s for part in parts for s in part.samples_ms), method=parts[0].method,
        flags=tuple(F.merge_flags([f for part in parts for f in part.flags])),
        notes=tuple(n for part in parts for n in part.notes), figures=_joined([part.figures for part in parts]),
        device_streams=max(part.device_streams for part in parts),
    )
