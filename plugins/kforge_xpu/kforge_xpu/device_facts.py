"""Facts about the Intel GPU in hand, read from ``torch.xpu.get_device_properties`` at run time.

The properties object is SYCL's view of the device (PyTorch's ``_XpuDeviceProperties``): EU and Xe-core counts,
sub-group sizes, work-group limits, shared local memory per work-group, memory, the last-level cache, DPAS (XMX)
and 2D block I/O support. Fields an older PyTorch lacks read as 0 or unknown. The only peak quoted is the memory
bandwidth from :mod:`vendor_specs`, for the products listed there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .vendor_specs import StatedBandwidth, stated_bandwidth


@dataclass(frozen=True)
class XpuFacts:
    """One Intel GPU, as the lowering, the availability line and the profile summary describe it."""

    name: str
    eu_count: int
    xe_cores: int
    sub_group_sizes: tuple[int, ...]
    max_work_group_size: int
    max_sub_groups: int
    slm_bytes: int  # shared local memory a work-group can allocate
    memory_bytes: int
    cache_bytes: int  # the last-level cache, shared by every Xe-core
    memory_clock_mhz: int = 0
    memory_bus_bits: int = 0
    has_dpas: bool = False  # XMX: sub-group matrix multiply-accumulate
    has_dpas_tf32: bool = False
    has_2d_block_io: bool = False
    has_fp64: bool = False
    driver_version: str = ""
    bandwidth: StatedBandwidth | None = None

    @property
    def eus_per_xe_core(self) -> int:
        return self.eu_count // self.xe_cores if self.xe_cores else 0

    def headline(self) -> str:
        """One line: the device, its Xe-cores and memory."""
        return (f"{self.name}, {self.xe_cores} Xe-cores ({self.eu_count} EUs), {self.memory_bytes / 2**30:.0f} GiB, "
                f"driver {self.driver_version or 'unknown'}")

    def describe(self) -> str:
        """The facts as the lines a prompt shows."""
        sizes = "/".join(str(s) for s in self.sub_group_sizes) or "unknown"
        lines = [
            f"GPU: {self.headline()}.",
            f"Xe-cores: {self.xe_cores}, {self.eus_per_xe_core} vector engines (EUs) each. Sub-group sizes {sizes}; "
            f"a work-group holds at most {self.max_work_group_size} work-items and {self.max_sub_groups} sub-groups.",
            f"Shared local memory per work-group: {self.slm_bytes // 1024} KiB. Last-level cache: "
            f"{self.cache_bytes / 2**20:.0f} MiB" + (" (unknown to this PyTorch)." if not self.cache_bytes else "."),
            "XMX (DPAS) through tl.dot: " + ("yes" if self.has_dpas else "no (tl.dot runs on the vector engines)")
            + ("; tf32 DPAS: yes" if self.has_dpas_tf32 else "; tf32 DPAS: no (fp32 dots use the vector engines)")
            + ". 2D block loads: " + ("yes" if self.has_2d_block_io else "no") + ". fp64: "
            + ("yes." if self.has_fp64 else "no (emulated or unsupported: avoid float64)."),
        ]
        if self.memory_clock_mhz and self.memory_bus_bits:
            lines.append(f"Memory: {self.memory_bus_bits}-bit bus, memory clock {self.memory_clock_mhz} MHz "
                         "(as the driver reports them).")
        if self.bandwidth is not None:
            lines.append(f"Memory bandwidth: {self.bandwidth.bytes_per_s / 1e9:.0f} GB/s peak, "
                         f"{self.bandwidth.source}.")
        else:
            lines.append("Peak memory bandwidth: not stated for this device here; measure against a large copy.")
        return "\n".join(lines)


def read_xpu_facts(xpu: Any, index: int = 0) -> XpuFacts:
    """Facts of device ``index`` from ``xpu`` (the ``torch.xpu`` module); the caller has checked that it exists."""
    props = xpu.get_device_properties(index)

    def number(field: str) -> int:
        return int(getattr(props, field, 0) or 0)

    name = str(getattr(props, "name", "Intel GPU"))
    memory = number("total_memory")
    return XpuFacts(
        name=name,
        eu_count=number("gpu_eu_count"),
        xe_cores=number("gpu_subslice_count"),
        sub_group_sizes=tuple(int(s) for s in getattr(props, "sub_group_sizes", ()) or ()),
        max_work_group_size=number("max_work_group_size"),
        max_sub_groups=number("max_num_sub_groups"),
        slm_bytes=number("local_mem_size"),
        memory_bytes=memory,
        cache_bytes=number("last_level_cache_size"),
        memory_clock_mhz=number("memory_clock_rate"),
        memory_bus_bits=number("memory_bus_width"),
        has_dpas=bool(getattr(props, "has_subgroup_matrix_multiply_accumulate", False)),
        has_dpas_tf32=bool(getattr(props, "has_subgroup_matrix_multiply_accumulate_tensor_float32", False)),
        has_2d_block_io=bool(getattr(props, "has_subgroup_2d_block_io", False)),
        has_fp64=bool(getattr(props, "has_fp64", False)),
        driver_version=str(getattr(props, "driver_version", "") or ""),
        bandwidth=stated_bandwidth(name, memory),
    )


def device_facts_here() -> XpuFacts | None:
    """Facts of XPU device 0, or None when this process sees none."""
    import torch

    xpu = getattr(torch, "xpu", None)
    if xpu is None or not getattr(torch._C, "_has_xpu", False) or not xpu.is_available():
        return None
    return read_xpu_facts(xpu, 0)
