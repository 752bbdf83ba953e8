"""From Nsight Compute metrics to what the performance analyst needs: per kernel, what bounds it and why.

A kernel is memory-bound or compute-bound when the busier of its memory system and its SMs runs at 60% or more
of peak (Nsight Compute's own threshold), else latency-bound: neither is busy, so the kernel waits (too few
warps, dependent loads, barriers, a grid too small for the GPU). Its place on the roofline comes from its
arithmetic intensity (CUDA-core FLOPs over DRAM bytes) against the ridge point of the peaks ncu measured for the
GPU at the clocks it ran at. Tensor-core work is not counted in those FLOPs; the tensor pipe's activity says it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kforge_core.plugin_api import ProblemFloor
from kforge_core.records import KernelMetrics

from .device_facts import PER_SM_PER_CLOCK
from .ncu import STALL_REASONS

BOUND_THRESHOLD = 60.0


def _m(kernel: KernelMetrics, key: str) -> float | None:
    value = kernel.metric(key)
    return value if isinstance(value, float) else None


def _f(kernel: KernelMetrics, key: str) -> float:
    return _m(kernel, key) or 0.0


@dataclass(frozen=True)
class KernelAssessment:
    name: str
    launches: int
    duration_us: float
    bound: str  # "memory-bound", "compute-bound" or "latency-bound"
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Peaks:
    flops_fp32: float | None  # FLOP/s
    flops_fp64: float | None
    dram_bandwidth: float | None  # bytes/s

    @classmethod
    def of(cls, kernel: KernelMetrics) -> Peaks:
        clock = _m(kernel, "sm__cycles_elapsed.avg.per_second")
        ffma = _m(kernel, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
        dfma = _m(kernel, "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained")
        dram = _m(kernel, "dram__bytes.sum.peak_sustained")
        dram_clock = _m(kernel, "dram__cycles_elapsed.avg.per_second")
        return cls(
            2 * ffma * clock if ffma and clock else None,
            2 * dfma * clock if dfma and clock else None,
            dram * dram_clock if dram and dram_clock else None,
        )


def flops(kernel: KernelMetrics) -> tuple[float, float, float]:
    """(fp32, fp16, fp64) FLOPs executed on CUDA cores: a fused multiply-add counts two."""

    def count(prefix: str) -> float:
        op = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
        return (2 * _f(kernel, op.format(prefix + "fma")) + _f(kernel, op.format(prefix + "add"))
                + _f(kernel, op.format(prefix + "mul")))

    return count("f"), count("h"), count("d")


def merge_launches(kernels: tuple[KernelMetrics, ...]) -> list[tuple[KernelMetrics, int, float]]:
    """Group launches of the same kernel: (first launch's metrics, launch count, total microseconds), by time."""
    groups: dict[str, list[KernelMetrics]] = {}
    for kernel in kernels:
        groups.setdefault(kernel.name, []).append(kernel)
    merged = [(ks[0], len(ks), sum(k.duration_us or 0.0 for k in ks)) for ks in groups.values()]
    return sorted(merged, key=lambda item: -item[2])


def assess(kernel: KernelMetrics, launches: int = 1, total_us: float | None = None) -> KernelAssessment:
    sm = _f(kernel, "sm__throughput.avg.pct_of_peak_sustained_elapsed")
    memory = _f(kernel, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
    if max(sm, memory) >= BOUND_THRESHOLD:
        bound = "compute-bound" if sm >= memory else "memory-bound"
    else:
        bound = "latency-bound"
    evidence = [f"SM throughput {sm:.0f}% of peak, memory throughput {memory:.0f}% of peak"]
    evidence.append(_memory_line(kernel))
    roofline = _roofline_line(kernel)
    if roofline:
        evidence.append(roofline)
    evidence.append(_occupancy_line(kernel))
    stalls = _stall_line(kernel)
    if stalls:
        evidence.append(stalls)
    position = _intensity(kernel)
    tensor = _f(kernel, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")
    if bound == "compute-bound" and position and position[0] < position[1] and tensor < 10:
        evidence.append("busy SMs at low arithmetic intensity: the time goes to instructions that are not FLOPs "
                        "(exp, address arithmetic, branches, shuffles); fewer instructions per element would help")
    duration = total_us if total_us is not None else (kernel.duration_us or 0.0)
    return KernelAssessment(kernel.name, launches, duration, bound, tuple(evidence))


def _memory_line(kernel: KernelMetrics) -> str:
    duration_s = (kernel.duration_us or 0.0) / 1e6
    dram_bytes = _f(kernel, "dram__bytes_read.sum") + _f(kernel, "dram__bytes_write.sum")
    line = (f"DRAM {_f(kernel, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'):.0f}% of peak"
            f" ({dram_bytes / 1e6:.1f} MB moved")
    if duration_s > 0:
        line += f", {dram_bytes / duration_s / 1e9:.0f} GB/s"
    line += f"), L2 {_f(kernel, 'lts__throughput.avg.pct_of_peak_sustained_elapsed'):.0f}%"
    hit = _m(kernel, "lts__t_sector_hit_rate.pct")
    if hit is not None:
        line += f" (hit rate {hit:.0f}%)"
    return line + f", L1 {_f(kernel, 'l1tex__throughput.avg.pct_of_peak_sustained_active'):.0f}%"


def _work(kernel: KernelMetrics) -> tuple[float, float | None, bool]:
    """(CUDA-core FLOPs, the matching peak FLOP/s, whether that is fp64)."""
    peaks = Peaks.of(kernel)
    fp32, fp16, fp64 = flops(kernel)
    if fp64 > fp32 + fp16:
        return fp64, peaks.flops_fp64, True
    return fp32 + fp16, peaks.flops_fp32, False


def _intensity(kernel: KernelMetrics) -> tuple[float, float] | None:
    """(arithmetic intensity, ridge point) in FLOP per DRAM byte, when the profile has what they need."""
    work, peak, _ = _work(kernel)
    dram_bytes = _f(kernel, "dram__bytes_read.sum") + _f(kernel, "dram__bytes_write.sum")
    bandwidth = Peaks.of(kernel).dram_bandwidth
    if not (work and dram_bytes and peak and bandwidth):
        return None
    return work / dram_bytes, peak / bandwidth


def _roofline_line(kernel: KernelMetrics) -> str | None:
    peaks = Peaks.of(kernel)
    work, peak, use_fp64 = _work(kernel)
    dram_bytes = _f(kernel, "dram__bytes_read.sum") + _f(kernel, "dram__bytes_write.sum")
    duration_s = (kernel.duration_us or 0.0) / 1e6
    tensor = _m(kernel, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")
    parts = []
    position = _intensity(kernel)
    if position and duration_s and peak and peaks.dram_bandwidth:
        intensity, ridge = position
        attainable = min(peak, intensity * peaks.dram_bandwidth)
        achieved = work / duration_s
        side = "memory roof (left of the ridge)" if intensity < ridge else "compute roof (right of the ridge)"
        parts.append(
            f"roofline: {intensity:.2f} FLOP/byte vs ridge {ridge:.1f} -> under the {side}; "
            f"{achieved / 1e12:.2f} TFLOP/s {'fp64' if use_fp64 else 'fp32/fp16'} = "
            f"{100 * achieved / attainable:.0f}% of the attainable {attainable / 1e12:.2f}"
        )
    elif dram_bytes and duration_s and peaks.dram_bandwidth:
        parts.append(f"roofline: no CUDA-core FLOPs; {100 * dram_bytes / duration_s / peaks.dram_bandwidth:.0f}% "
                     "of peak DRAM bandwidth")
    if tensor is not None and tensor >= 1.0:
        parts.append(f"tensor pipes active {tensor:.0f}% of cycles")
    return "; ".join(parts) or None


def _occupancy_line(kernel: KernelMetrics) -> str:
    achieved = _f(kernel, "sm__warps_active.avg.pct_of_peak_sustained_active")
    theoretical = _m(kernel, "sm__maximum_warps_per_active_cycle_pct")
    limits = {
        "registers": _m(kernel, "launch__occupancy_limit_registers"),
        "shared memory": _m(kernel, "launch__occupancy_limit_shared_mem"),
        "warps per SM": _m(kernel, "launch__occupancy_limit_warps"),
        "blocks per SM": _m(kernel, "launch__occupancy_limit_blocks"),
    }
    known = {k: v for k, v in limits.items() if v is not None}
    line = f"occupancy {achieved:.0f}% achieved"
    if theoretical is not None:
        line += f" of {theoretical:.0f}% theoretical"
    if known:
        limiter = min(known, key=lambda k: known[k])
        line += f" (limited by {limiter}: {known[limiter]:.0f} blocks/SM)"
    shared = _f(kernel, "launch__shared_mem_per_block_static") + _f(kernel, "launch__shared_mem_per_block_dynamic")
    line += (f"; {_f(kernel, 'launch__registers_per_thread'):.0f} registers/thread, "
             f"{shared / 1024:.1f} KiB shared/block, block {_f(kernel, 'launch__block_size'):.0f}, "
             f"grid {_f(kernel, 'launch__grid_size'):.0f}")
    waves = _m(kernel, "launch__waves_per_multiprocessor")
    if waves is not None:
        line += f" ({waves:.2f} waves)"
    return line


def _stall_line(kernel: KernelMetrics) -> str | None:
    stalls = []
    for reason in STALL_REASONS:
        if reason == "selected":
            continue  # issuing, not stalled
        value = _m(kernel, f"smsp__warp_issue_stalled_{reason}_per_warp_active.pct")
        if value:
            stalls.append((value, reason))
    if not stalls:
        return None
    top = sorted(stalls, reverse=True)[:3]
    return "top warp stalls: " + ", ".join(f"{reason} {value:.0f}%" for value, reason in top)


def device_line(kernel: KernelMetrics) -> str:
    name = kernel.metric("device__attribute_display_name")
    major = _m(kernel, "device__attribute_compute_capability_major")
    minor = _m(kernel, "device__attribute_compute_capability_minor")
    peaks = Peaks.of(kernel)
    parts = [str(name) if name else "GPU"]
    if major is not None and minor is not None:
        parts[0] += f" (sm_{int(major)}{int(minor)})"
    clock = _m(kernel, "sm__cycles_elapsed.avg.per_second")
    if clock:
        parts.append(f"SM clock {clock / 1e9:.2f} GHz (not locked)")
    if peaks.dram_bandwidth:
        parts.append(f"DRAM peak {peaks.dram_bandwidth / 1e12:.2f} TB/s")
    if peaks.flops_fp32:
        parts.append(f"fp32 peak {peaks.flops_fp32 / 1e12:.1f} TFLOP/s")
    return ", ".join(parts)


def matrix_peak(kernel: KernelMetrics, dtype: str) -> tuple[float, str] | None:
    """(FLOP/s, which unit) a problem's matrix work in ``dtype`` can reach on this GPU: tensor cores for 16-bit
    types (table by compute capability), CUDA cores for float32 (ncu's own peak: fp32 results are checked at a
    tolerance TF32 does not meet)."""
    if dtype == "float32":
        peak = Peaks.of(kernel).flops_fp32
        return (peak, "fp32 CUDA cores") if peak else None
    major = _m(kernel, "device__attribute_compute_capability_major")
    minor = _m(kernel, "device__attribute_compute_capability_minor")
    sms = _m(kernel, "device__attribute_multiprocessor_count")
    clock = _m(kernel, "sm__cycles_elapsed.avg.per_second")
    if None in (major, minor, sms, clock):
        return None
    rates = PER_SM_PER_CLOCK.get((int(major), int(minor)), {})
    rate = rates.get("fp16 matrix")
    return (rate * sms * clock, "16-bit tensor cores") if rate else None


def floor_line(floor: ProblemFloor, kernel: KernelMetrics, total_us: float) -> str | None:
    """The problem's floor on this GPU against the time the candidate's kernels took."""
    bandwidth = Peaks.of(kernel).dram_bandwidth
    if not bandwidth:
        return None
    memory_us = floor.bytes / bandwidth * 1e6
    parts = [f"{floor.bytes / 1e6:.1f} MB must move at least once ({memory_us:.1f} us at peak DRAM bandwidth)"]
    floor_us = memory_us
    peak = matrix_peak(kernel, floor.dtype) if floor.flops else None
    if floor.flops and peak:
        compute_us = floor.flops / peak[0] * 1e6
        parts.append(f"{floor.flops / 1e9:.1f} GFLOP of matrix work ({compute_us:.1f} us on {peak[1]})")
        floor_us = max(memory_us, compute_us)
    return (f"Problem floor: {' and '.join(parts)}; the kernels took {total_us:.1f} us, "
            f"{total_us / floor_us:.1f}x that floor.")


def summarize_kernels(
    kernels: tuple[KernelMetrics, ...], *, dropped: tuple[str, ...] = (), floor: ProblemFloor | None = None
) -> str:
    """The summary text: a header (and the problem's floor), then each kernel ranked by its share of the time."""
    if not kernels:
        return "Nsight Compute profiled no kernel in the candidate's forward: it launched no GPU work."
    merged = merge_launches(kernels)
    total = sum(t for _, _, t in merged) or 1.0
    lines = [f"Nsight Compute on {device_line(kernels[0])}: {len(kernels)} kernel launch(es) in one forward, "
             f"{total:.1f} us of GPU time."]
    floor_text = floor_line(floor, kernels[0], total) if floor is not None else None
    if floor_text:
        lines.append(floor_text)
    for rank, (kernel, launches, duration) in enumerate(merged, 1):
        a = assess(kernel, launches, duration)
        times = f" x{launches}" if launches > 1 else ""
        lines.append(f"{rank}. {a.name}{times}: {duration:.1f} us ({100 * duration / total:.0f}%), {a.bound}")
        lines.extend(f"   - {item}" for item in a.evidence)
    if dropped:
        lines.append(f"(metrics this ncu could not collect: {', '.join(dropped)})")
    return "\n".join(lines)
