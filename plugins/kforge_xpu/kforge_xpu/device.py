"""What the harness does to an Intel GPU, through ``torch.xpu``: wait for it, time on it, flush its last-level
cache, poison free memory, read its memory figures and its facts, and read its runtime's errors.

Every operation goes through the ``xpu`` module given at construction (``torch.xpu`` in production), so the layer
is exercised against an explicit stand-in where no Intel GPU exists, and against the real module by
``make xpu-test`` on an Intel machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from kforge_core.harness.device import POISON_WORD
from kforge_core.records import Failure

from .device_facts import XpuFacts, read_xpu_facts
from .intel_errors import classify_runtime_error

FALLBACK_FLUSH_BYTES = 256 * 1024 * 1024  # when the device does not report its last-level cache
POISON_LIMIT_BYTES = 8 << 30


@dataclass(frozen=True)
class MemoryStats:
    """Device memory in bytes: held by PyTorch's caching allocator now and at its peak, free and total."""

    allocated: int
    peak_allocated: int
    free: int
    total: int


class EventTimer:
    """Times one call with a pair of ``torch.xpu.Event``s on the current queue; ``stop`` waits for the whole
    device first, so work the call queued elsewhere is waited for too (and shows in the host's view)."""

    def __init__(self, xpu: Any) -> None:
        self._xpu = xpu
        self._start = xpu.Event(enable_timing=True)
        self._end = xpu.Event(enable_timing=True)

    def start(self) -> None:
        self._start.record()

    def stop(self) -> float:
        """Milliseconds between start and stop on the device."""
        self._end.record()
        self._xpu.synchronize()
        return float(self._start.elapsed_time(self._end))


def _empty_on(device: str) -> Callable[[int], Any]:
    def empty(nbytes: int) -> Any:
        import torch

        return torch.empty(nbytes, dtype=torch.uint8, device=device)

    return empty


class XpuDevice:
    """One Intel GPU as the harness sees it.

    :param xpu: the ``torch.xpu`` module (or a stand-in with its functions).
    :param index: the device's ordinal.
    :param flush_bytes: bytes written to evict the cache between timed runs; 0: twice the last-level cache.
    :param empty: allocates ``nbytes`` bytes on the device (torch.empty by default).
    """

    def __init__(self, xpu: Any, index: int = 0, *, flush_bytes: int = 0,
                 empty: Callable[[int], Any] | None = None) -> None:
        self._xpu = xpu
        self.index = index
        self.torch_device = f"xpu:{index}"
        self._facts: XpuFacts = read_xpu_facts(xpu, index)
        cache = self._facts.cache_bytes
        self.flush_bytes = flush_bytes or (2 * cache if cache else FALLBACK_FLUSH_BYTES)
        self._empty = empty or _empty_on(self.torch_device)
        self._flush_buffer: Any = None

    @property
    def name(self) -> str:
        return self._facts.name

    def synchronize(self) -> None:
        """Wait until all work queued on the device, on every queue, has finished."""
        self._xpu.synchronize()

    def timer(self) -> EventTimer:
        return EventTimer(self._xpu)

    def flush_caches(self) -> None:
        """Evict the last-level cache by writing a buffer larger than it, then wait for the write."""
        if self._flush_buffer is None:
            self._flush_buffer = self._empty(self.flush_bytes)
        self._flush_buffer.zero_()
        self.synchronize()

    @contextlib.contextmanager
    def poison_free_memory(self, output_bytes: tuple[int, ...] = ()) -> Iterator[None]:
        """Fill the caching allocator's free blocks (each by its exact size, which best-fit hands back, largest
        first, at most 8 GiB) and a block of each output size with :data:`POISON_WORD`, then free them: an output
        the candidate never wrote then holds the poison, not what the reference left there."""
        sizes = self._free_block_sizes() + [n for n in output_bytes if n > 0]
        blocks = [self._empty(-(-n // 4) * 4) for n in sizes]
        for block in blocks:
            block.view(_int32()).fill_(POISON_WORD)
        self.synchronize()
        del blocks
        yield

    def _free_block_sizes(self) -> list[int]:
        try:
            segments = self._xpu.memory_snapshot()
        except Exception:  # an allocator without snapshots: the output sizes still get poisoned
            return []
        sizes = sorted((block["size"] for segment in segments if segment.get("device", self.index) == self.index
                        for block in segment.get("blocks", ()) if block.get("state") == "inactive"), reverse=True)
        chosen, total = [], 0
        for size in sizes:
            if total + size <= POISON_LIMIT_BYTES:
                chosen.append(size)
                total += size
        return chosen

    def memory(self) -> MemoryStats:
        free, total = self._xpu.mem_get_info(self.index)
        return MemoryStats(allocated=int(self._xpu.memory_allocated(self.index)),
                           peak_allocated=int(self._xpu.max_memory_allocated(self.index)), free=int(free),
                           total=int(total))

    def reset_peak_memory(self) -> None:
        self._xpu.reset_peak_memory_stats(self.index)

    def classify(self, exc: BaseException) -> Failure | None:
        """The failure class of a runtime error in Level Zero's, the SYCL runtime's or PyTorch's words; None when
        the text says nothing about the device (the core's generic reading then applies)."""
        if type(exc).__name__ == "OutOfMemoryError":
            return Failure.OUT_OF_MEMORY
        return classify_runtime_error(f"{type(exc).__name__}: {exc}")

    def facts(self) -> XpuFacts:
        return self._facts

    def facts_dict(self) -> dict[str, Any]:
        """The facts as plain data, for the verdict's method and the profile summary."""
        values = dataclasses.asdict(self._facts)
        values["bandwidth"] = dataclasses.asdict(self._facts.bandwidth) if self._facts.bandwidth else None
        return values


def _int32() -> Any:
    import torch

    return torch.int32
