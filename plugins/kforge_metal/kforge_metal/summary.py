"""``kforge_summarize_profile`` for the ``metal`` backend: the measurements in words, ranked, with what they
suggest, and the same as a picture (see ``profile_image``). Runs in KForge's process; never runs candidate code."""

from __future__ import annotations

from kforge_core.plugin_api import compute_ops, describe_ops
from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, Image, Problem, ProfileResult, ProfileSummary

from .metal_profile import MetalProfile, profile_path
from .metal_trace import TraceSummary
from .profile_image import render_profile_image

MiB = float(1 << 20)


def summarize_metal(profile: ProfileResult) -> ProfileSummary | None:
    path = profile_path(profile)
    if path is None:
        return None
    measured = MetalProfile.read(path)
    images: tuple[Image, ...] = ()
    if measured.picture:
        picture = render_profile_image(measured, path.parent)
        if picture is not None:
            images = (Image(picture, caption="the GPU timeline, time per kernel and bandwidth against a plain copy"),)
    return ProfileSummary(text=summary_text(measured, profile.ops), images=images)


def summary_text(measured: MetalProfile, ops: tuple[str, ...] = ()) -> str:
    forward_ms = measured.median_forward_ms
    lines = [f"{measured.device}: ModelNew.forward takes {forward_ms:.3f} ms (median of {len(measured.forward_ms)} "
             "forwards, torch.mps.Event)."]
    lines += _bandwidth_lines(measured, forward_ms)
    lines += _kernel_lines(measured, forward_ms)
    lines += _trace_lines(measured.trace) if measured.trace is not None else [measured.trace_note]
    torch_ops = compute_ops(ops)
    if torch_ops:
        lines.append(f"PyTorch compute operators the forward runs: {describe_ops(torch_ops)} (work not done by your "
                     "kernels, and a pass over memory each).")
    return "\n".join(line for line in lines if line)


def _bandwidth_lines(measured: MetalProfile, forward_ms: float) -> list[str]:
    if not measured.minimum_bytes or forward_ms <= 0:
        return []
    reached = measured.minimum_bytes / (forward_ms * 1e-3) / 1e9
    line = (f"Memory: the problem moves at least {measured.minimum_bytes / MiB:.1f} MiB (inputs, outputs and "
            f"parameters once): {reached:.1f} GB/s at the median forward")
    if measured.copy_gbs > 0:
        share = reached / measured.copy_gbs
        line += f", {share:.0%} of the {measured.copy_gbs:.0f} GB/s a 256 MiB copy reached on this GPU."
        if share < 0.5:
            line += (" Far below it: the forward makes extra passes over memory, waits between dispatches, or is "
                     "bound by computation.")
        elif share > 0.8:
            line += " Close to it: little is left to gain unless less memory is moved."
    return [line]


def _kernel_lines(measured: MetalProfile, forward_ms: float) -> list[str]:
    if not measured.kernels:
        return ["No compile_shader kernel dispatch was seen in the probe forwards (kernels looked up once and "
                "kept, as in `self.k = lib.name`, are not timed one by one)."]
    lines = ["Kernels, slowest per forward first (each dispatch timed alone, the queue drained before it):"]
    for rank, kernel in enumerate(measured.kernels[:10], 1):
        per_forward_ms = kernel.us_per_call * kernel.calls_per_forward / 1e3
        share = per_forward_ms / forward_ms if forward_ms > 0 else 0.0
        text = (f"  {rank}. {kernel.name}: {kernel.calls_per_forward:g} dispatch(es) per forward, "
                f"{kernel.us_per_call:.1f} us each ({share:.0%} of the forward); "
                f"{kernel.bytes_per_call / MiB:.1f} MiB of tensor arguments -> {kernel.gbs:.1f} GB/s")
        if measured.copy_gbs > 0:
            text += f" ({kernel.gbs / measured.copy_gbs:.0%} of the copy bandwidth)"
        if kernel.threads:
            text += f"; grid {'x'.join(map(str, kernel.threads))}"
        if kernel.group_size:
            text += f", threadgroup {'x'.join(map(str, kernel.group_size))}"
        lines.append(text)
    kernel_ms = sum(k.us_per_call * k.calls_per_forward for k in measured.kernels) / 1e3
    if forward_ms > 0 and kernel_ms < 0.7 * forward_ms:
        lines.append(f"The kernels account for {kernel_ms:.3f} ms of the {forward_ms:.3f} ms forward: the rest is "
                     "PyTorch's own work, dispatch overhead and the GPU waiting.")
    return lines


def _trace_lines(trace: TraceSummary) -> list[str]:
    channels = ", ".join(f"{name} {ns / 1e6:.3f} ms" for name, ns in trace.by_channel)
    gaps = ", ".join(f"{ns / 1e3:.1f} us" for ns in trace.longest_gaps_ns) or "none"
    lines = [f"Metal System Trace of the forwards (process {trace.pid}): the GPU was busy {trace.busy_fraction:.0%} "
             f"of the {trace.window_ns / 1e6:.3f} ms between its first and last work, in {trace.intervals} "
             f"intervals (by channel: {channels}); longest idle gaps: {gaps}."]
    if trace.busy_fraction < 0.6:
        lines.append("Much idle time between GPU work: fewer, larger dispatches (fusing kernels, more work per "
                     "thread) and no host synchronisation in the forward would close the gaps.")
    for work in trace.named[:6]:
        lines.append(f"  PyTorch's own GPU work: {work.name}: {work.calls} call(s), {work.total_ns / 1e6:.3f} ms")
    return lines


@hookimpl
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    """The metal profile stage's summary; None for another tool's profile (the core's generic summary answers)."""
    if profile.tool != "metal":
        return None
    return summarize_metal(profile)
