"""Wall-clock timing inside the worker for the profile: medians of a forward, time per kernel, thread scaling.

The harness's own timing (against the baselines) is the one verdicts quote; these figures only explain it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Iterator

from .clock import clock


def median_seconds(run: Callable[[], Any], repetitions: int) -> float:
    """Median of ``repetitions`` timed calls after one warm-up call."""
    run()
    times = []
    for _ in range(repetitions):
        start = clock()
        run()
        times.append(clock() - start)
    return statistics.median(times)


@dataclass(frozen=True)
class ClockedForward:
    """Medians over repeated forwards: the time inside each kernel, and the fraction of the forward it is (each
    fraction taken within one forward, so that load on the machine between forwards does not skew it)."""

    kernel_seconds: dict[str, float]  # per forward
    kernel_share: dict[str, float]  # of the forward
    calls: dict[str, int]  # per forward
    total_share: float  # inside any kernel


class KernelClock:
    """Seconds and calls per kernel while installed (see :func:`clocked_kernels`)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, name: str, kernel: Any) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return kernel(*args, **kwargs)
            finally:
                self.seconds[name] += clock() - start
                self.calls[name] += 1

        return timed

    def run(self, forward: Callable[[], Any], names: list[str], repetitions: int) -> ClockedForward:
        """Warm up once, then time ``repetitions`` forwards, each with the kernels' time inside it."""
        forward()
        seconds: dict[str, list[float]] = {name: [] for name in names}
        shares: dict[str, list[float]] = {name: [] for name in names}
        totals = []
        for _ in range(repetitions):
            self.seconds.clear()
            self.calls.clear()
            start = clock()
            forward()
            elapsed = clock() - start
            for name in names:
                seconds[name].append(self.seconds[name])
                shares[name].append(min(self.seconds[name] / elapsed, 1.0))
            totals.append(min(sum(self.seconds.values()) / elapsed, 1.0))
        median = statistics.median
        return ClockedForward({n: median(v) for n, v in seconds.items()}, {n: median(v) for n, v in shares.items()},
                              {n: self.calls[n] for n in names}, median(totals))


@contextmanager
def clocked_kernels(module: ModuleType, kernels: dict[str, Any]) -> Iterator[KernelClock]:
    """Replace the module's kernel globals with timing wrappers (the forward looks them up at each call), and put
    them back afterwards. Calls from one kernel into another happen in compiled code and are not seen."""
    kernel_clock = KernelClock()
    for name, kernel in kernels.items():
        setattr(module, name, kernel_clock.wrap(name, kernel))
    try:
        yield kernel_clock
    finally:
        for name, kernel in kernels.items():
            setattr(module, name, kernel)


def thread_counts(maximum: int) -> list[int]:
    """1, 2, 4, ... up to ``maximum``, which is always included."""
    counts, n = [], 1
    while n < maximum:
        counts.append(n)
        n *= 2
    return counts + [maximum]


def thread_scaling(run: Callable[[], Any], maximum: int, repetitions: int) -> list[tuple[int, float]]:
    """(threads, median seconds) for each thread count; Numba's thread count is restored afterwards."""
    import numba

    previous = numba.get_num_threads()
    try:
        results = []
        for threads in thread_counts(maximum):
            numba.set_num_threads(threads)
            results.append((threads, median_seconds(run, repetitions)))
        return results
    finally:
        numba.set_num_threads(previous)


def page_faults_per_call(run: Callable[[], Any], calls: int) -> float:
    """Minor page faults (first touches of freshly mapped memory) per call, averaged over ``calls`` calls."""
    from .peaks import minor_page_faults

    run()
    before = minor_page_faults()
    for _ in range(calls):
        run()
    return (minor_page_faults() - before) / calls


def torch_ops(run: Callable[[], Any]) -> list[tuple[str, int]]:
    """The ``aten::`` operators one call runs, with their counts, from the PyTorch profiler."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    return sorted((e.key, e.count) for e in prof.key_averages() if e.key.startswith("aten::"))
