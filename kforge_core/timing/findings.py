"""What the timers say beside each other, as findings for the analysis agent: the share of a call's wall time that
the device was not busy (host launch overhead, Python, synchronization), from the medians of the same candidate's
``wall`` and ``device`` figures (``events`` where the device has no device timer)."""

from __future__ import annotations

LAUNCH_OVERHEAD_SHARE = 0.3  # from this share of the wall time on, launch overhead is worth a finding


def launch_overhead_share(figures_ms: tuple[tuple[str, float], ...]) -> tuple[float, str] | None:
    """``(share, timer)``: the share of the median wall time per call the device figure does not account for, and
    which device figure it was compared with; None without a wall and a device-side figure."""
    found = dict(figures_ms)
    wall = found.get("wall")
    timer = "device" if "device" in found else "events" if "events" in found else ""
    if not wall or not timer or wall <= 0:
        return None
    return max(0.0, (wall - found[timer]) / wall), timer


def launch_overhead_finding(figures_ms: tuple[tuple[str, float], ...]) -> str | None:
    """``"72% of this candidate's wall time is host launch overhead; ..."`` when the share is large enough."""
    measured = launch_overhead_share(figures_ms)
    if measured is None or measured[0] < LAUNCH_OVERHEAD_SHARE:
        return None
    share, timer = measured
    found = dict(figures_ms)
    return (f"{share:.0%} of this candidate's wall time is host launch overhead (wall {found['wall']:.4g} ms per "
            f"call, {timer} time {found[timer]:.4g} ms): fewer launches, CUDA graphs or fusion help more than a "
            "faster kernel.")
