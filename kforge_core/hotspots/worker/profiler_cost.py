"""What the profiler itself costs the host for each operation it records, measured apart from the model: a burst of
one-element additions on the device timed by the host's clock without a session and inside one. The profiler records
every launch (CUPTI's activity records on NVIDIA), and that cost lands on the host as the launch is made, so a step
set by the host's launches grows by it once per operation; the kernels' own durations do not change."""

from __future__ import annotations

import statistics
import time
from typing import Any

LAUNCHES = 1000  # a burst: long enough that the session's start is lost in it, short enough to repeat in turns


def burst_pair_us(device: Any, activities: list[Any], launches: int = LAUNCHES) -> tuple[float, float]:
    """Microseconds a launch of one burst without the profiler, then of one inside a session of ``activities``."""
    import torch
    from torch.profiler import profile

    counter = torch.zeros(1, device=device.torch_device)

    def burst() -> float:
        device.synchronize()
        start = time.perf_counter()
        for _ in range(launches):
            counter.add_(1)
        device.synchronize()
        return (time.perf_counter() - start) * 1e6 / launches

    burst()  # what a first call sets up is no launch's cost
    plain = burst()
    session = profile(activities=activities)
    session.start()
    try:
        profiled = burst()
    finally:
        session.stop()
    return plain, profiled


def cost_per_operation_us(pairs: list[tuple[float, float]]) -> float:
    """The profiler's own cost an operation: the median burst inside a session less the median one without."""
    if not pairs:
        return 0.0
    return max(0.0, statistics.median(p for _, p in pairs) - statistics.median(p for p, _ in pairs))
