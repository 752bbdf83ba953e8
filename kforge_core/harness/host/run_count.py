"""How many timed runs a candidate and its baselines get, in proportion to the call's length, and under which
timers.

The spread of a call's time is a share of the call, so a 40 ms forward's median is as sure after 8 runs as a 40 us
kernel's after 20; and each timed run is one call under each timer, for the candidate and every baseline, so 20
runs of a 40 ms forward under three timers beside two baselines cost seconds of the problem's time for nothing. The
runs are ``ceil(harness.timing_target_ms / call)``, at least :data:`FEWEST_RUNS` (the outside clock draws its lower
bound of a wall figure only from :data:`~.outside_clock.MIN_CALLS` calls on each side) and at most
``harness.repetitions``. The call's length is the shortest of the candidate's correctness trials, as the KForge
process's own clock saw them (``CallLog.call_ms``; the traced call, slowed by the tracer's Python, and the shape
variants' calls at other sizes are left out: with them, EfficientNet-B0's calls came out above 12.5 ms where its
timed calls took 2.8 ms): nothing the candidate says. Only trials whose start mark this process read as it arrived
count: a trial judged while the next one runs has that one's start mark wait until the judging is done, and its
interval then misses the beginning of the call (a 50 ms call came out at 0.04 ms; of five trials three are judged
ahead, so their median was one of those). The shortest of the others, whose intervals each hold the whole call,
leaves out a first call's build. A candidate that slowed its verification to be timed fewer times only widens its
own confidence interval, which the verdict reports.

Each timer beside the headline is a call more in every run. Under ``harness.beside_timers = "auto"`` they are
measured for calls shorter than ``timing_target_ms / FEWEST_RUNS`` (12.5 ms at the default), where they cost little;
a longer call is timed under the headline alone (``events`` with the device's clock beside it, where the device has
one: it is what shows work hidden on another stream, and it takes only each callable's first runs,
``timed_runs.guard_only``), and ``"all"`` measures them whatever they cost.
"""

from __future__ import annotations

import math

from ...settings import HarnessSettings
from ...timing.headline import headline_timer
from .outside_clock import MIN_CALLS

FEWEST_RUNS = MIN_CALLS


def measured_timers(call_ms: float | None, settings: HarnessSettings, offered: tuple[str, ...]) -> tuple[str, ...]:
    """The timers a call of ``call_ms`` is timed under, among those the device ``offered``: every one (empty) or
    the headline alone, with what guards it (:func:`headline_alone`)."""
    if settings.beside_timers == "all":
        return ()
    long = call_ms is not None and settings.timing_target_ms and call_ms * FEWEST_RUNS > settings.timing_target_ms
    return headline_alone(settings, offered) if settings.beside_timers == "headline" or long else ()


def headline_alone(settings: HarnessSettings, offered: tuple[str, ...]) -> tuple[str, ...]:
    """The headline timer, and the device's own clock beside ``events``: the events see only the caller's stream,
    and work a candidate hides on another stream shows only against the device's busy time (``async_output``)."""
    headline, _ = headline_timer(settings.timer, offered)
    return (headline, "device") if headline == "events" and "device" in offered else (headline,)


def timed_runs(call_ms: float | None, settings: HarnessSettings) -> int:
    """The timed runs for a call of ``call_ms`` (None: not known, ``settings.repetitions``)."""
    most = settings.repetitions
    if not settings.timing_target_ms or call_ms is None or call_ms <= 0:
        return most
    return max(min(most, FEWEST_RUNS), min(most, math.ceil(settings.timing_target_ms / call_ms)))
