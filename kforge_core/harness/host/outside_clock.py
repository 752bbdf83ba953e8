"""The outside clock: the KForge process times every timed call of a candidate itself, and the worker's figures must
agree with it. Runs in the KForge process.

A candidate runs in the process that times it, so whatever that process measures is within the candidate's reach
(a timer method replaced on a class, a figure rewritten before it is sent). The worker marks each timed call as it
begins and ends (``StageTimer.timed``). The mark that begins is answered: the worker starts its clock only once this
process has noted the mark by its own clock; the mark that ends is sent after the worker's clock stopped and the
call's outputs were copied, and noted as it arrives (:class:`CallLog`). So, by cause and effect, a call's interval
here holds the whole of the worker's measurement of it, on every timer (the device's events and its busy time lie
between the same two moments), plus what the worker does around it (the cache flush, the synchronizes, the copy of
the outputs, the marks' way through the pipe). That overhead is measured on the baselines' calls of the same window,
made the same way in the baseline worker, which never runs candidate code (:func:`calibration`).

What is checked, per timer (:func:`judge`):

* every timer: one figure per call this process saw, and no figure longer than the interval around its call
  (beyond :data:`CLOCK_EPSILON_MS`, the clocks' resolution): a figure is part of its call;
* ``wall``: the worker's median figure is no shorter than the median interval less the *most* this process's clock
  added to any baseline call of the window, beyond the slack ``max(ABSOLUTE_SLACK_MS, RELATIVE_SLACK x the
  figure)``. Why the most and not a typical overhead: a busy host delays a waiting process's wake-up now and then
  by tens of milliseconds, which no interval can be told apart from; a candidate's figure is contradicted only
  when more than half of its calls took longer, beyond what the worker says, than any baseline call did. If the
  host's delays fell on the calls at random, that needs the slowest half of the candidate's calls to be slower
  than all of the baselines' (with 20 calls against 40: a chance of 2.5 in a million; see docs/timing.md). With
  fewer calls the bound starts from a shorter interval than the median, one that holds that chance as near as the
  calls allow (:func:`bounding_interval`). It needs at least :data:`MIN_CALLS` calls on each side; with fewer, the
  figure is bounded from above only, and the verdict says so.
* ``events`` and ``device`` measure the device, not the host, so the intervals bound them only from above; below,
  the problem's physical floor bounds them (``faster_than_hardware``).

A figure the outside clock contradicts is a blocking ``timing_mismatch`` flag that gives both figures.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable, Iterable

from ...records import Flag
from ...settings import HarnessSettings
from .. import flags as F
from ..protocol import TimingOutcome
from ...timing.timed_runs import parse_timed_label
from ..verdict import OutsideFigure, figure_of

ABSOLUTE_SLACK_MS = 0.05  # below this, the pipe's and the host's own jitter decide, not the call
RELATIVE_SLACK = 0.10  # a figure may be this much shorter than the outside clock's before it is contradicted
MIN_CALLS = 8  # timed calls on each side (the candidate's, the baselines') below which no lower bound is drawn
# the chance that host delays falling at random contradict an honest wall figure, at the default 20 calls against
# 40 baseline calls from the median; with fewer calls the bound starts from a shorter interval to hold it
FALSE_ALARM = 2.5e-6
CLOCK_EPSILON_MS = 0.005  # the clocks' resolution and rounding: a figure may pass its interval by no more
# the longest baseline calls are held for calibration: past a few scheduler ticks, how late a process that waited
# through a call wakes no longer grows with the wait
LONGEST_HOLD_MS = 100.0


@dataclass(frozen=True)
class Interval:
    """One marked call, by this process's clock: its label and how long it lasted, in milliseconds.
    ``start_read_late``: its start mark had been waiting to be read (this process was busy, judging the call before
    with the referee), so the call began before its interval did."""

    label: str
    ms: float
    start_read_late: bool = False


class CallLog:
    """The calls a worker marks while it is watched, timed by this process's clock as the marks arrive."""

    def __init__(self) -> None:
        self._open: list[tuple[str, float, bool]] = []
        self._intervals: list[Interval] = []

    def mark(self, what: str, entering: bool, now: float, read_late: bool = False) -> None:
        """A call's mark was read at ``now`` (seconds, ``time.perf_counter``); ``read_late``: it had been waiting to
        be read, so it arrived before ``now``."""
        if entering:
            self._open.append((what, now, read_late))
            return
        for index in range(len(self._open) - 1, -1, -1):
            if self._open[index][0] == what:
                _, start, late = self._open.pop(index)
                self._intervals.append(Interval(what, (now - start) * 1e3, late))
                return

    def take(self) -> list[Interval]:
        """The intervals noted since the last take."""
        taken, self._intervals = self._intervals, []
        return taken

    def call_ms(self, prefix: str = "") -> float | None:
        """How long a call takes, from the calls noted since the last take whose label starts with ``prefix`` (every
        one where none does; None: none was noted): the shortest of those whose start was read as it arrived. Such
        an interval holds the call (its start mark is sent before the call begins) but for the moment this process
        takes to wake to that mark (a fraction of a millisecond, more on a loaded host), so a first call's build or
        a busy host only lengthens it beyond that. Where every start was read late, each interval is shorter than its
        call: the longest is the nearest."""
        chosen = [i for i in self._intervals if i.label.startswith(prefix)] or self._intervals
        if not chosen:
            return None
        exact = [i.ms for i in chosen if not i.start_read_late]
        return min(exact) if exact else max(i.ms for i in chosen)


Samples = dict[str, list[float]]  # timer -> one figure per timed run, in run order from ``first_run``


@dataclass(frozen=True)
class TimedBlock:
    """A block of timed runs as the worker reported it and as this process saw it."""

    first_run: int
    samples: Samples
    intervals: tuple[Interval, ...]


@dataclass(frozen=True)
class Overhead:
    """What this process's clock added to the baselines' calls beyond their own figures, by timer: the median, the
    most, and over how many calls."""

    median_ms: dict[str, float]
    most_ms: dict[str, float]
    calls: dict[str, int]


def pairs(block: TimedBlock) -> dict[str, list[tuple[float, float]]]:
    """``timer -> [(figure, interval)]`` for the calls of ``block`` that have both."""
    seen: dict[tuple[str, int], float] = {}
    for interval in block.intervals:
        parsed = parse_timed_label(interval.label)
        if parsed is not None:
            run, timer = parsed
            seen[(timer, run)] = interval.ms
    paired: dict[str, list[tuple[float, float]]] = {}
    for timer, figures in block.samples.items():
        for offset, figure in enumerate(figures):
            interval = seen.get((timer, block.first_run + offset))
            if interval is not None:
                paired.setdefault(timer, []).append((figure, interval))
    return paired


def calibration(blocks: Iterable[TimedBlock]) -> Overhead | None:
    """The overhead measured on the baselines' blocks; None when no call of theirs was seen."""
    extra: dict[str, list[float]] = {}
    for block in blocks:
        for timer, paired in pairs(block).items():
            extra.setdefault(timer, []).extend(interval - figure for figure, interval in paired)
    if not extra:
        return None
    return Overhead({timer: statistics.median(values) for timer, values in extra.items()},
                    {timer: max(values) for timer, values in extra.items()},
                    {timer: len(values) for timer, values in extra.items()})


def judge(blocks: Iterable[TimedBlock], overhead: Overhead | None, statistic: str,
          held: tuple[float, Overhead] | None = None) -> tuple[OutsideFigure, ...]:
    """The candidate's figures beside this process's, per timer (``OutsideFigure.contradiction`` says what does not
    add up); ``held``: how long baseline calls were held, and the overhead measured on them, which the wall bound
    allows where it is the larger (:func:`check_candidate`)."""
    blocks = list(blocks)
    samples: dict[str, list[float]] = {}
    paired: dict[str, list[tuple[float, float]]] = {}
    seen: dict[str, int] = {}
    for block in blocks:
        for timer, figures in block.samples.items():
            samples.setdefault(timer, []).extend(figures)
        for timer, found in pairs(block).items():
            paired.setdefault(timer, []).extend(found)
        for interval in block.intervals:
            parsed = parse_timed_label(interval.label)
            if parsed is not None:
                seen[parsed[1]] = seen.get(parsed[1], 0) + 1
    return tuple(_one_timer(timer, samples.get(timer, []), paired.get(timer, []), seen.get(timer, 0), overhead,
                            statistic, held) for timer in dict.fromkeys([*samples, *seen]))


def check_candidate(timing: TimingOutcome, calls: Iterable[Interval], baseline_blocks: Iterable[TimedBlock],
                    settings: HarnessSettings, held_calls: Callable[[float], list[TimedBlock]] | None = None,
                    ) -> tuple[tuple[OutsideFigure, ...], list[Flag]]:
    """The candidate's timing (its blocks joined, runs in order from 0) held against the calls its worker marked,
    with the overhead measured on ``baseline_blocks``: each timer's figures side by side, and a blocking
    ``timing_mismatch`` for each contradiction.

    The baselines' calls are often far shorter than the candidate's, and on a busy host what the clock adds to a
    call grows with it: the worker's pool of threads, idle through a long call that did not use it, wakes late to
    copy the outputs, and a process that waited long finds its core taken (docs/timing.md, "The outside clock").
    So a wall figure that looks contradicted is judged again against ``held_calls(ms)``: baseline calls held as
    long as the candidate's median call (at most :data:`LONGEST_HOLD_MS`), timed now the same way; the bound allows
    the most the clock added to any baseline call, held or not."""
    block = TimedBlock(0, {timer: list(samples) for timer, samples in timing.figures}, tuple(calls))
    overhead = calibration(baseline_blocks)
    figures = judge([block], overhead, timing.method.statistic)
    walls = [interval for _, interval in pairs(block).get("wall", [])]
    if held_calls is not None and walls and any(f.timer == "wall" and f.contradiction for f in figures):
        hold = min(statistics.median(walls), LONGEST_HOLD_MS)
        measured = calibration(held_calls(hold))
        if measured is not None:
            figures = judge([block], overhead, timing.method.statistic, (hold, measured))
    flags = [F.raise_flag(F.TIMING_MISMATCH, figure.describe(), settings) for figure in figures
             if figure.contradiction]
    return figures, flags


def bounding_interval(intervals: list[float], baseline_calls: int) -> tuple[float, str]:
    """The interval a wall figure's lower bound starts from, and what it is in words: the median where as many of
    the candidate's calls must each have been delayed beyond every baseline call for an honest figure to be
    contradicted as the default timing needs (20 calls against 40: :data:`FALSE_ALARM`), else the k-th shortest,
    for the k that holds that chance (with fewer calls, the shortest)."""
    n = len(intervals)
    delayed = next((j for j in range(1, n + 1) if _chance(n, baseline_calls, j) <= FALSE_ALARM), n)
    rank = n - delayed + 1
    if rank >= (n + 1) // 2:
        return statistics.median(intervals), "a median"
    return sorted(intervals)[rank - 1], "the shortest" if rank == 1 else f"the {_ordinal(rank)} shortest"


def _chance(n: int, m: int, j: int) -> float:
    """The chance that the j longest of n + m exchangeable delays are all among the first n."""
    return math.comb(n, j) / math.comb(n + m, j)


def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def _one_timer(timer: str, samples: list[float], paired: list[tuple[float, float]], calls: int,
               overhead: Overhead | None, statistic: str, held: tuple[float, Overhead] | None) -> OutsideFigure:
    worker = figure_of(samples, statistic) if samples else 0.0  # medians below, where the figures are compared
    if len(samples) != calls or len(paired) != calls:
        return OutsideFigure(timer, worker, 0.0, 0.0, 0.0, calls, (
            f"the worker reported {len(samples)} {timer} figures for the {calls} calls this process saw"))
    intervals = [interval for _, interval in paired]
    whole = figure_of(intervals, statistic)
    longer = [(figure, interval) for figure, interval in paired if figure > interval + CLOCK_EPSILON_MS]
    if longer:
        figure, interval = longer[0]
        return OutsideFigure(timer, worker, whole, 0.0, CLOCK_EPSILON_MS, calls, (
            f"{len(longer)} of the worker's {timer} figures are longer than this process's interval around their "
            f"call (the first: {figure:.4g} ms in {interval:.4g} ms): a figure the call cannot have taken"))
    if timer != "wall":
        return OutsideFigure(timer, worker, whole, 0.0, 0.0, calls)
    seen = overhead.calls.get(timer, 0) if overhead is not None else 0
    if overhead is None or seen < MIN_CALLS or calls < MIN_CALLS:
        note = "not calibrated: no baseline was timed beside it" if not seen else (
            f"bounded from above only: {min(seen, calls)} timed calls on one side, fewer than the {MIN_CALLS} a "
            "lower bound needs")
        return OutsideFigure(timer, worker, whole, 0.0, 0.0, calls, "", note)
    most, held_ms, beside = overhead.most_ms[timer], 0.0, f"any of the {seen} baseline calls beside it"
    if held is not None and timer in held[1].most_ms:
        held_ms = held[0]
        beside += f" or {held[1].calls[timer]} held {held_ms:.3g} ms, as long as the candidate's"
        most = max(most, held[1].most_ms[timer])
    median = statistics.median(samples)
    between, which = bounding_interval(intervals, seen)
    outside = between - most
    slack = max(ABSOLUTE_SLACK_MS, RELATIVE_SLACK * outside)
    contradiction = "" if median >= outside - slack else (
        f"the worker's median wall figure is {median:.4g} ms, this process's clock gives at least {outside:.4g} ms "
        f"({which} {between:.4g} ms between the marks, less {most:.4g} ms, the most the harness's own work "
        f"added to {beside}), beyond the slack of {slack:.4g} ms")
    return OutsideFigure(timer, median, outside, most, slack, calls, contradiction, held_ms=held_ms)
