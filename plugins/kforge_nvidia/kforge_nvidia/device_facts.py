"""Facts about the target GPU, read from the device, for the lowering and the roofline.

Name, compute capability, SM count, memory, L2, shared-memory and register limits come from the device. NVIDIA
devices do not report peak rates: those are the device's peaks (:mod:`.peaks`: the datasheet's for a listed part,
else derived from the SM count, the driver's clocks and the architecture's per-SM rates); the facts say which
numbers came from where.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kforge_core.plugin_api import DevicePeaks

from .driver import CLOCK_RATE_KHZ, MEMORY_BUS_BITS, MEMORY_CLOCK_KHZ, driver_attributes
from .peaks import PER_SM_PER_CLOCK, gpu_peaks

__all__ = ["PER_SM_PER_CLOCK", "GpuFacts", "device_arch", "hardware_text", "read_gpu_facts"]


@dataclass(frozen=True)
class GpuFacts:
    """One GPU, as the lowering and the profile summary describe it."""

    name: str
    capability: tuple[int, int]
    sm_count: int
    memory_bytes: int
    l2_bytes: int = 0
    shared_per_block: int = 0
    shared_per_block_optin: int = 0
    shared_per_sm: int = 0
    registers_per_sm: int = 0
    max_threads_per_sm: int = 0
    warp_size: int = 32
    sm_clock_ghz: float = 0.0
    memory_bandwidth: float = 0.0  # bytes/s
    peak_flops: dict[str, float] = field(default_factory=dict)  # unit (kforge_core.peaks.UNITS) -> FLOP/s
    sources: tuple[str, ...] = ()  # where the derived numbers came from
    peaks: DevicePeaks | None = None  # the same figures, each with its source

    @property
    def arch(self) -> str:
        return f"sm_{self.capability[0]}{self.capability[1]}"

    def ridge_point(self, precision: str = "fp32") -> float | None:
        """FLOP per byte above which a kernel at this precision can be compute-bound."""
        peak = self.peak_flops.get(precision)
        return peak / self.memory_bandwidth if peak and self.memory_bandwidth else None

    def describe(self) -> str:
        """The facts as the lines a prompt shows."""
        lines = [
            f"GPU: {self.name}, compute capability {self.capability[0]}.{self.capability[1]} ({self.arch}), "
            f"{self.sm_count} SMs, {self.memory_bytes / 2**30:.0f} GiB, L2 {self.l2_bytes / 2**20:.0f} MiB.",
            f"Per SM: {self.max_threads_per_sm} threads, {self.registers_per_sm} 32-bit registers, "
            f"{self.shared_per_sm // 1024} KiB shared memory. Per block: {self.shared_per_block // 1024} KiB "
            f"shared memory by default, up to {self.shared_per_block_optin // 1024} KiB after "
            "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes). Warp size "
            f"{self.warp_size}.",
        ]
        if self.memory_bandwidth:
            lines.append(f"Memory bandwidth: {self.memory_bandwidth / 1e12:.2f} TB/s (peak).")
        if self.peak_flops:
            rates = ", ".join(f"{k} {v / 1e12:.1f}" for k, v in self.peak_flops.items())
            lines.append(f"Peak dense rates, TFLOP/s: {rates}.")
            ridge = self.ridge_point("fp32")
            if ridge:
                lines.append(f"Roofline ridge point for fp32 CUDA-core math: {ridge:.1f} FLOP/byte.")
        lines.extend(f"({source})" for source in self.sources)
        return "\n".join(lines)


def read_gpu_facts(ordinal: int = 0) -> GpuFacts:
    """Facts of CUDA device ``ordinal``; the caller has checked that one exists."""
    import torch

    props = torch.cuda.get_device_properties(ordinal)
    capability = (props.major, props.minor)
    clock_khz, memory_khz, bus_bits = driver_attributes(
        ordinal, (CLOCK_RATE_KHZ, MEMORY_CLOCK_KHZ, MEMORY_BUS_BITS)) or (0, 0, 0)
    clock_khz = clock_khz or int(getattr(props, "clock_rate", 0) or 0)
    memory_khz = memory_khz or int(getattr(props, "memory_clock_rate", 0) or 0)
    bus_bits = bus_bits or int(getattr(props, "memory_bus_width", 0) or 0)
    peaks = gpu_peaks(props.name, capability, props.multi_processor_count, clock_khz, memory_khz, bus_bits)
    sources = tuple(dict.fromkeys(p.source for p in ([peaks.bandwidth] if peaks and peaks.bandwidth else [])
                                  + [p for _, p in (peaks.compute if peaks else ())]))
    return GpuFacts(
        name=props.name,
        capability=capability,
        sm_count=props.multi_processor_count,
        memory_bytes=props.total_memory,
        l2_bytes=int(getattr(props, "L2_cache_size", 0)),
        shared_per_block=int(getattr(props, "shared_memory_per_block", 0)),
        shared_per_block_optin=int(getattr(props, "shared_memory_per_block_optin", 0)),
        shared_per_sm=int(getattr(props, "shared_memory_per_multiprocessor", 0)),
        registers_per_sm=int(getattr(props, "regs_per_multiprocessor", 0)),
        max_threads_per_sm=int(getattr(props, "max_threads_per_multi_processor", 0)),
        warp_size=int(getattr(props, "warp_size", 32)),
        sm_clock_ghz=clock_khz / 1e6,
        memory_bandwidth=peaks.bandwidth.value if peaks is not None and peaks.bandwidth is not None else 0.0,
        peak_flops={unit: peak.value for unit, peak in peaks.compute} if peaks is not None else {},
        sources=sources or (f"peak rates unknown for compute capability {capability[0]}.{capability[1]}",),
        peaks=peaks,
    )


def hardware_text() -> str:
    """The facts of GPU 0 as the generation agent reads them, or why there are none."""
    import torch

    if torch.version.cuda is None or not torch.cuda.is_available():
        return "No CUDA device is visible here, so the target's facts are unknown; write for a recent NVIDIA GPU."
    return read_gpu_facts(0).describe()


def device_arch() -> str | None:
    """GPU 0's architecture as ``sm_90``, or None where no CUDA device is visible."""
    import torch

    if torch.version.cuda is not None and torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    return None
