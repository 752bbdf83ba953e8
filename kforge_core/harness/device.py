"""What the harness does to a torch device, the same way for every device: wait for it, flush its L2 cache,
poison memory before a candidate runs, and watch the CUDA persisting-L2 setting. Runs inside workers only.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import torch

POISON_WORD = 0x7FC0DEAD  # a float32 NaN with a payload nothing computes by accident
_HOST_PERTURB_BYTE = 0x80  # glibc fills allocations with its complement, 0x7F
HOST_POISON_WORD = 0x7F7F7F7F  # 3.39e38 as float32: no computation here lands on it
_CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
_FALLBACK_FLUSH_BYTES = 256 * 1024 * 1024


class DeviceOps:
    """Device-wide synchronization, L2 flush and memory poisoning for one torch device."""

    def __init__(self, device: torch.device, flush_bytes: int = 0) -> None:
        self.device = device
        self.is_cpu = device.type == "cpu"
        self._module = None if self.is_cpu else getattr(torch, device.type)
        self.l2_bytes = self._read_l2_bytes()
        if self.is_cpu:
            self.flush_bytes = 0
        else:
            self.flush_bytes = flush_bytes or (2 * self.l2_bytes if self.l2_bytes else _FALLBACK_FLUSH_BYTES)
        self._flush_buffer: torch.Tensor | None = None
        self._driver = _CudaDriver.load() if device.type == "cuda" else None
        self._l2_limit_at_start: int | None = None

    @property
    def name(self) -> str:
        """The device with its index ("cuda:0"), as the timing method records it."""
        if self.is_cpu or self.device.index is not None:
            return str(self.device)
        return f"{self.device.type}:{self._module.current_device()}"

    # -------------------------------------------------------------------------------------- waiting

    def synchronize(self) -> None:
        """Wait until all work queued on the device, on every stream, has finished."""
        if self._module is not None:
            self._module.synchronize()

    @property
    def synchronize_description(self) -> str:
        if self.is_cpu:
            return "none needed on the CPU; threads the candidate started during the call are joined"
        return (f"torch.{self.device.type}.synchronize() (device-wide: every stream); "
                "threads the candidate started during the call are joined")

    # -------------------------------------------------------------------------------------- L2

    def _read_l2_bytes(self) -> int:
        if self.is_cpu:
            return 0
        try:
            props = self._module.get_device_properties(self.device)
        except Exception:
            return 0
        return int(getattr(props, "L2_cache_size", 0) or 0)

    def flush_l2(self) -> None:
        """Evict the L2 cache by writing a buffer larger than it; reset persisting lines first, so they go too."""
        if self.is_cpu:
            return
        if self._driver is not None:
            self._driver.reset_persisting_l2()
        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device=self.device)
        self._flush_buffer.zero_()

    def _limit_at_start(self) -> int:
        """The context's persisting-L2 set-aside before any candidate ran.

        Taken once a context exists (the driver answers nothing before): the harness first asks for no set-aside,
        and whatever the driver then reports (some drivers keep a default) is the level a candidate must not raise.
        """
        if self._l2_limit_at_start is None:
            torch.empty(1, device=self.device)  # makes sure the context exists
            self._driver.set_persisting_l2_limit(0)
            self._l2_limit_at_start = self._driver.persisting_l2_limit()
        return self._l2_limit_at_start

    def persisting_l2_change(self) -> tuple[int, int] | None:
        """``(at start, now)`` when the persisting-L2 set-aside is no longer what the harness first read; None
        when it is unchanged, and off CUDA."""
        if self._driver is None:
            return None
        start, now = self._limit_at_start(), self._driver.persisting_l2_limit()
        return (start, now) if now != start else None

    def restore_persisting_l2(self) -> None:
        """Put the set-aside back where it was and return persisting lines to normal."""
        if self._driver is not None:
            self._driver.set_persisting_l2_limit(self._limit_at_start())
            self._driver.reset_persisting_l2()

    # -------------------------------------------------------------------------------------- poison

    def poison(self, nbytes: list[int]) -> None:
        """Make memory a candidate never wrote recognisable, so that one returning such memory
        (``torch.empty_like(x)``) holds the poison, not what the last computation left there.

        On CUDA, every free block of the caching allocator (largest first, each by its exact size, which
        best-fit allocation hands back) and a block of each output size are claimed, filled with
        :data:`POISON_WORD` and freed again. On the CPU, glibc fills every allocation with
        :data:`HOST_POISON_WORD` until :meth:`stop_poisoning`, wherever in the heap it comes from.
        """
        if self.device.type != "cuda":
            _set_host_perturb(_HOST_PERTURB_BYTE)
            return
        sizes = _free_cuda_blocks(self.device) + list(nbytes)
        blocks = [torch.empty(max(n // 4, 1), dtype=torch.int32, device=self.device) for n in sizes]
        for block in blocks:
            block.fill_(POISON_WORD)
        self.synchronize()
        del blocks

    def stop_poisoning(self) -> None:
        """End what :meth:`poison` started where it lasts (the CPU's filled allocations), before anything timed."""
        if self.device.type != "cuda":
            _set_host_perturb(0)


_POISON_LIMIT_BYTES = 8 << 30


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


def _free_cuda_blocks(device: torch.device) -> list[int]:
    """Sizes of the free blocks the CUDA caching allocator holds, largest first (at most 8 GiB of them)."""
    try:
        segments = torch.cuda.memory_snapshot()
    except Exception:  # an allocator without snapshots (another backend): the output sizes still get poisoned
        return []
    index = device.index if device.index is not None else torch.cuda.current_device()
    sizes = sorted((block["size"] for segment in segments if segment.get("device", index) == index
                    for block in segment.get("blocks", ()) if block.get("state") == "inactive"), reverse=True)
    chosen, total = [], 0
    for size in sizes:
        if total + size > _POISON_LIMIT_BYTES:
            continue
        chosen.append(size)
        total += size
    return chosen


def poisoned_fraction(tensor: torch.Tensor) -> float:
    """The fraction of ``tensor``'s 32-bit words that hold a poison word (0 when it cannot tell)."""
    if tensor.numel() == 0 or (tensor.numel() * tensor.element_size()) % 4 or not tensor.is_contiguous():
        return 0.0
    words = tensor.detach().reshape(-1).view(torch.uint8).view(torch.int32)
    poisoned = (words == POISON_WORD) | (words == HOST_POISON_WORD)
    return float(poisoned.sum().item()) / words.numel()


def new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Python threads alive now that were not alive at ``before``."""
    return [t for t in threading.enumerate() if t not in before and t is not threading.current_thread()]


def join_threads(threads: list[threading.Thread], timeout_s: float) -> list[threading.Thread]:
    """Join ``threads``; returns those still running after ``timeout_s``."""
    for thread in threads:
        thread.join(timeout_s)
    return [t for t in threads if t.is_alive()]


class _CudaDriver:
    """The few CUDA driver calls torch does not expose: the persisting-L2 limit and its reset."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib

    @classmethod
    def load(cls) -> _CudaDriver | None:
        try:
            return cls(ctypes.CDLL("libcuda.so.1"))
        except OSError:
            return None

    def persisting_l2_limit(self) -> int:
        value = ctypes.c_size_t(0)
        status = self._lib.cuCtxGetLimit(ctypes.byref(value), ctypes.c_int(_CU_LIMIT_PERSISTING_L2_CACHE_SIZE))
        return int(value.value) if status == 0 else 0

    def set_persisting_l2_limit(self, nbytes: int) -> None:
        self._lib.cuCtxSetLimit(ctypes.c_int(_CU_LIMIT_PERSISTING_L2_CACHE_SIZE), ctypes.c_size_t(nbytes))

    def reset_persisting_l2(self) -> None:
        self._lib.cuCtxResetPersistingL2Cache()
