"""The profile as a picture for a multimodal analyst: the GPU timeline of the traced forwards (when a Metal System
Trace was recorded), the time each kernel takes per forward, and the bandwidth each reached against what a plain
copy reaches on this GPU."""

from __future__ import annotations

from pathlib import Path

from .metal_profile import MetalProfile

IMAGE_FILE = "metal_profile.png"
_CHANNEL_COLOURS = {"Compute": "tab:blue", "Vertex": "tab:green", "Fragment": "tab:purple"}


def render_profile_image(measured: MetalProfile, directory: Path) -> Path | None:
    """Write the picture into ``directory``; None when there is nothing to draw."""
    panels = [p for p in (_timeline if measured.trace and measured.trace.timeline else None,
                          _kernel_times if measured.kernels else None,
                          _bandwidth if measured.copy_gbs > 0 else None) if p is not None]
    if not panels:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.6 * len(panels)), dpi=100, squeeze=False)
    for draw, ax in zip(panels, axes[:, 0]):
        draw(measured, ax)
    fig.suptitle(f"{measured.device}: ModelNew.forward {measured.median_forward_ms:.3f} ms (median)", fontsize=11)
    fig.tight_layout()
    path = directory / IMAGE_FILE
    fig.savefig(path)
    plt.close(fig)
    return path


def _timeline(measured: MetalProfile, ax) -> None:  # noqa: ANN001
    trace = measured.trace
    assert trace is not None
    channels = sorted({i.channel for i in trace.timeline})
    for row, channel in enumerate(channels):
        bars = [(i.start_ns / 1e3, max(i.duration_ns / 1e3, 0.5)) for i in trace.timeline if i.channel == channel]
        ax.broken_barh(bars, (row - 0.4, 0.8), color=_CHANNEL_COLOURS.get(channel, "tab:gray"))
    ax.set_yticks(range(len(channels)), channels)
    ax.set_xlabel("microseconds since the first GPU work of the traced forwards")
    ax.set_title(f"GPU timeline (Metal System Trace): busy {trace.busy_fraction:.0%} of the "
                 f"{trace.window_ns / 1e6:.2f} ms window; gaps are the GPU waiting", fontsize=9)


def _kernel_times(measured: MetalProfile, ax) -> None:  # noqa: ANN001
    kernels = list(measured.kernels)[:12]
    names = [k.name[:32] for k in kernels]
    per_forward = [k.us_per_call * k.calls_per_forward for k in kernels]
    ax.barh(names[::-1], per_forward[::-1], color="tab:blue")
    ax.axvline(measured.median_forward_ms * 1e3, color="black", linestyle="--", label="whole forward")
    ax.set_xlabel("microseconds per forward")
    ax.set_title("time per forward of each kernel (dispatches timed one by one)", fontsize=9)
    ax.legend(fontsize=8)


def _bandwidth(measured: MetalProfile, ax) -> None:  # noqa: ANN001
    labels, values = [], []
    if measured.minimum_bytes and measured.median_forward_ms > 0:
        labels.append("forward (minimum bytes)")
        values.append(measured.minimum_bytes / (measured.median_forward_ms * 1e-3) / 1e9)
    for kernel in list(measured.kernels)[:8]:
        labels.append(kernel.name[:32])
        values.append(kernel.gbs)
    ax.barh(labels[::-1], values[::-1], color="tab:orange")
    ax.axvline(measured.copy_gbs, color="black", linestyle="--", label=f"256 MiB copy: {measured.copy_gbs:.0f} GB/s")
    ax.set_xlabel("GB/s")
    ax.set_title("bandwidth reached against a plain copy on this GPU", fontsize=9)
    ax.legend(fontsize=8)
