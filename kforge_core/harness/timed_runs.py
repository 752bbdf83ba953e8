"""Which timed runs use which input set, and which have their outputs checked again (no torch needed here)."""

from __future__ import annotations

import math

from ..settings import HarnessSettings


def checked_timed_runs(settings: HarnessSettings) -> list[int]:
    """As many timed runs as have their outputs checked, spread over the runs (the notes count them; which runs
    are checked is drawn at random after each returned, see ``worker/shipping.TimedChecks``)."""
    count = min(settings.timing_checks, settings.repetitions)
    if count == 0:
        return []
    step = settings.repetitions / count
    return sorted({settings.repetitions - 1 - int(math.floor(i * step)) for i in range(count)})


def pool_index(run: int, settings: HarnessSettings, pool_size: int) -> int:
    """The input set of timed run ``run`` (warm-up runs take the first ones)."""
    return (settings.warmup + run) % pool_size
