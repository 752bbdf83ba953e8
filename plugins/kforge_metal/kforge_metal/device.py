"""The Apple GPU as the harness drives it, through ``torch.mps``: waiting for it, timing on it, flushing its
caches, making memory a kernel never wrote recognisable, reporting memory, and reading its faults. Runs inside
workers only.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator

from kforge_core.records import Failure

from .device_facts import MetalFacts, read_device_facts
from .faults import classify_fault

POISON_WORD = 0x7FC0DEAD  # a float32 NaN with a payload nothing computes by accident
# The system-level cache in front of unified memory is at most 96 MiB on current chips: a write of 256 MiB
# evicts what the last timed run left there.
FLUSH_BYTES = 256 << 20


@dataclass(frozen=True)
class MpsMemory:
    """The MPS allocator's view of memory, in bytes."""

    allocated: int  # torch.mps.current_allocated_memory(): held by tensors
    driver_allocated: int  # torch.mps.driver_allocated_memory(): held by Metal for this process, caches included
    recommended_max: int  # torch.mps.recommended_max_memory(): the working set Metal recommends


class EventTimer:
    """GPU time between two points of the MPS queue, from ``torch.mps.Event`` pairs."""

    method = "torch.mps.Event pairs around the call (the queue drained before)"

    def __init__(self) -> None:
        import torch

        self._start = torch.mps.Event(enable_timing=True)
        self._end = torch.mps.Event(enable_timing=True)

    def start(self) -> None:
        self._start.record()

    def stop(self) -> float:
        """Milliseconds since :meth:`start`, once the work queued in between has run."""
        self._end.record()
        self._end.synchronize()
        return float(self._start.elapsed_time(self._end))


class MetalDevice:
    """The ``mps`` device of this Mac."""

    torch_device = "mps"

    def __init__(self, facts: MetalFacts | None = None) -> None:
        self._facts = facts
        self._flush_buffer: Any = None

    @property
    def device_facts(self) -> MetalFacts:
        if self._facts is None:
            self._facts = read_device_facts()
        return self._facts

    @property
    def name(self) -> str:
        return self.device_facts.headline()

    def synchronize(self) -> None:
        """Wait until every command buffer PyTorch committed to the GPU has completed (MPS has one queue)."""
        import torch

        torch.mps.synchronize()

    def timer(self) -> EventTimer:
        return EventTimer()

    def flush_caches(self) -> None:
        """Evict the system-level cache by writing a buffer larger than it."""
        import torch

        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="mps")
        self._flush_buffer.zero_()

    @contextlib.contextmanager
    def poison_free_memory(self, nbytes: list[int]) -> Iterator[None]:
        """Fill blocks of the outputs' sizes with :data:`POISON_WORD` and free them before the call: the MPS
        allocator keeps freed buffers and hands one of the same size back, so an output taken from
        ``torch.empty_like`` and never written holds the poison, not a result left behind."""
        import torch

        blocks = [torch.empty(max(n // 4, 1), dtype=torch.int32, device="mps") for n in nbytes]
        for block in blocks:
            block.fill_(POISON_WORD)
        torch.mps.synchronize()
        del blocks
        yield

    def memory(self) -> MpsMemory:
        import torch

        return MpsMemory(int(torch.mps.current_allocated_memory()), int(torch.mps.driver_allocated_memory()),
                         int(torch.mps.recommended_max_memory()))

    def classify(self, exc: BaseException) -> Failure | None:
        return classify_fault(exc)

    def facts(self) -> dict[str, Any]:
        facts = self.device_facts
        return {"chip": facts.chip, "gpu_cores": facts.gpu_cores, "metal_family": facts.metal_family,
                "unified_memory_bytes": facts.unified_memory_bytes, "working_set_bytes": facts.working_set_bytes,
                "macos": facts.macos, "simd_width": 32, "max_threads_per_threadgroup": 1024,
                "threadgroup_memory_bytes": 32 << 10}
