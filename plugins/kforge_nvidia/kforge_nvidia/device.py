"""The NVIDIA GPU as the harness sees it: ``CudaDevice``, shared by every backend that runs on ``torch.cuda``
(``cuda``, ``triton``, and other plugins' backends: ``Backend(device="cuda", device_class=CudaDevice)``).

What CUDA adds to the generic torch device: the L2 flush sized from the device (persisting lines reset first), the
queue held before an events sample (``torch.cuda._sleep``, its cycles per millisecond measured once),
the caching allocator's free blocks poisoned before a verified call, the persisting-L2 set-aside a candidate must
not raise (checked after every timed run, then restored), and the CUDA runtime's sticky faults.

Importing this module does not import torch.
"""

from __future__ import annotations

import ctypes
from typing import Any, ClassVar

from kforge_core.device import FIELD_FLUSH_BYTES, Device, DeviceClock, MemoryStats, StateChange
from kforge_core.plugin_api import DevicePeaks

from .device_time import DESCRIPTION as DEVICE_TIME_DESCRIPTION

_CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
_POISON_LIMIT_BYTES = 8 << 30
L2_PERSISTENCE = "l2_persistence"  # the cheat flag's code

# Errors after which a CUDA context is poisoned: every later call fails, so the worker must be replaced.
CUDA_FAULT_PATTERNS = (
    "illegal memory access",
    "unspecified launch failure",
    "device-side assert",
    "misaligned address",
    "illegal instruction",
    "an illegal instruction was encountered",
    "hardware stack error",
    "uncorrectable ecc error",
    "cuda error: launch failure",
    "cuda error: unknown error",
)
CUDA_OUT_OF_MEMORY_PATTERNS = ("cublas_status_alloc_failed", "cuda out of memory", "cudaerrormemoryallocation")


class CudaDevice(Device):
    """An NVIDIA GPU through ``torch.cuda``."""

    torch_type: ClassVar[str] = "cuda"
    profiler_activity: ClassVar[str] = "CUDA"
    fault_patterns: ClassVar[tuple[str, ...]] = CUDA_FAULT_PATTERNS
    out_of_memory_patterns: ClassVar[tuple[str, ...]] = CUDA_OUT_OF_MEMORY_PATTERNS
    visible_devices_env: ClassVar[str] = "CUDA_VISIBLE_DEVICES"
    event_timer: ClassVar[str] = (
        "a pair of torch.cuda.Event(enable_timing=True) on the current stream, around the call (work on other "
        "streams counts only where the current stream waits for it)")
    flush_floor_bytes: ClassVar[int] = FIELD_FLUSH_BYTES
    device_timer: ClassVar[str] = DEVICE_TIME_DESCRIPTION
    queue_hold: ClassVar[str] = "torch.cuda._sleep, a kernel that spins on the SM clock and touches no memory"
    # The driver zeroes memory a process hands back before any process gets it again, on the GPU, beside the other
    # processes' kernels, whose memory-bound ones run slower meanwhile: half the rate measured on an H200
    # (docs/measurements.md, "the `device` bias was memory handed back"), so that the wait after a hand-back covers it.
    cleared_bytes_per_s: ClassVar[float | None] = 200e9
    # The device timer's profiler session leaves CUPTI attached when it ends unless Kineto tears it down: every
    # later kernel launch in the process then costs its callbacks (a one-operator forward's host time went from 10 us
    # to 17-36 us over four sessions), which lands in the wall and events figures of every later run.
    runtime_environment: ClassVar[tuple[tuple[str, str], ...]] = (("TEARDOWN_CUPTI", "1"),)
    # a part without a datasheet here whose architecture's tensor rate differs by product: these are measured
    measured_units: ClassVar[tuple[str, ...]] = ("fp32", "tf32 matrix", "fp16 matrix", "bf16 matrix")
    vector_units: ClassVar[str] = "CUDA cores"
    matrix_units: ClassVar[str] = "tensor cores"

    def __init__(self, backend: Any) -> None:
        super().__init__(backend)
        self._driver = CudaDriver.load()
        self._l2_limit_at_start: int | None = None
        self._sleep_cycles_per_ms: float | None = None

    def device_clock(self) -> DeviceClock:
        from .device_time import CuptiClock

        return CuptiClock()

    def hold(self, ms: float) -> None:
        import torch

        if self._sleep_cycles_per_ms is None:
            self._sleep_cycles_per_ms = self._measure_sleep()
        torch.cuda._sleep(max(1, int(ms * self._sleep_cycles_per_ms)))

    def _measure_sleep(self) -> float:
        """How many cycles ``torch.cuda._sleep`` spins per millisecond on this GPU, at its clock under load: the
        second of two timed sleeps (the first wakes the clock up)."""
        import torch

        cycles, elapsed = 1_000_000, 0.0
        for _ in range(2):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.cuda._sleep(cycles)
            end.record()
            end.synchronize()
            elapsed = float(start.elapsed_time(end))
        return cycles / max(elapsed, 1e-3)

    def current_index(self) -> int | None:
        import torch

        return torch.cuda.current_device()

    @classmethod
    def stated_peaks(cls, name: str) -> DevicePeaks | None:
        from .peaks import datasheet_peaks

        return datasheet_peaks(name)

    @classmethod
    def stated_devices(cls) -> tuple[str, ...]:
        from .peaks import datasheet_names

        return datasheet_names()

    def peaks(self) -> DevicePeaks | None:
        """The datasheet's figures scaled to this device's SMs, else figures derived from its facts."""
        from .device_facts import read_gpu_facts

        index = self.torch_device.index
        return read_gpu_facts((index if index is not None else self.current_index()) or 0).peaks

    def facts(self) -> dict[str, str]:
        import torch

        props = torch.cuda.get_device_properties(self.torch_device)
        return {"compute capability": f"sm_{props.major}{props.minor}", "SMs": str(props.multi_processor_count),
                "CUDA": str(torch.version.cuda)}

    def memory(self) -> MemoryStats:
        import torch

        total = int(torch.cuda.get_device_properties(self.torch_device).total_memory)
        return MemoryStats(int(torch.cuda.memory_allocated(self.torch_device)),
                           int(torch.cuda.memory_reserved(self.torch_device)), total,
                           int(torch.cuda.mem_get_info(self.torch_device)[0]))

    # -------------------------------------------------------------------------------------- L2

    def flush(self, nbytes: int) -> None:
        """Reset persisting lines first, so that they are evicted too; then write the flush buffer."""
        if self._driver is not None:
            self._driver.reset_persisting_l2()
        super().flush(nbytes)

    def _limit_at_start(self) -> int:
        """The context's persisting-L2 set-aside before any candidate ran.

        Taken once a context exists (the driver answers nothing before): the harness first asks for no set-aside,
        and whatever the driver then reports (some drivers keep a default) is the level a candidate must not raise.
        """
        if self._l2_limit_at_start is None:
            import torch

            torch.empty(1, device=self.torch_device)  # makes sure the context exists
            self._driver.set_persisting_l2_limit(0)
            self._l2_limit_at_start = self._driver.persisting_l2_limit()
        return self._l2_limit_at_start

    def persisting_l2_change(self) -> tuple[int, int] | None:
        """``(at start, now)`` when the persisting-L2 set-aside is no longer what the harness first read; None
        when it is unchanged, or without a driver."""
        if self._driver is None:
            return None
        start, now = self._limit_at_start(), self._driver.persisting_l2_limit()
        return (start, now) if now != start else None

    def changed_state(self) -> list[StateChange]:
        change = self.persisting_l2_change()
        if change is None:
            return []
        return [StateChange(L2_PERSISTENCE, (
            f"the CUDA context's persisting-L2 set-aside went from {change[0]:,} to {change[1]:,} bytes: the "
            "candidate asked for lines to persist in L2 across runs (the harness resets them before every flush)"))]

    def restore_state(self) -> None:
        """Put the set-aside back where it was and return persisting lines to normal."""
        if self._driver is not None:
            self._driver.set_persisting_l2_limit(self._limit_at_start())
            self._driver.reset_persisting_l2()

    # -------------------------------------------------------------------------------------- poison

    def free_block_sizes(self) -> list[int]:
        return free_cuda_blocks(self.torch_device)


def free_cuda_blocks(device: Any) -> list[int]:
    """Sizes of the free blocks the CUDA caching allocator holds, largest first (at most 8 GiB of them)."""
    import torch

    try:
        segments = torch.cuda.memory_snapshot()
    except Exception:  # an allocator without snapshots: the output sizes still get poisoned
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


class CudaDriver:
    """The few CUDA driver calls torch does not expose: the persisting-L2 limit and its reset."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib

    @classmethod
    def load(cls) -> CudaDriver | None:
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
