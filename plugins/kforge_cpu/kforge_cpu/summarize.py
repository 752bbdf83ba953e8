"""``kforge_summarize_profile`` for the ``cpu`` backend: the profile's metrics as a short, ranked text.

It opens with where the forward stands (time, memory roof, flop rate, thread scaling), lists the kernels by time,
then the findings ordered by how much of the forward each one puts at stake (a kernel's share of the time times
how much the problem typically costs). Runs in the KForge process and reads only the ``ProfileResult``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, KernelMetrics, Problem, ProfileResult, ProfileSummary

from .profile import FORWARD

MAX_FINDINGS = 6
MEMORY_ROOF_PCT = 70.0
POOR_SCALING_PCT = 60.0
BUSY_LOAD = 0.5


@dataclass(frozen=True)
class Finding:
    stake: float  # estimated percent of the forward this finding is about
    text: str


def _num(record: KernelMetrics, key: str, default: float = 0.0) -> float:
    value = record.metric(key)
    return float(value) if isinstance(value, (int, float)) else default


def _str(record: KernelMetrics, key: str) -> str:
    value = record.metric(key)
    return value if isinstance(value, str) else ""


def _ms(us: float) -> str:
    return f"{us / 1e3:.3f} ms" if us < 1e4 else f"{us / 1e3:.1f} ms"


def _scaling(forward: KernelMetrics) -> list[tuple[int, float]]:
    points = []
    for key, value in forward.metrics:
        if key.startswith("time_us_") and key.endswith("_threads") and isinstance(value, (int, float)):
            points.append((int(key.split("_")[2]), float(value)))
    return sorted(points)


def _scaling_efficiency(forward: KernelMetrics) -> tuple[float, float] | None:
    """(speed-up from 1 to the most threads, efficiency in percent), or None without a scaling measurement."""
    points = _scaling(forward)
    if len(points) < 2:
        return None
    (_, one), (most, t) = points[0], points[-1]
    return one / t, 100 * one / t / most


def _status(forward: KernelMetrics) -> list[str]:
    mib = _num(forward, "bytes") / (1 << 20)
    pct = _num(forward, "bandwidth_pct_of_peak")
    peak = _num(forward, "peak_gbs")
    roof_us = _num(forward, "bytes") / (peak * 1e9) * 1e6 if peak else 0.0
    against_peak = (f" = {pct:.0f}% of the measured {peak:.1f} GB/s peak; the memory roof allows {_ms(roof_us)}"
                    if peak else " (the machine's peak could not be measured)")
    lines = [
        f"Numba profile of {FORWARD}: {_ms(forward.duration_us or 0)} median on {int(_num(forward, 'threads'))} "
        f"thread(s).",
        f"Memory: {mib:.1f} MiB compulsory traffic (inputs + outputs + parameters once) at "
        f"{_num(forward, 'achieved_gbs'):.1f} GB/s{against_peak}.",
    ]
    if _num(forward, "flops"):
        peak_flops = _num(forward, "peak_gflops")
        versus = (f" = {_num(forward, 'flops_pct_of_peak'):.0f}% of the measured {peak_flops:.0f} GFLOP/s "
                  "(torch.mm)" if peak_flops else "")
        lines.append(f"Compute: {_num(forward, 'flops') / 1e6:.1f} MFLOP of matmul/convolution per forward "
                     f"(counted on the reference) at {_num(forward, 'achieved_gflops'):.1f} GFLOP/s{versus}.")
    else:
        lines.append("Compute: no matmul/convolution in the reference (elementwise work is not counted): judge it "
                     "by memory traffic.")
    points = _scaling(forward)
    if len(points) >= 2:
        speedup, efficiency = _scaling_efficiency(forward)  # type: ignore[misc]
        steps = ", ".join(f"{n} -> {_ms(t)}" for n, t in points)
        lines.append(f"Threads: {steps} ({speedup:.2f}x, {efficiency:.0f}% parallel efficiency).")
    load, cpus = _num(forward, "load_average"), _num(forward, "cpus", 1)
    if load - 1 >= BUSY_LOAD:  # the profiling process itself accounts for about 1
        lines.append(f"Caution: other processes were using the CPUs (load average {load:.1f} on {cpus:.0f} CPUs), "
                     "so times and thread scaling are noisy.")
    return lines


def _kernel_line(rank: int, kernel: KernelMetrics) -> str:
    parts = [f"{rank}. {kernel.name}{_str(kernel, 'signature')}: {_ms(kernel.duration_us or 0)} per forward "
             f"({_num(kernel, 'share_of_forward_pct'):.0f}%), {_num(kernel, 'calls_per_forward'):g} call(s)"]
    if _str(kernel, "parallel") == "yes":
        parts.append(f"parallel loops {int(_num(kernel, 'parallel_loops'))}, serialised inside them "
                     f"{int(_num(kernel, 'serialized_loops'))}, fused {int(_num(kernel, 'fused_loops'))}")
    else:
        parts.append("not parallel (parallel=False)")
    vector = _str(kernel, "vectorization")
    if vector in ("vectorised", "partly vectorised", "not vectorised"):
        vector += (f" ({int(_num(kernel, 'vector_loops'))} vector loop(s) up to {int(_num(kernel, 'simd_bits'))}-bit, "
                   f"{int(_num(kernel, 'scalar_loops'))} scalar, {int(_num(kernel, 'remainder_loops'))} remainder)")
    parts.append(vector)
    return "; ".join(parts)


def _kernel_findings(kernel: KernelMetrics, threads: int) -> list[Finding]:
    share = _num(kernel, "share_of_forward_pct")
    name = kernel.name
    found = []
    vector = _str(kernel, "vectorization")
    ops = _str(kernel, "scalar_loop_ops")
    if vector == "not vectorised":
        found.append(Finding(share * 0.9, f"{name}: its hot loops are scalar ({ops}): no SIMD. Make the innermost "
                                          "loop run over the contiguous dimension, without data-dependent branches "
                                          "or calls, in float32, with fastmath=True for reductions."))
    elif vector == "partly vectorised":
        found.append(Finding(share * 0.6, f"{name}: {int(_num(kernel, 'scalar_loops'))} of its innermost loops stay "
                                          f"scalar ({ops}); the others are vectorised."))
    if _num(kernel, "loops_with_calls"):
        found.append(Finding(share * 0.7, f"{name}: {int(_num(kernel, 'loops_with_calls'))} hot loop(s) call a "
                                          "function per element (a math function such as exp with no vectorised "
                                          "library, or a helper that was not inlined): hoist or reduce those "
                                          "calls."))
    if _num(kernel, "f32_f64_conversions") and "float32" in _str(kernel, "signature"):
        found.append(Finding(share * 0.5, f"{name}: float32 data is computed in float64 in its hot loops "
                                          f"({int(_num(kernel, 'f32_f64_conversions'))} conversion instructions): "
                                          "write constants as np.float32(...), start accumulators at "
                                          "np.float32(0), pass scalars as np.float32."))
    if threads > 1 and _str(kernel, "parallel") != "yes":
        found.append(Finding(share * (1 - 1 / threads), f"{name} is not parallel: it runs on 1 of {threads} "
                                                         "threads. Use @njit(parallel=True) and prange over the "
                                                         "outer independent dimension."))
    elif threads > 1 and _str(kernel, "parallel") == "yes" and not _num(kernel, "parallel_loops"):
        found.append(Finding(share * (1 - 1 / threads), f"{name}: parallel=True, but Numba found no loop to run in "
                                                         "parallel: use prange over the outer dimension."))
    hoisted = _str(kernel, "hoisted_allocations")
    if hoisted:
        found.append(Finding(share * 0.2, f"{name}: allocations inside parallel loops ({hoisted}); Numba hoisted "
                                          "them this time: allocate scratch outside the kernel and pass it in."))
    return found


def _forward_findings(forward: KernelMetrics) -> list[Finding]:
    found = []
    outside = 100 - _num(forward, "numba_share_pct", 100)
    if outside >= 15:
        ops = _str(forward, "torch_ops") or "none recorded"
        found.append(Finding(outside, f"{outside:.0f}% of the forward runs outside Numba kernels (PyTorch ops: "
                                      f"{ops}; allocation; Python): move that work into the kernels."))
    fault_ms = _num(forward, "page_faults") * _num(forward, "page_fault_us") / 1e3
    fault_pct = 100 * fault_ms * 1e3 / (forward.duration_us or 1)
    if fault_pct >= 10:
        found.append(Finding(fault_pct, f"{_num(forward, 'page_faults'):.0f} page faults per forward, at least "
                                        f"{fault_ms:.2f} ms ({fault_pct:.0f}%): the OS maps and zeroes every fresh "
                                        "page at its first write. Allocate large outputs with np.empty + "
                                        "torch.from_numpy (huge pages) and avoid temporary tensors."))
    pct = _num(forward, "bandwidth_pct_of_peak")
    scaling = _scaling_efficiency(forward)
    if scaling and scaling[1] < POOR_SCALING_PCT and pct < MEMORY_ROOF_PCT:
        speedup, efficiency = scaling
        found.append(Finding(100 - efficiency, f"Poor thread scaling ({speedup:.2f}x on "
                                               f"{int(_num(forward, 'threads'))} threads) while far from the memory "
                                               "roof: serial parts, load imbalance or too little work per thread."))
    if pct >= MEMORY_ROOF_PCT:
        found.append(Finding(0, f"At {pct:.0f}% of the measured memory bandwidth the forward is at the memory roof: "
                                "only moving fewer bytes (fewer passes, fusing with neighbours) makes it faster."))
    return found


@hookimpl
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    if profile.tool != "numba":
        return None
    forward = next((k for k in profile.kernels if k.name == FORWARD), None)
    if forward is None:
        return ProfileSummary(text="The profile recorded no forward timing.\n" + profile.raw[:2000])
    kernels = [k for k in profile.kernels if k is not forward]
    threads = int(_num(forward, "threads", 1))
    lines = _status(forward)
    lines.append(f"Kernels by time ({_num(forward, 'numba_share_pct'):.0f}% of the forward is in Numba kernels):")
    lines += [_kernel_line(i, k) for i, k in enumerate(kernels, 1)] or ["(no Numba kernel ran)"]
    findings = _forward_findings(forward) + [f for k in kernels for f in _kernel_findings(k, threads)]
    findings.sort(key=lambda f: f.stake, reverse=True)
    lines.append("Findings, most important first:")
    lines += [f"{i}. {f.text}" for i, f in enumerate(findings[:MAX_FINDINGS], 1)] or [
        "None: the kernels are parallel and vectorised; compare the time with the memory roof above."]
    return ProfileSummary(text="\n".join(lines))
