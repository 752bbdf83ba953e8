"""Peaks measured on the device itself, for a device whose vendor states none (the host CPU, a GPU missing from its
plugin's table): STREAM-like kernels (copy, scale, add, sum) for the memory bandwidth and a large GEMM per compute
unit, each the best of a few runs, measured once per device and kept in ``<cache_dir>/peaks/``.

A measured peak is what the device achieved, not its maximum: a kernel may come close to it or, rarely, beat it,
so the physical floor gives measured figures more slack (``speed_of_light.FLOOR_SLACK_MEASURED``). Runs in a worker
before any candidate code is imported there (``HarnessDevice.peaks``), one process at a time (a file lock): the workers
a harness starts together wait for the first one's measurement and read it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .byte_words import byte_words
from .peaks import DevicePeaks, Peak, peaks_of

if TYPE_CHECKING:
    from .devices.harness_device import HarnessDevice

FORMAT_VERSION = 2  # 2: the fastest of several streaming kernels, not a copy alone
PEAKS_DIR = "peaks"
_MIB = 1 << 20
HOST_COPY_BYTES = (64 * _MIB, 128 * _MIB)  # per array: 4x the last-level cache (STREAM's rule), within these bounds
DEVICE_COPY_BYTES = 1 << 30
MIN_COPY_BYTES = 16 * _MIB  # below this a copy is cache-resident on any current device: no measurement
CACHE_COPY_BYTES = (64 << 10, 32 * _MIB)  # per array: a quarter of a cache level, within these bounds
MIN_SECONDS = 0.2  # a measurement repeats for at least this long: on a busy host, a quiet moment is more likely
MAX_REPETITIONS = 2000
STREAM_SECONDS = MIN_SECONDS / 2  # per streaming kernel (and thread count): four of them make one bandwidth
HOST_GEMM_N = 1024
DEVICE_GEMM_N = 8192
REPETITIONS = 5  # timed samples at least; the best is kept (a busy host slows some of them)
DEVICE_BURST = 4  # operations per timed sample on an accelerator, so that one synchronize is a small share
# unit -> (the torch dtype, whether fp32 matmuls may use TF32)
_GEMMS = {"fp64": ("float64", False), "fp32": ("float32", False), "fp16": ("float16", False),
          "bf16": ("bfloat16", False), "tf32 matrix": ("float32", True), "fp16 matrix": ("float16", False),
          "bf16 matrix": ("bfloat16", False), "fp64 matrix": ("float64", False)}


def cached_peaks(cache_dir: Path, key: str, measure: Callable[[], DevicePeaks], *,
                 refresh: bool = False) -> DevicePeaks:
    """The peaks kept for ``key`` under ``cache_dir``, else ``measure()``'d now (one process at a time) and kept;
    with ``refresh``, measured again and kept in place of what was."""
    path = Path(cache_dir) / PEAKS_DIR / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    found = None if refresh else _read(path, key)
    if found is not None:
        return found
    with _locked(path.with_suffix(".lock")):
        found = None if refresh else _read(path, key)  # measured by another worker while this one waited
        if found is not None:
            return found
        peaks = measure()
        _write(path, key, peaks)
        return peaks


def cache_key(device: HarnessDevice, units: tuple[str, ...]) -> str:
    """What measured peaks depend on: the device kind and name, the host and its CPUs for the host CPU, the units."""
    import platform

    host = f"{platform.node()}|{os.cpu_count()}" if device.host_memory else ""
    return f"v{FORMAT_VERSION}|{device.torch_device.type}|{device.hardware_name()}|{host}|{','.join(units)}"


def measure_peaks(device: HarnessDevice, units: tuple[str, ...], *, bandwidth: bool = True,
                  cache: bool = False, memory_limit_bytes: int = 0) -> DevicePeaks:
    """Measure ``device``'s copy bandwidth (with ``bandwidth``), its bandwidth within the last-level cache (with
    ``cache``), and the GEMM rate of each of ``units`` it can run."""
    name = device.hardware_name()
    copied = _copy_bandwidth(device, _copy_sizes(device, memory_limit_bytes)) if bandwidth else None
    levels = tuple((level, peak) for level in (device.cache_levels() if cache else ())
                   if (peak := _copy_bandwidth(device, _within(level), f"within a {level >> 10:,} KiB cache level"))
                   is not None)
    rates = {unit: peak for unit in units if unit in _GEMMS and (peak := _gemm_rate(device, unit)) is not None}
    return peaks_of(name, copied, rates, cache_bandwidths=levels)


# ------------------------------------------------------------------------------------------------- measuring


def _best_seconds(device: HarnessDevice, operation: Callable[[], Any], burst: int,
                  min_seconds: float = MIN_SECONDS) -> float:
    operation()  # the first run, outside the measurement (allocation, library start)
    device.synchronize()
    best, spent, count = float("inf"), 0.0, 0
    while count < REPETITIONS or (spent < min_seconds and count < MAX_REPETITIONS):
        elapsed = device.start_timer()
        for _ in range(burst):
            operation()
        device.synchronize()
        seconds = elapsed() / 1e3
        best, spent, count = min(best, seconds / burst), spent + seconds, count + 1
    return best


def _copy_sizes(device: HarnessDevice, memory_limit_bytes: int = 0) -> Iterator[int]:
    """Array sizes to try, largest first. A worker held to ``harness.memory_limit_mb`` (its cgroup's memory) takes
    arrays of at most an eighth of it: the kernel kills a process past its cgroup's limit, it does not refuse an
    allocation, so a size that does not fit cannot be tried and stepped down from."""
    if device.host_memory:
        size = min(max(4 * device.last_level_cache_bytes(), HOST_COPY_BYTES[0]), HOST_COPY_BYTES[1])
    else:
        total = device.memory().total
        size = min(DEVICE_COPY_BYTES, total // 8) if total else DEVICE_COPY_BYTES
    if memory_limit_bytes:
        size = min(size, memory_limit_bytes // 8)
    while size >= MIN_COPY_BYTES:
        yield size
        size //= 2


def _within(level: int) -> Iterator[int]:
    """The array size of a copy that stays in a cache level of ``level`` bytes (source and target half of it)."""
    if level >= 4 * CACHE_COPY_BYTES[0]:
        yield min(level // 4, CACHE_COPY_BYTES[1])


# The streaming kernels a memory bandwidth is measured with, and the bytes each moves per element of one array:
# a copy (read + write), a scale in place (read + write of the same lines: no read for ownership before the write),
# an add into a third array (two reads + a write) and a sum (a read). Which of them comes closest to the memory's
# limit depends on the device and its library: on a 2-core Xeon VM torch's copy_ reached 11.7 GB/s, the scale in
# place 24.2 GB/s, and a Numba kernel of the demo's elementwise problem 19 GB/s; the bound takes the fastest.
_STREAMS: tuple[tuple[str, int], ...] = (("copy", 2), ("scale in place", 2), ("add", 3), ("sum", 1))


def _stream_operation(kind: str, arrays: tuple[Any, Any, Any]) -> Callable[[], Any]:
    import torch

    a, b, c = arrays
    return {"copy": lambda: c.copy_(a), "scale in place": lambda: c.mul_(1.0),
            "add": lambda: torch.add(a, b, out=c), "sum": lambda: a.sum()}[kind]


def _copy_bandwidth(device: HarnessDevice, sizes: Iterator[int], where: str = "") -> Peak | None:
    """The best streaming rate of the first of ``sizes`` that fits: each kernel of :data:`_STREAMS` timed on arrays
    of that size, the fastest kept (bytes read and written per second). On the host CPU, each on every thread and
    on one thread, the faster kept: a parallel kernel waits for all its threads to be scheduled, which on a busy host
    took a 512 KiB copy from 9 us to 8 ms, and one on a single thread does not."""
    import torch

    burst = 1 if device.host_memory else DEVICE_BURST
    for size in sizes:
        try:
            arrays = tuple(torch.ones(size // 4, dtype=torch.float32, device=device.torch_device) for _ in range(3))
            rates = {}
            for kind, per_element in _STREAMS:
                operation = _stream_operation(kind, arrays)
                seconds = _best_seconds(device, operation, burst, STREAM_SECONDS)
                if device.host_memory and torch.get_num_threads() > 1:
                    with _threads(1):
                        seconds = min(seconds, _best_seconds(device, operation, burst, STREAM_SECONDS))
                rates[kind] = per_element * size / seconds
        except (RuntimeError, MemoryError):
            continue
        finally:
            arrays = None  # noqa: F841  (freed before a smaller try)
        best = max(rates, key=rates.__getitem__)
        threads = f", on {torch.get_num_threads()} threads or one" if device.host_memory else ""
        within = f" {where}" if where else ""
        others = ", ".join(f"{kind} {rate / 1e9:.1f}" for kind, rate in rates.items() if kind != best)
        return Peak(rates[best], f"measured on this device: the fastest of streaming kernels on arrays of "
                                 f"{byte_words(size)}{within}, each the best of at least {REPETITIONS} runs: torch "
                                 f"{best} (bytes read and written counted{threads}; {others} GB/s)", measured=True)
    return None


@contextlib.contextmanager
def _threads(count: int) -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _gemm_rate(device: HarnessDevice, unit: str) -> Peak | None:
    import torch

    dtype_name, tf32 = _GEMMS[unit]
    dtype = getattr(torch, dtype_name)
    n = HOST_GEMM_N if device.host_memory else DEVICE_GEMM_N
    try:
        a = torch.randn(n, n, device=device.torch_device).to(dtype)
        b = torch.randn(n, n, device=device.torch_device).to(dtype)
        with _matmul_precision("high" if tf32 else "highest"):
            seconds = _best_seconds(device, lambda: torch.mm(a, b), 1 if device.host_memory else DEVICE_BURST)
    except (RuntimeError, MemoryError, TypeError):  # a dtype the device cannot multiply
        return None
    return Peak(2 * n**3 / seconds, f"measured on this device: the best of at least {REPETITIONS} {n}x{n} {dtype_name} "
                                    "GEMMs "
                                    f"(torch.mm{', TF32 allowed' if tf32 else ''})", measured=True)


@contextlib.contextmanager
def _matmul_precision(precision: str) -> Iterator[None]:
    """torch's float32 matmul precision for the block, put back after (the harness checks the worker's switches)."""
    import torch

    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


# ------------------------------------------------------------------------------------------------- the cache


def _read(path: Path, key: str) -> DevicePeaks | None:
    try:
        data = json.loads(path.read_text())
        return DevicePeaks.from_json(data["peaks"]) if data.get("key") == key else None
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing, unreadable or of another format: measured again


def _write(path: Path, key: str, peaks: DevicePeaks) -> None:
    try:
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"key": key, "peaks": peaks.to_json()}, indent=2))
        partial.replace(path)  # a reader sees the old file or the whole new one
    except OSError:
        pass  # a cache that cannot be written only means measuring again next time


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield  # no lock where the cache cannot be written: each worker measures for itself
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
