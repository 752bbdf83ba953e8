"""The host CPU, the core's built-in device (used by every backend that names no ``device_class``).

Nothing to wait for and no cache worth flushing between runs. Stale outputs show through glibc: while poisoning,
every allocation (but calloc's) is filled with :data:`HOST_POISON_WORD`, wherever in the heap it comes from.
Every worker, whatever its device, keeps freed heap memory in the heap (:func:`configure_host_allocator`), so an
allocation's cost does not swing from call to call.
"""

from __future__ import annotations

import ctypes
import os
import platform
from pathlib import Path
from typing import Any, ClassVar

from ..device import Device, MemoryStats

SYSFS_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
HOST_POISON_WORD = 0x7F7F7F7F  # 3.39e38 as float32: no computation here lands on it
_HOST_PERTURB_BYTE = 0x80  # glibc fills allocations with its complement, 0x7F


class CpuDevice(Device):
    """The host CPU through torch's ``cpu`` device."""

    torch_type: ClassVar[str] = "cpu"
    host_cpu: ClassVar[bool] = True
    host_memory: ClassVar[bool] = True
    flushes_caches: ClassVar[bool] = False
    headline_statistic: ClassVar[str] = "min"  # the host's other work only ever slows a run: the fastest is the code's
    timing_blocks: ClassVar[int] = 10  # two runs a block at the default 20: a quiet stretch reaches every callable
    # a shared host's load moves a figure by more than any useful band (a fastest run of 27 ms against its 2.3 ms
    # prior at load 6 on two cores): the baselines are measured in full beside every candidate
    prior_band: ClassVar[float | None] = None
    poison_words: ClassVar[tuple[int, ...]] = (HOST_POISON_WORD,)
    # no vendor states a host's peaks: its copy bandwidth and fp32 GEMM rate are measured once and cached
    measured_units: ClassVar[tuple[str, ...]] = ("fp32",)
    vector_units: ClassVar[str] = "the CPU's SIMD lanes"

    synchronize_description: ClassVar[str] = (
        "none needed on the CPU; threads the candidate started during the call are joined")

    def hardware_name(self) -> str:
        return cpu_model() or platform.processor() or platform.machine()

    def facts(self) -> dict[str, str]:
        return {"cores": str(os.cpu_count() or 1)}

    def cache_bytes(self) -> int:
        return 0

    def cache_levels(self) -> tuple[int, ...]:
        return cache_levels()

    def synchronize(self) -> None:
        """Nothing runs asynchronously on the CPU (threads are joined by the harness)."""

    def poison(self, output_bytes: list[int]) -> None:
        _set_host_perturb(_HOST_PERTURB_BYTE)

    def stop_poisoning(self) -> None:
        _set_host_perturb(0)

    def memory(self) -> MemoryStats:
        return MemoryStats(total=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
                           available=host_memory_free())

    def empty_cache(self) -> None:
        """Hand the heap's free memory back to the system (it is kept while timing, see
        :func:`configure_host_allocator`)."""
        libc = _libc()
        if libc is not None and hasattr(libc, "malloc_trim"):
            libc.malloc_trim(0)


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name as Linux gives it ("Intel(R) Xeon(R) Platinum 8480+"); empty where it says none."""
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return ""


def last_level_cache_bytes(caches: Path = SYSFS_CACHES) -> int:
    """The largest data or unified cache the first CPU sees (Linux's sysfs; 0 where it says nothing)."""
    return max(cache_levels(caches), default=0)


def cache_levels(caches: Path = SYSFS_CACHES) -> tuple[int, ...]:
    """The sizes of the data or unified caches of level 2 and up the first CPU sees, smallest first."""
    sizes = set()
    for index in caches.glob("index*"):
        try:
            if (index / "type").read_text().strip() != "Instruction" and int((index / "level").read_text()) >= 2:
                sizes.add(_size_bytes((index / "size").read_text()))
        except (OSError, ValueError):
            continue
    return tuple(sorted(sizes))


def _size_bytes(text: str) -> int:
    """``"266240K"`` -> 272629760."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale


def host_memory_free() -> int:
    """Bytes of host memory this process could still take: what the system has available, within the
    process's address-space limit (0: unknown)."""
    try:
        available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (OSError, ValueError):
        return 0
    room = _address_space_left()
    return min(available, room) if room is not None else available


def _address_space_left() -> int | None:
    """Bytes this process may still map under its address-space limit (``harness.memory_limit_mb``), or None
    when it has none."""
    import resource

    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None
    return max(limit - mapped, 0)


def _libc() -> Any:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def configure_host_allocator() -> None:
    """Keep freed heap memory in the heap (glibc): no trimming, and a fixed mmap threshold of 32 MiB, so that
    an allocation's cost does not swing between a reused chunk and a fresh mapping from one call to the next."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD


def _set_host_perturb(byte: int) -> None:
    """glibc's M_PERTURB: while non-zero, every allocation (but calloc's) is filled with ``byte ^ 0xff``."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(-6, byte)
