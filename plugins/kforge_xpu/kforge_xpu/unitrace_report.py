"""Reading what Intel's ``unitrace`` writes: its device timing summary (``-d``), its kernel properties table and
its per-kernel hardware metrics (``-q``, one row per kernel instance), into one record per kernel.

Every table unitrace prints is a header line starting with ``Kernel,`` and comma-separated rows with the kernel's
name quoted, padded with spaces; banners (``=== Device Timing Summary ===``, ``=== Device #0 Metrics ===``)
separate them. A table is recognised by its columns, not by where it is, so one parser reads the tool's console
output and its files alike. With ``-v`` a kernel's name carries its launch shape (``name[SIMD16 {40; 1; 1} {512;
1; 1}]``); rows are joined on the name without it.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

from kforge_core.records import KernelMetrics

_SHAPE = re.compile(r"\[SIMD\d+[^\]]*\]\s*$")
# Metric columns kept from a -q table, by the name unitrace gives them, and the key they are kept under.
METRIC_COLUMNS = {
    "GpuTime[ns]": "gpu_time_ns",
    "GPU_MEMORY_BYTE_READ[bytes]": "memory_read_bytes",
    "GPU_MEMORY_BYTE_WRITE[bytes]": "memory_write_bytes",
    "XVE_ACTIVE[%]": "xve_active_pct",
    "XVE_STALL[%]": "xve_stall_pct",
    "XVE_THREADS_OCCUPANCY_ALL[%]": "occupancy_pct",
    "XVE_INST_EXECUTED_XMX_ALL_UTILIZATION[%]": "xmx_pct",
    "XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%]": "alu0_pct",
    "XVE_INST_EXECUTED_ALU1_ALL_UTILIZATION[%]": "alu1_pct",
    "XVE_INST_EXECUTED_ALU2_ALL_UTILIZATION[%]": "alu2_pct",
    "XVE_INST_EXECUTED_SEND_ALL_UTILIZATION[%]": "send_pct",
    "L3_HIT[events]": "l3_hits",
    "L3_MISS[events]": "l3_misses",
    "AvgGpuCoreFrequencyMHz[MHz]": "core_mhz",
}
_SUMMED = {"gpu_time_ns", "memory_read_bytes", "memory_write_bytes", "l3_hits", "l3_misses"}
PROPERTY_COLUMNS = {
    "SIMD": "simd",
    "SLM Per Work Group": "slm_bytes",
    "Private Memory Per Thread": "private_bytes",
    "Spill Memory Per Thread": "spill_bytes",
    "Register File Size Per Thread": "grf_registers",
}


def base_name(name: str) -> str:
    """A kernel's name without the launch shape ``-v`` appends."""
    return _SHAPE.sub("", name).strip()


def is_command(name: str) -> bool:
    """Copies, fills and barriers appear in the timing table beside kernels (``zeCommandListAppendMemoryCopy(M2D)``)."""
    return name.startswith(("zeCommandList", "zeCommandQueue", "cl", "urEnqueue"))


@dataclass
class _Tables:
    timing: list[dict[str, str]] = field(default_factory=list)
    properties: list[dict[str, str]] = field(default_factory=list)
    metrics: list[dict[str, str]] = field(default_factory=list)
    total_device_ns: float | None = None


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def _tables(text: str) -> _Tables:
    tables = _Tables()
    header: list[str] | None = None
    target: list[dict[str, str]] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Total Device Time") and ":" in stripped:
            tables.total_device_ns = _number(stripped.rsplit(":", 1)[1].strip())
        if not stripped or stripped.startswith("=="):
            header, target = None, None
            continue
        cells = [cell.strip() for cell in next(csv.reader([stripped], skipinitialspace=True))]
        if cells and cells[0] == "Kernel":
            header = cells
            if "Calls" in cells:
                target = tables.timing
            elif "SLM Per Work Group" in cells:
                target = tables.properties
            elif any(c.endswith("]") for c in cells[1:]):
                target = tables.metrics
            else:
                target = None
            continue
        if header is not None and target is not None and len(cells) >= 2:
            target.append(dict(zip(header, cells)))
    return tables


@dataclass(frozen=True)
class UnitraceReport:
    """What one unitrace run found, per kernel, and the commands (copies) beside them."""

    kernels: tuple[KernelMetrics, ...]
    commands: tuple[KernelMetrics, ...]
    total_device_ns: float | None


def parse_unitrace(text: str, *, forwards: int = 1) -> UnitraceReport:
    """Kernels by total device time (largest first), each with its calls, time per call and per forward, its
    properties and its summed or time-weighted metrics; ``forwards`` is how many forwards were profiled."""
    tables = _tables(text)
    properties = {base_name(row["Kernel"]): row for row in tables.properties}
    metrics = _metrics_by_kernel(tables.metrics)
    kernels, commands = [], []
    for row in tables.timing:
        name = base_name(row["Kernel"])
        calls = int(_number(row.get("Calls")) or 0)
        total_us = (_number(row.get("Time (ns)")) or 0.0) / 1e3
        values: list[tuple[str, float | str]] = [
            ("calls", float(calls)), ("total_us", total_us), ("calls_per_forward", calls / forwards),
            ("us_per_forward", total_us / forwards),
        ]
        if name in properties:
            values += [(key, value) for column, key in PROPERTY_COLUMNS.items()
                       if (value := _number(properties[name].get(column))) is not None]
            if properties[name].get("Compiled"):
                values.append(("compiled", properties[name]["Compiled"]))
        values += sorted(metrics.get(name, {}).items())
        record = KernelMetrics(name=name, duration_us=total_us / calls if calls else None, metrics=tuple(values))
        (commands if is_command(name) else kernels).append(record)
    if not tables.timing:  # metrics without a timing table (-q alone): kernels from the metric rows
        for name, values in metrics.items():
            total_us = values.get("gpu_time_ns", 0.0) / 1e3
            kernels.append(KernelMetrics(name=name, duration_us=None, metrics=(
                ("total_us", total_us), ("us_per_forward", total_us / forwards), *sorted(values.items()))))
    order = lambda k: -(k.metric("total_us") or 0.0)  # noqa: E731
    return UnitraceReport(tuple(sorted(kernels, key=order)), tuple(sorted(commands, key=order)),
                          tables.total_device_ns)


def _metrics_by_kernel(rows: list[dict[str, str]]) -> dict[str, dict[str, float]]:
    """Per kernel: counters summed over its instances, percentages weighted by each instance's GPU time."""
    sums: dict[str, dict[str, float]] = {}
    weights: dict[str, dict[str, float]] = {}
    for row in rows:
        name = base_name(row.get("Kernel", ""))
        if not name:
            continue
        time = _number(row.get("GpuTime[ns]")) or 1.0
        for column, key in METRIC_COLUMNS.items():
            value = _number(row.get(column))
            if value is None:
                continue
            if key in _SUMMED:
                sums.setdefault(name, {})[key] = sums.get(name, {}).get(key, 0.0) + value
            else:
                sums.setdefault(name, {})[key] = sums.get(name, {}).get(key, 0.0) + value * time
                weights.setdefault(name, {})[key] = weights.get(name, {}).get(key, 0.0) + time
    for name, values in sums.items():
        for key, weight in weights.get(name, {}).items():
            values[key] /= weight
    return sums
