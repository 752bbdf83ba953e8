"""From a profile of an Intel GPU to what the performance analyst needs: per kernel, its share of the forward and
what bounds it, with the numbers that say so.

A unitrace profile (``tool="unitrace"``) carries, per kernel, the bytes it moved to and from device memory, how
busy and how stalled the vector engines were, the hardware-thread occupancy, the pipes' utilisation and the
kernel's properties (SIMD width, registers per thread, SLM, spills). A kernel is memory-bound when it reaches 60%
or more of the memory bandwidth Intel states for the device (the threshold the cuda summary uses for its peaks),
compute-bound when its vector engines are active 60% or more of the time, else latency-bound: neither is busy.
A PyTorch-profiler profile (``tool="torch.profiler"``, XPU activities) has kernel times only, so it gets the
ranking, launches per forward and the problem's floor, and says what it lacks.
"""

from __future__ import annotations

from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import compute_ops, describe_ops, problem_floor
from kforge_core.records import Backend, KernelMetrics, Problem, ProfileResult, ProfileSummary

from .device_facts import XpuFacts, device_facts_here
from .unitrace_report import is_command

BOUND_THRESHOLD = 60.0
RANGE_NAME = "ModelNew.forward"
TOOLS = {"unitrace": "unitrace", "torch.profiler": "PyTorch profiler (XPU activities)"}


def _m(kernel: KernelMetrics, key: str) -> float | None:
    value = kernel.metric(key)
    return float(value) if isinstance(value, (int, float)) else None


def per_forward_us(kernel: KernelMetrics) -> float:
    stated = _m(kernel, "us_per_forward")
    if stated is not None:
        return stated
    return (kernel.duration_us or 0.0) * (_m(kernel, "calls_per_forward") or 0.0)


def achieved_bandwidth(kernel: KernelMetrics) -> float | None:
    """Bytes/s between the kernel and device memory, from unitrace's counters."""
    moved = (_m(kernel, "memory_read_bytes") or 0.0) + (_m(kernel, "memory_write_bytes") or 0.0)
    seconds = (_m(kernel, "gpu_time_ns") or 0.0) / 1e9 or (_m(kernel, "total_us") or 0.0) / 1e6
    return moved / seconds if moved and seconds else None


def bound(kernel: KernelMetrics, peak: float | None) -> str:
    bandwidth = achieved_bandwidth(kernel)
    if bandwidth and peak and 100 * bandwidth / peak >= BOUND_THRESHOLD:
        return "memory-bound"
    active = _m(kernel, "xve_active_pct")
    if active is None:
        return ""
    if active >= BOUND_THRESHOLD:
        return "compute-bound (vector engines busy)"
    return "latency-bound (neither memory nor the vector engines are busy)"


def evidence(kernel: KernelMetrics, peak: float | None) -> list[str]:
    lines = []
    calls = _m(kernel, "calls") or 1.0
    bandwidth = achieved_bandwidth(kernel)
    if bandwidth:
        read = (_m(kernel, "memory_read_bytes") or 0.0) / calls
        written = (_m(kernel, "memory_write_bytes") or 0.0) / calls
        line = f"memory: {read / 1e6:.1f} MB read + {written / 1e6:.1f} MB written per launch = {bandwidth / 1e9:.1f} GB/s"
        if peak:
            line += f", {100 * bandwidth / peak:.0f}% of the stated {peak / 1e9:.0f} GB/s"
        hits, misses = _m(kernel, "l3_hits"), _m(kernel, "l3_misses")
        if hits is not None and misses:
            line += f"; L3 hit rate {100 * hits / (hits + misses):.0f}%"
        lines.append(line)
    active, stall, occupancy = (_m(kernel, k) for k in ("xve_active_pct", "xve_stall_pct", "occupancy_pct"))
    if active is not None:
        line = f"vector engines {active:.0f}% active"
        if stall is not None:
            line += f", {stall:.0f}% stalled"
        if occupancy is not None:
            line += f"; hardware-thread occupancy {occupancy:.0f}%"
        lines.append(line)
    pipes = [(label, _m(kernel, key)) for label, key in (("ALU0 (FP/INT)", "alu0_pct"), ("ALU1", "alu1_pct"),
                                                          ("ALU2", "alu2_pct"), ("XMX", "xmx_pct"),
                                                          ("send (memory messages)", "send_pct"))]
    shown = [f"{label} {value:.0f}%" for label, value in pipes if value is not None]
    if shown:
        lines.append("pipe utilisation: " + ", ".join(shown))
    lines.extend(_resources(kernel))
    return lines


def _resources(kernel: KernelMetrics) -> list[str]:
    simd, grf, slm, spill, private = (_m(kernel, k) for k in ("simd", "grf_registers", "slm_bytes", "spill_bytes",
                                                              "private_bytes"))
    lines = []
    parts = []
    if simd:
        parts.append(f"SIMD{simd:.0f}")
    if grf:
        parts.append(f"{grf:.0f} registers/thread" + (" (large GRF)" if grf >= 256 else ""))
    if slm is not None:
        parts.append(f"SLM {slm / 1024:.0f} KiB/work-group")
    if parts:
        lines.append(", ".join(parts))
    if spill:
        remedy = ("smaller tiles or fewer live values (already 256 registers)" if grf and grf >= 256
                  else "grf_mode with 256 registers (num_warps <= 32), smaller tiles or fewer live values")
        lines.append(f"registers spill: {spill:.0f} bytes/thread live in memory instead of registers; {remedy}")
    if private:
        lines.append(f"private memory {private:.0f} bytes/thread: values the compiler could not keep in registers")
    return lines


def floor_line(problem: Problem, peak: float | None, total_us: float) -> str | None:
    """The problem's floor (kforge_core.workload) against the time the kernels took: its bytes at the stated
    bandwidth, and the rate its matrix work ran at (Intel states no FLOP peak quoted here to compare it with)."""
    floor = problem_floor(problem)
    if not total_us or not (floor.bytes and peak or floor.flops):
        return None
    parts = []
    if floor.bytes and peak:
        floor_us = floor.bytes / peak * 1e6
        parts.append(f"{floor.bytes / 1e6:.1f} MB must move at least once ({floor_us:.1f} us at the stated bandwidth; "
                     f"the kernels took {total_us:.1f} us, {total_us / floor_us:.1f}x that)")
    if floor.flops:
        parts.append(f"its {floor.flops / 1e9:.1f} GFLOP of matrix work ran at {floor.flops / total_us / 1e6:.2f} "
                     "TFLOP/s")
    return "Problem floor: " + "; ".join(parts) + "."


def summarize_profile(problem: Problem | None, profile: ProfileResult, facts: XpuFacts | None) -> ProfileSummary:
    tool = TOOLS.get(profile.tool, profile.tool)
    peak = facts.bandwidth.bytes_per_s if facts is not None and facts.bandwidth is not None else None
    kernels = [k for k in profile.kernels if k.name != RANGE_NAME and not is_command(k.name)]
    commands = [k for k in profile.kernels if is_command(k.name)]
    kernels.sort(key=lambda k: -per_forward_us(k))
    total = sum(per_forward_us(k) for k in kernels)
    device = facts.name if facts is not None else "the Intel GPU"
    if peak:
        device += f" (stated memory bandwidth {peak / 1e9:.0f} GB/s)"
    if not kernels:
        return ProfileSummary(text=f"{tool} on {device}: no kernel ran in the candidate's forward.")
    lines = [f"{tool} on {device}: {len(kernels)} kernel(s), {total:.1f} us of device time per forward."]
    floor = floor_line(problem, peak, total) if problem is not None else None
    if floor:
        lines.append(floor)
    for rank, kernel in enumerate(kernels[:10], 1):
        time = per_forward_us(kernel)
        launches = _m(kernel, "calls_per_forward")
        head = f"{rank}. {kernel.name}: {time:.1f} us per forward ({100 * time / total:.0f}%)"
        if launches is not None:
            head += f", {launches:g} launch(es) per forward"
        kind = bound(kernel, peak)
        lines.append(head + (f", {kind}" if kind else ""))
        lines.extend(f"   - {item}" for item in evidence(kernel, peak))
    if commands:
        lines.append("Also on the device: " + ", ".join(
            f"{k.name} {per_forward_us(k):.1f} us per forward" for k in commands))
    if profile.tool != "unitrace":
        lines.append("This profiler gives kernel times only: no bytes moved, occupancy or register use per kernel "
                     "(Intel's unitrace gives them; set [backends.xpu] unitrace or put it on PATH).")
    torch_ops = compute_ops(profile.ops)
    if torch_ops:
        lines.append(f"PyTorch compute operators that ran: {describe_ops(torch_ops)} (work not done by the kernels).")
    return ProfileSummary(text="\n".join(lines))


@hookimpl
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    if profile.tool not in TOOLS:
        return None  # another tool's profile: the core's generic summary
    return summarize_profile(problem, profile, device_facts_here())
