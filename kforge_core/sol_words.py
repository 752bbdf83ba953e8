"""How the speed of light reads in every report (``kforge eval``, ``kforge show``, report.md, bench summaries, the
agents' prompts): one wording for the bound, which roof binds, and each figure's fraction of it."""

from __future__ import annotations

from .peaks import bandwidth_text
from .speed_of_light import SpeedOfLight


def percent(fraction: float | None) -> str:
    """``"62%"``, ``"0.4%"``, or ``"-"`` where there is no fraction."""
    if fraction is None:
        return "-"
    return f"{fraction:.0%}" if fraction >= 0.1 else f"{fraction:.1%}" if fraction >= 0.001 else "<0.1%"


def bound_words(light: SpeedOfLight) -> str:
    """``"speed of light 0.01398 ms on the NVIDIA H200, memory-bound (67,108,864 bytes at 4.80 TB/s)"``."""
    bound = light.bound
    if bound.sol_ms is None:
        return f"speed of light: no bound ({bound.reason})"
    if bound.binds == "memory":
        why = f"{bound.bytes:,} bytes at {bandwidth_text(bound.bandwidth)}"
    else:
        why = ", ".join(f"{roof.flops:,} FLOPs as {roof.words}" for roof in bound.roofs)
    return f"speed of light {bound.sol_ms:.4g} ms on the {bound.device}, {bound.binds}-bound ({why})"


def fractions_words(light: SpeedOfLight) -> str:
    """``"the candidate at 62% of it, eager 20%, compile 41% (events time); SOL score 0.81 against compile"``."""
    if light.bound.sol_ms is None:
        return ""
    parts = [f"the candidate at {percent(light.fraction)} of it"] if light.fraction is not None else []
    parts += [f"{name} {percent(fraction)}" for name, fraction in light.baseline_fractions]
    if not parts:
        return ""
    text = ", ".join(parts) + f" ({light.timer} time)"
    if light.score is not None:
        text += f"; SOL score {light.score:.2f} against {light.baseline}"
    return text


def sol_summary(light: SpeedOfLight | None) -> str:
    """The bound and the fractions in one sentence; empty without a record."""
    if light is None:
        return ""
    fractions = fractions_words(light)
    return bound_words(light) + (f"; {fractions}" if fractions else "") + (f" ({light.note})" if light.note else "")
