"""Problems described ahead, in a process of their own, while the device evaluates others.

Describing a problem runs its reference on meta tensors about ten times (its shapes, its footprint, its shape
variants: ``problem.load_problem``). Most take a fraction of a second; KernelBench's ``35_LSTM`` took a minute, its
recurrence unrolled into tens of thousands of meta operators each run (18 s, two runs, now that a forward this slow
derives no variants: ``shapes/plan.py``). Done in the KForge process, that stalled the problem before it (a slot describes the
next problem to prepare for it) and held the interpreter lock that the process's own clock of the workers' calls
needs. So a bench on an accelerator hands the descriptions of its whole suite, in order, to a child process (two on
a host of 8 CPUs or more) as it starts: they work through them while the device is busy, off the host's timing CPUs
(``cpu_placement.off_timing_pools``), and the slots use what is ready. All but the first: nothing is timed yet when
the first is wanted, and the KForge process, which has imported torch already, describes it sooner than a child
that must start first. On the host CPU the evaluations use every core themselves, and the suite is described in the
KForge process as each problem comes.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from ..records import Problem


PROCESSES_FROM_CPUS = 8  # a second describing process where the host has this many CPUs


class Describer:
    """Child processes (one, or two on a host of :data:`PROCESSES_FROM_CPUS` CPUs or more) describing problems in
    the order they are handed over; started on first use."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._processes = 2 if (os.cpu_count() or 1) >= PROCESSES_FROM_CPUS else 1

    def submit(self, path: Path) -> Future[Problem]:
        """The problem's description, to come; raises ``BrokenProcessPool`` (through the future) if the child
        died."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self._processes, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_child_start)
        return self._pool.submit(_describe, path)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _child_start() -> None:
    from ..harness.cpu_placement import off_timing_pools

    off_timing_pools()


def _describe(path: Path) -> Problem:
    from ..problem import load_problem

    return load_problem(path)
