"""The timed runs as both sides name them: which input set each uses, its seed, the label of each of its calls
(one per timer), and which elements of a call's outputs a check compares. No torch here: the KForge process checks
with these what a candidate's worker says it timed and shipped."""

from __future__ import annotations

import re

from ..settings import HarnessSettings

TIMING_SEED_OFFSET = 20_000  # the timing input sets' seeds start here, past every trial's
# how a correctness trial's call is marked (``StageTimer.calling``): the KForge process takes the call's length
# from these (``harness/host/run_count.py``), not from the traced call or the shape variants' calls
TRIAL_CALL = "forward (trial seed {seed})"
TRIAL_CALL_PREFIX = TRIAL_CALL.split("{")[0]
# the label of a timed call, by timer: the worker marks each call with it, and ships its outputs under it
_SUFFIX = {"wall": "", "events": " (events)", "device": " (device time)"}
_LABEL = re.compile(r"^timed run (\d+)(?: \((events|device time)\))?$")
# the runs the device's own clock takes of a series where it only guards a long call's headline (``guard_only``)
GUARD_RUNS = 2
# what a verdict's timing notes say of the checks and the outside clock
CHECKS_NOTE = ("every timed call's outputs checked against the reference (up to {elements} elements of each, drawn by "
               "the KForge process after the call returned), and every timed call timed from outside by the KForge "
               "process too")


def guard_only(timers: tuple[str, ...], headline: str) -> bool:
    """Whether the device's own clock, among the ``timers`` measured (every one the device has when empty), stands
    beside the ``headline`` only to guard it: a call timed under its headline alone (``harness.beside_timers``),
    ``events`` with ``device`` beside, where work hidden on another stream shows only against the device's busy
    time and the streams that clock sees decide the events' hold. It then takes the series' first
    :data:`GUARD_RUNS` runs only: under it every call of a launch-bound network costs the profiler's record of
    each launch, several times the call (``docs/timing.md``, "Runs in proportion")."""
    return bool(timers) and "device" in timers and headline != "device"


def pool_index(run: int, settings: HarnessSettings, pool_size: int) -> int:
    """The input set of timed run ``run`` (warm-up runs take the first ones)."""
    return (settings.warmup + run) % pool_size


def pool_seeds(settings: HarnessSettings) -> list[int]:
    """The seeds of the distinct input sets of the warm-up and timed runs, one per run."""
    return [settings.seed + TIMING_SEED_OFFSET + i for i in range(settings.warmup + settings.repetitions)]


def timed_run_seed(run: int, settings: HarnessSettings) -> int:
    """The seed of timed run ``run``'s inputs."""
    seeds = pool_seeds(settings)
    return seeds[pool_index(run, settings, len(seeds))]


def timed_label(run: int, timer: str) -> str:
    """``timed run 7``, ``timed run 7 (events)``, ``timed run 7 (device time)``."""
    return f"timed run {run}{_SUFFIX[timer]}"


def parse_timed_label(label: str) -> tuple[int, str] | None:
    """The run and timer of a timed call's label; None for any other call (a warm-up, a trial)."""
    found = _LABEL.match(label)
    if found is None:
        return None
    timer = {None: "wall", "events": "events", "device time": "device"}[found.group(2)]
    return int(found.group(1)), timer
