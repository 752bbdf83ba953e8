"""Summarizing a profile for the performance-analysis agent: kernels ranked by time, the PyTorch operators that
ran, and what the problem's minimum memory traffic says about the bandwidth reached."""

from __future__ import annotations

from ..harness.op_trace import compute_ops, describe_ops
from ..records import Problem, ProfileResult, ProfileSummary
from ..workload import floor_bytes

RANGE_NAME = "ModelNew.forward"


def summarize(problem: Problem, profile: ProfileResult) -> ProfileSummary:
    forward = next((k for k in profile.kernels if k.name == RANGE_NAME), None)
    kernels = [k for k in profile.kernels if k.name != RANGE_NAME]
    total_us = sum(float(k.metric("total_us") or 0.0) for k in kernels)
    per_forward = _per_forward(kernels)
    lines = [f"{profile.tool}: {len(kernels)} kernels/operators recorded."]
    if forward is not None and forward.duration_us:
        lines.append(f"ModelNew.forward: {forward.duration_us:.1f} us per call (host wall time inside the range).")
        if per_forward < forward.duration_us:
            outside = forward.duration_us - per_forward
            lines.append(f"Recorded operators account for {per_forward:.1f} us of it; {outside:.1f} us "
                         f"({100 * outside / forward.duration_us:.0f}%) ran outside them (the candidate's own code "
                         "on the host, or waiting for the device).")
    lines.append("Ranked by time:")
    for rank, k in enumerate(kernels[:10], 1):
        share = 100.0 * float(k.metric("total_us") or 0.0) / total_us if total_us else 0.0
        lines.append(f"  {rank}. {k.name[:100]}: {k.duration_us or 0.0:.1f} us per call, "
                     f"{float(k.metric('calls_per_forward') or 0):.0f} call(s) per forward, {share:.0f}% of the time")
    traffic = floor_bytes(problem)
    busy_us = forward.duration_us if forward is not None and forward.duration_us else per_forward
    if traffic and busy_us:
        lines.append(f"Minimum memory traffic (inputs and parameters read once, outputs written once): {traffic / 1e6:.2f} MB; "
                     f"at {busy_us:.1f} us per forward that is {traffic / busy_us / 1e3:.1f} GB/s. Far below the "
                     "device's bandwidth means time goes to compute, launches or extra passes over memory.")
    torch_ops = compute_ops(profile.ops)
    if torch_ops:
        lines.append(f"PyTorch compute operators that ran: {describe_ops(torch_ops)} (work not done by the kernel).")
    return ProfileSummary(text="\n".join(lines))


def _per_forward(kernels: list) -> float:
    total = 0.0
    for k in kernels:
        total += float(k.duration_us or 0.0) * float(k.metric("calls_per_forward") or 0.0)
    return total
