"""The Apple GPU as the harness drives it: ``MetalDevice``, the ``mps`` device through ``torch.mps``.

What it adds to the core's generic device: its name and facts from the OS (torch.mps has no device name or
properties), memory from the MPS allocator (and the working set Metal recommends), no cache size to read (the
flush writes 256 MiB, more than the system-level cache of any current chip), and the MPS runtime's and Metal's
fault texts. The wall timer is the core's: the host clock after ``torch.mps.synchronize()``, which waits for every
command buffer PyTorch committed (MPS has one queue per process); the ``events`` timer is a pair of
``torch.mps.event.Event``s. Poisoning claims blocks of the outputs' sizes, fills and
frees them: the MPS allocator hands a freed buffer of the same size back.

Importing this module does not import torch.
"""

from __future__ import annotations

from typing import Any, ClassVar

from kforge_core.device import FIELD_FLUSH_BYTES, Device, MemoryStats
from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import DevicePeaks

from .faults import FAULT_PATTERNS, OUT_OF_MEMORY_PATTERNS


class MetalDevice(Device):
    """An Apple GPU through ``torch.mps``."""

    torch_type: ClassVar[str] = "mps"
    fault_patterns: ClassVar[tuple[str, ...]] = FAULT_PATTERNS
    out_of_memory_patterns: ClassVar[tuple[str, ...]] = OUT_OF_MEMORY_PATTERNS
    event_timer: ClassVar[str] = (
        "a pair of torch.mps.event.Event(enable_timing=True) on the process's one queue, around the call")
    flush_floor_bytes: ClassVar[int] = FIELD_FLUSH_BYTES
    measured_units: ClassVar[tuple[str, ...]] = ("fp32", "fp16")  # Apple states no rate for the M3 and M4 GPUs
    vector_units: ClassVar[str] = "GPU cores"

    def __init__(self, backend: Any) -> None:
        self._read_facts: Any = None  # MetalFacts, read from the OS on first use
        super().__init__(backend)

    def _device_facts(self) -> Any:
        from .device_facts import read_device_facts

        if self._read_facts is None:
            self._read_facts = read_device_facts()
        return self._read_facts

    def event(self) -> Any:
        import torch

        return torch.mps.event.Event(enable_timing=True)

    def hardware_name(self) -> str:
        return self._device_facts().headline()

    @classmethod
    def stated_peaks(cls, name: str) -> DevicePeaks | None:
        from .apple_specs import apple_peaks

        return apple_peaks(name)

    @classmethod
    def stated_devices(cls) -> tuple[str, ...]:
        from .apple_specs import CHIPS

        return tuple(dict.fromkeys(f"Apple {spec.chip}" for spec in CHIPS))

    def cache_bytes(self) -> int:
        return 0  # torch.mps reports no cache size: the flush writes FALLBACK_FLUSH_BYTES

    def facts(self) -> dict[str, str]:
        facts = self._device_facts()
        found = {"GPU cores": str(facts.gpu_cores or "unknown"), "Metal": facts.metal_family or "unknown",
                 "SIMD width": "32", "threadgroup memory": "32 KiB", "macOS": facts.macos or "unknown"}
        if facts.working_set_bytes:
            found["recommended working set"] = f"{facts.working_set_bytes / 2**30:.1f} GiB"
        return found

    def memory(self) -> MemoryStats:
        import torch

        return MemoryStats(allocated=int(torch.mps.current_allocated_memory()),
                           reserved=int(torch.mps.driver_allocated_memory()),
                           total=int(torch.mps.recommended_max_memory()))


@hookimpl
def kforge_device_namespaces(backend: Any) -> list[str]:
    """The device's runtime module, watched by the worker's integrity check for replaced functions."""
    return ["torch.mps"]
