"""The model's phases under the PyTorch profiler, with the device's activity where the device has one
(``Device.profiler_activity``), and its time attributed: each device kernel (on a device without a profiled
activity, each operator's own host time) to the phase step and the group module call it was launched in, or,
outside every group, to the outermost ATen operator that launched it.

A kernel is attributed by where it was LAUNCHED (the profiler links each kernel to the host operator that launched
it, and that operator sits inside the ranges the tracker opened), and counted for its time on the device."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .phases import Driver
from .profiler_cost import burst_pair_us, cost_per_operation_us
from .tracking import PHASE_PREFIX, RANGE_PREFIX, GroupKey, Tracker


@dataclass
class Share:
    """Time per step of one group or one rest operator in one phase."""

    device_us: float = 0.0
    calls: int = 0
    modules: list[str] = field(default_factory=list)
    shapes: str = ""


@dataclass
class PhaseProfile:
    phase: str
    steps: int
    device_us: float = 0.0  # everything attributed to the phase's steps
    span_us: float = 0.0  # from the first step's start to the end of the phase's last kernel (or range)
    groups: dict[GroupKey, Share] = field(default_factory=dict)
    rest: dict[tuple[str, str], Share] = field(default_factory=dict)  # (operator, input shapes) -> share

    def per_step_ms(self, us: float) -> float:
        return us / self.steps / 1e3


@dataclass(frozen=True)
class StepSamples:
    """One phase's step in milliseconds, each repetition's figure: ``measured`` without the profiler, ``profiled``
    under it alone (the step as the profiler's own records span it), taken in turns; ``operations`` is how many
    device operations (kernels, copies, fills) a profiled step ran, or the host operators where the device has no
    profiled activity; ``own_cost_us`` is the profiler's own cost an operation, measured apart in the same turns
    (:mod:`.profiler_cost`)."""

    measured: list[float]
    profiled: list[float]
    operations: float
    own_cost_us: float


def measured_and_profiled(driver: Driver, device: Any, decode_steps: int, profile_steps: int,
                          repetitions: int) -> dict[str, StepSamples]:
    """Each phase's step measured without the profiler (:meth:`Driver.step_ms`) and under it alone, the same steps
    timed the same way (one untimed step, then ``profile_steps`` steps, ``decode_steps`` for decode), in turns:
    ``repetitions`` times a measured sample, then a profiled one, so that both see the host as it is at that moment
    (a step set by the host's launches moves with the host's speed by 15% and more from one second to the next, so
    two figures taken a minute apart differ by as much, whatever the profiler costs). A profiled sample is a session
    of its own, with the device's activity alone where it has one: no ranges, no operator shapes, no host operators,
    nothing of KForge's in the model (run before the tracker's hooks are installed), so the profiler's own cost per
    launch is all it adds; that cost is measured in the same turns."""
    activities = _activities(device)
    lightest = activities[1:] or activities
    found = {}
    for phase in driver.phases:
        steps = decode_steps if phase == "decode" else profile_steps
        measured, profiled, operations, bursts = [], [], [], []
        for _ in range(repetitions):
            measured += driver.step_ms(phase, device, steps, 1)
            span, records = _session_span(driver, device, phase, steps, lightest)
            if not span and lightest != activities:  # a profiler that lists no device records without the host's
                span, records = _session_span(driver, device, phase, steps, activities)
            profiled.append(span / steps / 1e3)
            operations.append(records / steps)
            bursts.append(burst_pair_us(device, lightest))
        found[phase] = StepSamples(measured, profiled, statistics.median(operations), cost_per_operation_us(bursts))
    return found


def _session_span(driver: Driver, device: Any, phase: str, steps: int, activities: list[Any]) -> tuple[float, int]:
    """The span of ``steps`` profiled steps (microseconds) and the records in it: from a mark made as the first step
    begins (:func:`start_mark`), as a measured step's clock starts before the step's own host work, to the end of
    the last record."""
    from torch.profiler import ProfilerActivity, profile

    session = profile(activities=activities)

    def begin() -> None:  # after a step that wakes what idled, its work done
        session.start()
        start_mark(device)

    try:
        driver.after_one_step(phase, steps, device, begin)
        device.synchronize()
    finally:  # a step that raised leaves no profiler running in the worker
        if session.profiler is not None:
            session.stop()
    on_device = activities != [ProfilerActivity.CPU]
    events = session.events()
    return span_us(events, on_device), sum(1 for event in events if _on_side(event, on_device))


def start_mark(device: Any) -> None:
    """One operation on the device, the session's first record: where its steps began (a step's first kernel comes
    only after the host work that precedes it, which the measured step counts)."""
    import torch

    torch.zeros(1, device=device.torch_device)


def span_us(events: Any, on_device: bool) -> float:
    """From the earliest start to the latest end of the device's records (``on_device``) or the host's."""
    spans = [(event.time_range.start, event.time_range.end) for event in events if _on_side(event, on_device)]
    return max(end for _, end in spans) - min(start for start, _ in spans) if spans else 0.0


def _on_side(event: Any, on_device: bool) -> bool:
    return (str(event.device_type) != "DeviceType.CPU") == on_device


def _activities(device: Any) -> list[Any]:
    from torch.profiler import ProfilerActivity

    activities = [ProfilerActivity.CPU]
    if device.profiler_activity and hasattr(ProfilerActivity, device.profiler_activity):
        activities.append(getattr(ProfilerActivity, device.profiler_activity))
    return activities


def profile_phases(driver: Driver, tracker: Tracker, device: Any, steps: int) -> dict[str, PhaseProfile]:
    """Profile ``steps`` steps of each phase (after the tracker's hooks are installed and the model warmed up)."""
    from torch.profiler import profile

    activities = _activities(device)
    tracker.calls.clear()
    tracker.profiling = True
    try:
        with profile(activities=activities, record_shapes=True) as prof:
            for phase in driver.phases:
                driver.run(phase, steps, lambda name, index: tracker.step(name, index, profiling=True), device)
                device.synchronize()
    finally:
        tracker.profiling = False
    return attribute(prof.events(), tracker, on_device=len(activities) > 1,
                     steps={phase: steps for phase in driver.phases})


def attribute(events: Any, tracker: Tracker, *, on_device: bool, steps: dict[str, int]) -> dict[str, PhaseProfile]:
    """Each cost (a host event's device kernels, or a host operator's own time) to its phase and group call or
    rest operator; the group calls counted where they ran inside a phase step."""
    profiles = {phase: PhaseProfile(phase, count) for phase, count in steps.items()}
    for event in events:
        if event.name.startswith(RANGE_PREFIX):
            phase = _phase_of(event)
            if phase in profiles:
                group, key = tracker.calls[int(event.name[len(RANGE_PREFIX):])]
                share = profiles[phase].groups.setdefault(key, Share())
                share.calls += 1
                if group.path not in share.modules:
                    share.modules.append(group.path)
        cost = _cost_us(event, on_device)
        if cost <= 0:
            continue
        phase, call, operator = _place(event)
        if phase not in profiles:
            continue
        profile = profiles[phase]
        profile.device_us += cost
        if call is not None:
            _, key = tracker.calls[int(call.name[len(RANGE_PREFIX):])]
            profile.groups.setdefault(key, Share()).device_us += cost
        else:
            name = operator.name if operator is not None else "(outside any operator)"
            shapes = _shapes(operator) if operator is not None else ""
            share = profile.rest.setdefault((name, shapes), Share(shapes=shapes))
            share.device_us += cost
    for profile in profiles.values():
        _count_rest_calls(events, profile)
    _spans(events, profiles)
    return profiles


def _spans(events: Any, profiles: dict[str, PhaseProfile]) -> None:
    """Each phase's wall time in the profile: from its first step's range to the end of the last thing it ran,
    a range on the host or a kernel on the device, before the next phase began."""
    ranges: dict[str, list[tuple[float, float]]] = defaultdict(list)
    ends: list[tuple[float, float]] = []
    for event in events:
        if event.name.startswith(PHASE_PREFIX):
            phase = event.name[len(PHASE_PREFIX):].rsplit(".", 1)[0]
            ranges[phase].append((event.time_range.start, event.time_range.end))
        elif str(event.device_type) != "DeviceType.CPU":
            ends.append((event.time_range.start, event.time_range.end))
    starts = sorted((min(s for s, _ in spans), phase) for phase, spans in ranges.items())
    for index, (start, phase) in enumerate(starts):
        window_end = starts[index + 1][0] if index + 1 < len(starts) else float("inf")
        last = max([e for _, e in ranges[phase]] + [e for s, e in ends if start <= s < window_end])
        if phase in profiles:
            profiles[phase].span_us = last - start


def _cost_us(event: Any, on_device: bool) -> float:
    if on_device:
        kernels = getattr(event, "kernels", None) or []
        return float(sum(k.duration for k in kernels)) if str(event.device_type) == "DeviceType.CPU" else 0.0
    if event.name.startswith(("kforge.", "[")) or str(event.device_type) != "DeviceType.CPU":
        return 0.0  # the ranges' own time is the Python between operators; "[memory]" and the like are no work
    return float(event.self_cpu_time_total)


def _place(event: Any) -> tuple[str, Any, Any]:
    """(phase, the group call range or None, the outermost operator below the phase) of an event."""
    call = operator = None
    node = event
    while node is not None:
        name = node.name
        if name.startswith(PHASE_PREFIX):
            return name[len(PHASE_PREFIX):].rsplit(".", 1)[0], call, operator
        if name.startswith(RANGE_PREFIX) and call is None:
            call = node
        elif "::" in name and call is None:
            operator = node
        node = node.cpu_parent
    return "", call, operator


def _phase_of(event: Any) -> str:
    node = event.cpu_parent
    while node is not None:
        if node.name.startswith(PHASE_PREFIX):
            return node.name[len(PHASE_PREFIX):].rsplit(".", 1)[0]
        node = node.cpu_parent
    return ""


def _shapes(event: Any) -> str:
    shapes = [list(s) for s in (getattr(event, "input_shapes", None) or []) if s]
    return ", ".join(str(s) for s in shapes)


def _count_rest_calls(events: Any, profile: PhaseProfile) -> None:
    """How many times each rest operator ran in the phase's steps (as an outermost operator outside groups)."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for event in events:
        if "::" not in event.name or (event.cpu_parent is not None and "::" in event.cpu_parent.name):
            continue
        phase, call, operator = _place(event)
        if phase == profile.phase and call is None and operator is event:
            counts[(event.name, _shapes(event))] += 1
    for key, share in profile.rest.items():
        share.calls = counts.get(key, 0)
