"""What ``kforge integrate --hotspots`` measures beside the end-to-end timing, for each class a kernel replaced and
each phase: the kernel against the module's own forward ALONE, on the inputs the module got in that phase (the
speedup the projection uses), and INSIDE the model, from a profile of the untouched and of the swapped model
(the device time the class's modules took in each)."""

from __future__ import annotations

import statistics
from typing import Any, Callable

from ...model_worker.end_to_end_timing import paired_samples, spread
from .kinds import GroupModule
from .phases import Driver
from .profile import profile_phases
from .tracking import Captured, Tracker
from .values import CacheSnapshot

PROFILED_STEPS = 3


def phase_figures(driver: Driver, classes: dict[str, Any], untouched: Callable[[], None],
                  with_kernels: Callable[[], None], device: Any, warmup: int,
                  repetitions: int) -> dict[str, dict[str, dict[str, Any]]]:
    """``{phase: {class: {"alone": ..., "in_model": ...}}}``; ``classes`` maps each swapped class to its kernel's
    forward. The model is left with the kernels in."""
    groups = _outermost(driver.model, set(classes))
    tracker = Tracker(groups)
    tracker.install()
    try:
        untouched()
        tracker.capturing = True
        for phase in driver.phases:
            driver.run(phase, 1, lambda name, index: tracker.step(name, index, profiling=False))
        tracker.capturing = False
        figures: dict[str, dict[str, dict[str, Any]]] = {phase: {} for phase in driver.phases}
        for key, captured in tracker.captured.items():  # a class's first call of each phase stands for it
            entry = figures[key.phase].setdefault(key.class_name, {})
            if "alone" not in entry:
                entry["alone"] = _alone(captured, classes[key.class_name], device, warmup, repetitions)
        before = profile_phases(driver, tracker, device, PROFILED_STEPS)
        with_kernels()
        after = profile_phases(driver, tracker, device, PROFILED_STEPS)
    finally:
        tracker.remove()
        with_kernels()
    for phase, profile in before.items():
        for class_name in classes:
            untouched_us = sum(s.device_us for k, s in profile.groups.items() if k.class_name == class_name)
            swapped_us = sum(s.device_us for k, s in after[phase].groups.items() if k.class_name == class_name)
            if untouched_us and swapped_us:
                figures[phase].setdefault(class_name, {})["in_model"] = {
                    "untouched_ms": profile.per_step_ms(untouched_us),
                    "swapped_ms": after[phase].per_step_ms(swapped_us), "speedup": untouched_us / swapped_us}
    return figures


def _outermost(model: Any, classes: set[str]) -> list[GroupModule]:
    groups: list[GroupModule] = []
    for path, module in model.named_modules():
        if type(module).__name__ in classes and not any(path.startswith(f"{g.path}.") for g in groups):
            groups.append(GroupModule(path, module, "swapped"))
    return groups


def _alone(captured: Captured, kernel_forward: Any, device: Any, warmup: int, repetitions: int) -> dict[str, Any]:
    """The module's forward against the kernel's on the captured inputs, timed in turn."""
    module = captured.group.module
    if _holds_cache(captured.args) or _holds_cache(captured.kwargs):
        return {"why_not": "it is called with a key-value cache, which a call alone would grow"}
    original = type(module).forward
    args, kwargs = captured.args, captured.kwargs
    nothing = lambda: None  # noqa: E731
    base, kernel = paired_samples([(nothing, lambda: original(module, *args, **kwargs)),
                                   (nothing, lambda: kernel_forward(module, *args, **kwargs))],
                                  device, warmup, repetitions)
    base_ms, kernel_ms = statistics.median(base), statistics.median(kernel)
    return {"original_ms": base_ms, "kernel_ms": kernel_ms, "speedup": base_ms / kernel_ms if kernel_ms else None,
            "spread": (spread(base) ** 2 + spread(kernel) ** 2) ** 0.5}


def _holds_cache(value: Any) -> bool:
    if isinstance(value, CacheSnapshot):
        return True
    if isinstance(value, (tuple, list)):
        return any(_holds_cache(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_cache(v) for v in value.values())
    return False
