"""The machine's measured peaks: memory bandwidth (a STREAM triad in Numba), the fp32 matmul rate (torch.mm) and
the cost of touching freshly allocated memory (page faults).

They are what a candidate's achieved rates are compared against. Measuring takes a second or two, so the result is
kept as JSON in the cache directory, keyed on the machine, and measured again only on another machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kforge_core.plugin_api import record_from_json, to_json

from .clock import clock
from .machine import MachineFacts, read_machine_facts

MIB = 1 << 20
TRIAD_MIN_ARRAY = 16 * MIB
TRIAD_MAX_ARRAY = 128 * MIB
TRIAD_REPETITIONS = 5
MATMUL_N = 1024
MATMUL_REPETITIONS = 3
FIRST_TOUCH_BYTES = 64 * MIB
FIRST_TOUCH_REPETITIONS = 3
FORMAT_VERSION = 2


@dataclass(frozen=True)
class FirstTouch:
    """What writing freshly allocated memory costs: the OS maps and zeroes each page at its first touch.

    ``torch.empty`` gets 4 KiB pages; ``np.empty`` advises transparent huge pages for large arrays, so where the
    kernel honours that advice (``madvise`` mode) it takes far fewer faults.
    """

    torch_gbs: float  # filling a fresh torch.empty buffer
    numpy_gbs: float  # filling a fresh np.empty buffer
    touched_gbs: float  # filling it again (no faults)
    page_fault_us: float  # cost of one 4 KiB fault of torch.empty memory, zeroing included

    def describe(self) -> str:
        return (
            f"First touch of fresh memory (page faults): {self.torch_gbs:.1f} GB/s for torch.empty, "
            f"{self.numpy_gbs:.1f} GB/s for np.empty, {self.touched_gbs:.1f} GB/s once touched; "
            f"one 4 KiB page fault costs {self.page_fault_us:.2f} us"
        )


@dataclass(frozen=True)
class MachinePeaks:
    """Best rates seen on this machine, with how they were measured."""

    bandwidth_gbs: float  # STREAM triad a = b + s*c: 3 x array bytes per pass, write-allocate not counted
    matmul_gflops: float  # torch.mm on two MATMUL_N x MATMUL_N float32 matrices, 2*N^3 flops
    threads: int  # Numba threads during the triad
    threading_layer: str
    array_bytes: int  # size of each triad array
    first_touch: FirstTouch

    def describe(self) -> str:
        return (
            f"Memory bandwidth: {self.bandwidth_gbs:.1f} GB/s measured (STREAM triad, {self.threads} Numba threads, "
            f"3 arrays of {self.array_bytes // MIB} MiB)\n"
            f"fp32 matmul rate: {self.matmul_gflops:.0f} GFLOP/s measured (torch.mm, {MATMUL_N}x{MATMUL_N})\n"
            f"{self.first_touch.describe()}"
        )


def _triad_kernel():
    from numba import njit, prange

    @njit(parallel=True, fastmath=True)
    def triad(a, b, c, scalar):
        for i in prange(a.shape[0]):
            a[i] = b[i] + scalar * c[i]

    return triad


def measure_bandwidth(facts: MachineFacts) -> tuple[float, int, str]:
    """(GB/s, array bytes, Numba threading layer) of the best of a few parallel triads over arrays 4x the LLC."""
    import numba
    import numpy as np

    array_bytes = min(max(4 * facts.last_level_cache_bytes, TRIAD_MIN_ARRAY), TRIAD_MAX_ARRAY)
    n = array_bytes // 4
    a = np.zeros(n, np.float32)
    b = np.full(n, 1.0, np.float32)
    c = np.full(n, 2.0, np.float32)
    triad = _triad_kernel()
    previous = numba.get_num_threads()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)  # the peak is the whole machine's
    try:
        triad(a, b, c, np.float32(3.0))  # compile, and touch every page once
        best = float("inf")
        for _ in range(TRIAD_REPETITIONS):
            start = clock()
            triad(a, b, c, np.float32(3.0))
            best = min(best, clock() - start)
    finally:
        numba.set_num_threads(previous)
    return 3 * array_bytes / best / 1e9, array_bytes, numba.threading_layer()


def measure_matmul_rate() -> float:
    import torch

    x = torch.randn(MATMUL_N, MATMUL_N)
    y = torch.randn(MATMUL_N, MATMUL_N)
    torch.mm(x, y)
    best = float("inf")
    for _ in range(MATMUL_REPETITIONS):
        start = clock()
        torch.mm(x, y)
        best = min(best, clock() - start)
    return 2 * MATMUL_N**3 / best / 1e9


def minor_page_faults() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _fill_seconds(allocate) -> tuple[float, float, int]:
    """(seconds to fill a fresh buffer, seconds to fill it again, page faults of the first fill), best of a few.
    Both buffers are filled by NumPy, so only how they were allocated differs."""
    fresh = again = float("inf")
    faults = 0
    for _ in range(FIRST_TOUCH_REPETITIONS):
        before, start = minor_page_faults(), clock()
        buffer = allocate()
        buffer.fill(1.0)
        elapsed = clock() - start
        if elapsed < fresh:
            fresh, faults = elapsed, minor_page_faults() - before
        start = clock()
        buffer.fill(2.0)
        again = min(again, clock() - start)
        del buffer
    return fresh, again, faults


def measure_first_touch() -> FirstTouch:
    import numpy as np
    import torch

    n = FIRST_TOUCH_BYTES // 4
    torch_fresh, touched, faults = _fill_seconds(lambda: torch.empty(n).numpy())
    numpy_fresh, _, _ = _fill_seconds(lambda: np.empty(n, np.float32))
    fault_us = max(torch_fresh - touched, 0.0) / max(faults, 1) * 1e6
    rate = lambda seconds: FIRST_TOUCH_BYTES / seconds / 1e9  # noqa: E731
    return FirstTouch(rate(torch_fresh), rate(numpy_fresh), rate(touched), fault_us)


def measure_peaks(facts: MachineFacts | None = None) -> MachinePeaks:
    import numba

    facts = facts or read_machine_facts()
    bandwidth, array_bytes, layer = measure_bandwidth(facts)
    return MachinePeaks(bandwidth, measure_matmul_rate(), numba.config.NUMBA_NUM_THREADS, layer, array_bytes,
                        measure_first_touch())


def _machine_key(facts: MachineFacts) -> str:
    import numba

    identity = (FORMAT_VERSION, platform.node(), facts.model, facts.cpus, numba.config.NUMBA_NUM_THREADS)
    return hashlib.sha256(repr(identity).encode()).hexdigest()[:16]


def peaks_cache_file(cache_dir: Path, facts: MachineFacts) -> Path:
    return cache_dir / "cpu" / f"machine-peaks-{_machine_key(facts)}.json"


def machine_peaks(cache_dir: Path | None) -> MachinePeaks:
    """The peaks from ``cache_dir`` when this machine was measured before, else measured now (and stored)."""
    facts = read_machine_facts()
    path = peaks_cache_file(cache_dir, facts) if cache_dir is not None else None
    if path is not None:
        try:
            return record_from_json(MachinePeaks, json.loads(_read_no_link(path)))
        except (OSError, ValueError, TypeError, KeyError):
            pass  # a missing, unreadable or old file is measured again and replaced
    peaks = measure_peaks(facts)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # a new file of a random name (never one a worker, which writes the cache too, may have put a link at)
            handle, partial = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
            with os.fdopen(handle, "w") as out:
                out.write(json.dumps(to_json(peaks), indent=2))
            os.replace(partial, path)  # atomic: a concurrent reader sees the old file or the whole new one
        except OSError:
            pass  # a cache that cannot be written only means measuring again next time
    return peaks


def _read_no_link(path: Path) -> str:
    """The text of ``path``, a regular file: KForge's process reads it (``kforge_lower``), and workers write the
    cache directory, so a link there is not followed."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd) as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file")
        return handle.read()

