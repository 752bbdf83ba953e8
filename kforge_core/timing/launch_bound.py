"""Figures that count the host's launch, taken at their fastest run on both sides of a comparison. No torch here.

An ``events`` figure is the device's span only where the whole call was queued before the start event: behind a
hold, on the caller's stream alone. A call whose work runs on streams of a library's own (cuDNN's recurrent
kernels) gets no hold, and one whose launch outlasted the hold has the rest of its launch counted: such a figure is
the host's launch, as ``wall`` is, and moves with the host's speed, which on a shared or virtual machine changes by
up to 2x from one second to the next while the candidate's blocks and the baselines' take turns. The host's other
work and its slow seconds only ever slow a launch, so the fastest run is the call's own (the host CPU's timer is
taken so for the same reason: ``Device.headline_statistic``). Where either side of a comparison had such a figure
under a timer, that timer's figures of both sides are their fastest runs, and the verdict's method says so.
"""

from __future__ import annotations

from typing import Iterable

FASTEST = "min"  # the statistic of a launch-bound timer (``RuntimeStats.statistic``)
NOTE = ("{timers}: the figure counted the host's launch on {side}, so this timer's figures are the fastest runs on "
        "both sides (the host's slow seconds only ever slow a launch)")


def launch_bound_timers(candidate: Iterable[str], baselines: Iterable[tuple[str, Iterable[str]]]) -> tuple[str, ...]:
    """The timers taken at their fastest run: those under which the candidate's figure or any baseline's counted
    the host's launch."""
    return tuple(sorted({*candidate, *(timer for _, timers in baselines for timer in timers)}))


def statistic_of(timer: str, statistic: str, bound: Iterable[str]) -> str:
    """The statistic ``timer``'s figures are taken by: the fastest run where it is launch-bound, else ``statistic``
    (the device's)."""
    return FASTEST if timer in tuple(bound) else statistic


def note(candidate: Iterable[str], baselines: Iterable[tuple[str, Iterable[str]]]) -> str:
    """What the verdict's method says of the launch-bound timers ("" for none)."""
    candidate, baselines = tuple(candidate), tuple(baselines)
    bound = launch_bound_timers(candidate, baselines)
    if not bound:
        return ""
    sides = (["the candidate's side"] if candidate else []) + [f"the {name} baseline's" for name, timers in baselines
                                                              if tuple(timers)]
    return NOTE.format(timers=" and ".join(bound), side=" and ".join(sides))
