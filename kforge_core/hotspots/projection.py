"""The gain a kernel could give the model, projected from ``model.json`` (Amdahl's law over a phase's device
time), beside the gain ``kforge integrate`` measured, and, where the two differ by more than the measurement's
spread, the causes the measurements can show.

Per phase: ``new_time = sum_i share_i / speedup_i + (1 - sum_i share_i)`` over the classes the kernels replaced
(``share_i`` the class's share of the phase's device time in model.json, ``speedup_i`` the kernel against the
module's forward alone on the inputs the module got in that phase, or, for a module called with a key-value cache,
inside the model); the projected gain is ``1 / new_time``.
"""

from __future__ import annotations

from typing import Any

BUSY_ENOUGH = 0.9  # a device busy for less of the step than this waits on the host enough to say so
SLOWER_INSIDE = 0.9  # a kernel this much slower inside the model than alone is worth naming
FLOOR = 0.01  # the smallest spread a gap is held to: timings of one run agree no better than that


def project(document: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """``{phase: {...}}`` for each phase of ``document`` the integrate ``report`` measured."""
    kernel_of = {layer["layer_class"]: layer["kernel"] for layer in report["layers"]}
    measured = report["end_to_end"]["speedups"]
    figures = report.get("phases") or {}
    accepted = {name: k.get("accepted_speedup") for name, k in report["kernels"].items()}
    out = {}
    for phase, info in document["phases"].items():
        if phase not in measured:
            continue
        classes = _classes(document, phase, kernel_of, figures.get(phase) or {})
        saved = sum(c["share"] * (1 - 1 / c["speedup"]) for c in classes.values() if c["speedup"])
        by_kernel = {}
        for kernel in sorted({c["kernel"] for c in classes.values()}):
            mine = sum(c["share"] * (1 - 1 / c["speedup"]) for c in classes.values()
                       if c["kernel"] == kernel and c["speedup"])
            by_kernel[kernel] = 1 / (1 - mine)
        entry = {"projected": 1 / (1 - saved), "measured": measured[phase],
                 "measured_spread": _spread(report, phase), "by_kernel": by_kernel, "classes": classes,
                 "device_busy": info.get("device_busy")}
        entry["gap"] = entry["measured"] / entry["projected"] - 1
        entry["explained_by"] = _explain(entry, phase, accepted) if abs(entry["gap"]) > max(
            entry["measured_spread"], FLOOR) else []
        out[phase] = entry
    return out


def _classes(document: dict[str, Any], phase: str, kernel_of: dict[str, str],
             figures: dict[str, Any]) -> dict[str, dict[str, Any]]:
    classes: dict[str, dict[str, Any]] = {}
    for group in document.get("groups", []):
        name = group["class"]
        if group["phase"] != phase or name not in kernel_of:
            continue
        entry = classes.setdefault(name, {"kernel": kernel_of[name], "share": 0.0, "shapes": group["shapes"]})
        entry["share"] += group["share"]
    for name, entry in classes.items():
        measured = figures.get(name) or {}
        alone, inside = measured.get("alone") or {}, measured.get("in_model") or {}
        entry["alone"] = alone.get("speedup")
        entry["in_model"] = inside.get("speedup")
        entry["speedup"] = entry["alone"] or entry["in_model"]
        entry["from"] = "alone at the phase's shape" if entry["alone"] else \
            ("inside the model" if entry["in_model"] else (alone.get("why_not") or "not measured"))
    return classes


def _spread(report: dict[str, Any], phase: str) -> float:
    e2e = report["end_to_end"]
    parts = [e2e[side].get(f"{phase}_spread", 0.0) or 0.0 for side in ("untouched", "with_kernels")]
    return (parts[0] ** 2 + parts[1] ** 2) ** 0.5


def _explain(entry: dict[str, Any], phase: str, accepted: dict[str, Any]) -> list[str]:
    """The causes the figures show for a measured gain apart from the projected one."""
    reasons = []
    busy = entry["device_busy"]
    if entry["gap"] < 0 and busy is not None and busy < BUSY_ENOUGH:
        saved = 1 - 1 / entry["projected"]
        reasons.append(f"launch gaps: the kernels kept the device busy {busy:.0%} of the measured {phase} step (the "
                       "rest it waited for the host); the projection shortens device time, not the waiting: "
                       f"counting it, {1 / (1 - busy * saved):.3f}x")
    if entry["gap"] > 0 and busy is not None and busy < BUSY_ENOUGH:
        reasons.append(f"host time: the kernels kept the device busy {busy:.0%} of the measured {phase} step, so the "
                       "step is mostly the host launching work; a kernel that launches once where the module "
                       "launched several saves host time, which the projection over device time does not count")
    for name, c in entry["classes"].items():
        if c["alone"] and c["in_model"] and c["in_model"] < SLOWER_INSIDE * c["alone"]:
            reasons.append(f"{c['kernel']} is slower inside the model: {c['alone']:.2f}x alone at the {phase} "
                           f"shape, {c['in_model']:.2f}x on {name}'s device time in the model")
        elif entry["gap"] > 0 and c["alone"] and c["in_model"] and c["alone"] < SLOWER_INSIDE * c["in_model"]:
            reasons.append(f"{c['kernel']} is faster inside the model ({c['in_model']:.2f}x on {name}'s device "
                           f"time) than alone at the {phase} shape ({c['alone']:.2f}x)")
        tuned = accepted.get(c["kernel"])
        if tuned and c["alone"] and c["alone"] < SLOWER_INSIDE * tuned:
            reasons.append(f"{c['kernel']} at a shape it was not tuned for: {tuned:.2f}x on its problem when "
                           f"accepted, {c['alone']:.2f}x at the {phase} shape ({c['shapes']})")
    return reasons or ["none of the causes measured here (launch gaps, a kernel slower inside the model, a shape "
                       "it was not tuned for) accounts for it"]


def projection_lines(projection: dict[str, Any]) -> list[str]:
    lines = ["", "Projected from model.json (Amdahl over each phase's device time) against measured:"]
    for phase, entry in projection.items():
        kernels = ", ".join(f"{k} {g:.3f}x" for k, g in entry["by_kernel"].items()) or "no kernel"
        lines.append(f"  {phase}: projected {entry['projected']:.3f}x ({kernels}), measured {entry['measured']:.3f}x "
                     f"(spread {entry['measured_spread']:.1%})")
        for name, c in entry["classes"].items():
            inside = f", {c['in_model']:.2f}x inside the model" if c["in_model"] else ""
            speed = f"{c['alone']:.2f}x alone" if c["alone"] else c["from"]
            lines.append(f"    {name} <- {c['kernel']}: {c['share']:.1%} of the phase's device time, {speed}"
                         f"{inside}")
        for reason in entry["explained_by"]:
            lines.append(f"    gap: {reason}")
    return lines
