"""The Intel GPU as the harness sees it: ``XpuDevice``, through ``torch.xpu``.

What it adds to the core's generic torch device: the cache flush sized from the last-level cache
(``last_level_cache_size``), the caching allocator's free blocks poisoned before a verified call
(``torch.xpu.memory_snapshot``), the ``events`` timer with ``torch.xpu.Event``s, the device's facts, and the errors of
Intel's runtime (Level Zero, the SYCL runtime) read as device faults or out-of-memory.

Every call goes through the ``xpu`` module the device is given (``torch.xpu`` unless a caller passes another), so
the layer is exercised against an explicit stand-in where no Intel GPU exists, and against the real module by
``make xpu-test`` on an Intel machine. Importing this module does not import torch.
"""

from __future__ import annotations

from typing import Any, ClassVar

from kforge_core.device import FIELD_FLUSH_BYTES, Device, MemoryStats
from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import DevicePeaks

from .device_facts import XpuFacts, read_xpu_facts
from .intel_errors import DEVICE_FAULT_PATTERNS, OUT_OF_MEMORY_PATTERNS

POISON_LIMIT_BYTES = 8 << 30


class XpuDevice(Device):
    """An Intel GPU through ``torch.xpu``.

    :param backend: the backend being served.
    :param flush_bytes: ``harness.l2_flush_bytes`` (0: twice the last-level cache).
    :param xpu: the module to call; None: ``torch.xpu``.
    """

    torch_type: ClassVar[str] = "xpu"
    visible_devices_env: ClassVar[str] = "ZE_AFFINITY_MASK"  # Level Zero's list of the devices a process sees
    profiler_activity: ClassVar[str] = "XPU"
    fault_patterns: ClassVar[tuple[str, ...]] = DEVICE_FAULT_PATTERNS
    out_of_memory_patterns: ClassVar[tuple[str, ...]] = OUT_OF_MEMORY_PATTERNS
    event_timer: ClassVar[str] = (
        "a pair of torch.xpu.Event(enable_timing=True) on the current queue, around the call")
    flush_floor_bytes: ClassVar[int] = FIELD_FLUSH_BYTES
    measured_units: ClassVar[tuple[str, ...]] = ("fp32", "fp16 matrix", "bf16 matrix")  # where Intel states none
    vector_units: ClassVar[str] = "Xe vector engines"
    matrix_units: ClassVar[str] = "XMX engines"

    def __init__(self, backend: Any, *, xpu: Any = None) -> None:
        self._xpu = xpu
        self._xpu_facts: XpuFacts | None = None
        super().__init__(backend)

    def xpu_facts(self) -> XpuFacts:
        """The device's facts, read from its properties once."""
        if self._xpu_facts is None:
            self._xpu_facts = read_xpu_facts(self._module(), self._module_index())
        return self._xpu_facts

    # --------------------------------------------------------------------------------------- mechanism

    def _module(self) -> Any:
        return self._xpu if self._xpu is not None else super()._module()

    def _module_index(self) -> int:
        index = self.torch_device.index
        return index if index is not None else int(self._module().current_device())

    def current_index(self) -> int | None:
        return int(self._module().current_device())

    def hardware_name(self) -> str:
        return self.xpu_facts().name

    @classmethod
    def stated_peaks(cls, name: str) -> DevicePeaks | None:
        from .vendor_specs import stated_peaks

        return stated_peaks(name)

    @classmethod
    def stated_devices(cls) -> tuple[str, ...]:
        from .vendor_specs import SPECS

        return tuple(spec.marker for spec in SPECS)

    def peaks(self) -> DevicePeaks | None:
        """Intel's stated figures, one stack's share of them where this device is one stack of a card."""
        from .vendor_specs import stated_peaks

        facts = self.xpu_facts()
        return stated_peaks(facts.name, facts.memory_bytes)

    def cache_bytes(self) -> int:
        return self.xpu_facts().cache_bytes

    def facts(self) -> dict[str, str]:
        facts = self.xpu_facts()
        values = {
            "Xe-cores": str(facts.xe_cores), "EUs": str(facts.eu_count),
            "sub-group sizes": "/".join(map(str, facts.sub_group_sizes)),
            "max work-group size": str(facts.max_work_group_size),
            "SLM per work-group": f"{facts.slm_bytes // 1024} KiB",
            "XMX": "yes" if facts.has_dpas else "no", "driver": facts.driver_version,
        }
        if facts.bandwidth is not None:
            values["memory bandwidth"] = f"{facts.bandwidth.bytes_per_s / 1e9:.0f} GB/s ({facts.bandwidth.source})"
        return values

    def free_block_sizes(self) -> list[int]:
        """The caching allocator's free blocks on this device, largest first, at most 8 GiB of them."""
        try:
            segments = self._module().memory_snapshot()
        except Exception:  # an allocator without snapshots: the output sizes still get poisoned
            return []
        index = self._module_index()
        sizes = sorted((block["size"] for segment in segments if segment.get("device", index) == index
                        for block in segment.get("blocks", ()) if block.get("state") == "inactive"), reverse=True)
        chosen, total = [], 0
        for size in sizes:
            if total + size <= POISON_LIMIT_BYTES:
                chosen.append(size)
                total += size
        return chosen

    def memory(self) -> MemoryStats:
        module, index = self._module(), self._module_index()
        return MemoryStats(int(module.memory_allocated(index)), int(module.memory_reserved(index)),
                           self.xpu_facts().memory_bytes)

    def free_memory(self) -> tuple[int, int]:
        """``(free, total)`` bytes as the driver reports them (``torch.xpu.mem_get_info``)."""
        free, total = self._module().mem_get_info(self._module_index())
        return int(free), int(total)

    def peak_allocated(self) -> int:
        """The most the caching allocator has held for live tensors since the last reset."""
        return int(self._module().max_memory_allocated(self._module_index()))


@hookimpl
def kforge_device_namespaces(backend: Any) -> list[str]:
    """The device's runtime module, watched by the worker's integrity check for replaced functions."""
    return ["torch.xpu"]
