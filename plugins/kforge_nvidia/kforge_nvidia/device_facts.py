"""Facts about the target GPU, read from the device, for the lowering and the roofline.

Name, compute capability, SM count, memory, L2, shared-memory and register limits come from the device. NVIDIA
devices do not report peak FLOP rates, so those are the SM count times the SM clock (read from the driver) times
the per-SM rate of the architecture, from a table; the facts say which numbers came from where.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .driver import CLOCK_RATE_KHZ, MEMORY_BUS_BITS, MEMORY_CLOCK_KHZ, driver_attributes

# Dense FLOP (or integer op) per clock per SM, by compute capability. Tensor rates are the dense ones (no
# sparsity) with fp32 accumulation where the part allows it. Architectures whose tensor rates differ between
# products (8.6, 8.9, 12.0) list only their CUDA-core rates.
PER_SM_PER_CLOCK: dict[tuple[int, int], dict[str, int]] = {
    (7, 0): {"fp64": 64, "fp32": 128, "fp16 tensor": 1024},
    (7, 5): {"fp64": 4, "fp32": 128, "fp16 tensor": 1024},
    (8, 0): {"fp64": 64, "fp64 tensor": 128, "fp32": 128, "tf32 tensor": 1024, "fp16/bf16 tensor": 2048,
             "int8 tensor": 4096},
    (8, 6): {"fp64": 4, "fp32": 256},
    (8, 9): {"fp64": 4, "fp32": 256},
    (9, 0): {"fp64": 128, "fp64 tensor": 256, "fp32": 256, "tf32 tensor": 2048, "fp16/bf16 tensor": 4096,
             "fp8 tensor": 8192, "int8 tensor": 8192},
    (10, 0): {"fp64": 128, "fp32": 256, "tf32 tensor": 4096, "fp16/bf16 tensor": 8192, "fp8 tensor": 16384},
    (12, 0): {"fp64": 4, "fp32": 256},
}
# Used only when the driver does not report clocks: (SM boost clock GHz, memory bandwidth bytes/s) by name.
KNOWN_PARTS: dict[str, tuple[float, float]] = {
    "H200": (1.98, 4.8e12),
    "H100 80GB HBM3": (1.98, 3.35e12),
    "H100 PCIe": (1.755, 2.0e12),
    "A100-SXM4-80GB": (1.41, 2.039e12),
    "A100-SXM4-40GB": (1.41, 1.555e12),
}

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
    peak_flops: dict[str, float] = field(default_factory=dict)  # precision -> FLOP/s
    sources: tuple[str, ...] = ()  # where the derived numbers came from

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


def derive_rates(
    capability: tuple[int, int], sm_count: int, name: str, sm_clock_khz: int, memory_clock_khz: int, bus_bits: int
) -> tuple[float, float, dict[str, float], tuple[str, ...]]:
    """(SM clock GHz, bandwidth B/s, peak FLOP/s by precision, where they came from) from what the driver said."""
    sources = []
    known = next((v for k, v in KNOWN_PARTS.items() if k in name), None)
    clock_ghz = sm_clock_khz / 1e6
    if not clock_ghz and known:
        clock_ghz = known[0]
        sources.append(f"the SM clock {clock_ghz} GHz is from a table of known parts: the driver did not report it")
    bandwidth = 2.0 * memory_clock_khz * 1e3 * bus_bits / 8 if memory_clock_khz and bus_bits else 0.0
    if not bandwidth and known:
        bandwidth = known[1]
        sources.append("memory bandwidth is from a table of known parts: the driver did not report it")
    per_sm = PER_SM_PER_CLOCK.get(capability, {})
    peaks = {precision: sm_count * clock_ghz * 1e9 * rate for precision, rate in per_sm.items()} if clock_ghz else {}
    if peaks:
        sources.append(
            f"peak rates = {sm_count} SMs x {clock_ghz:.2f} GHz x the per-SM rate of compute capability "
            f"{capability[0]}.{capability[1]} from a table: devices do not report them"
        )
    else:
        sources.append(f"peak FLOP rates unknown for compute capability {capability[0]}.{capability[1]}")
    return clock_ghz, bandwidth, peaks, tuple(sources)


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
    clock, bandwidth, peaks, sources = derive_rates(
        capability, props.multi_processor_count, props.name, clock_khz, memory_khz, bus_bits
    )
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
        sm_clock_ghz=clock,
        memory_bandwidth=bandwidth,
        peak_flops=peaks,
        sources=sources,
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
