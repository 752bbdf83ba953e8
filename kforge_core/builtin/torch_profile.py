"""The core's generic profile: the PyTorch profiler around a few calls of ``ModelNew.forward``.

It records the framework operators that ran (for the check that the work happened in kernels) and, on devices
the profiler traces (those whose ``Device.profiler_activity`` names one, as CUDA's does), the device kernels with
their times; elsewhere the operators are all there is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..harness.worker.candidate import candidate_instance, device_of, reference_for
from ..harness.worker.reference import clone_values
from ..records import Backend, Candidate, KernelMetrics, ProfileResult, StageContext

PROFILED_CALLS = 3
RANGE_NAME = "ModelNew.forward"
TRACE_FILE = "torch_profile_trace.json"


def profile_with_torch(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult:
    from torch.profiler import ProfilerActivity, profile, record_function

    reference = reference_for(backend, context)
    model = candidate_instance(backend, candidate, context).model
    device = device_of(backend, context)
    sync = device.synchronize
    argument_sets = [clone_values(reference.trials[0].inputs) for _ in range(PROFILED_CALLS + 1)]
    activities = [ProfilerActivity.CPU]
    if device.profiler_activity and hasattr(ProfilerActivity, device.profiler_activity):
        activities.append(getattr(ProfilerActivity, device.profiler_activity))
    with torch.no_grad():
        model(*argument_sets.pop())  # warm-up: lazy initialization stays out of the profile
        sync()
        with profile(activities=activities) as prof:
            for args in argument_sets:
                with record_function(RANGE_NAME):
                    model(*args)
                sync()
    events = prof.key_averages()
    trace = Path(context.workdir) / TRACE_FILE
    prof.export_chrome_trace(str(trace))
    sort_key = "self_device_time_total" if len(activities) > 1 else "self_cpu_time_total"
    return ProfileResult(
        tool="torch.profiler",
        kernels=_kernels(events, device_kernels=len(activities) > 1),
        raw=events.table(sort_by=sort_key, row_limit=30),
        files=(trace,),
        ops=tuple(sorted({e.key for e in events if "::" in e.key and not _on_device(e)})),
    )


def _on_device(event: Any) -> bool:
    """A device kernel (or device-side range), not a host-side operator."""
    kind = getattr(event, "device_type", None)
    return kind is not None and str(kind) != "DeviceType.CPU"


def _kernels(events: Any, *, device_kernels: bool) -> tuple[KernelMetrics, ...]:
    """Device kernels (by self device time) where the device is traced; else the forward range and CPU ops."""
    rows = []
    for e in events:
        if device_kernels and _on_device(e):
            total = float(getattr(e, "self_device_time_total", 0.0))
        elif not device_kernels and (e.key == RANGE_NAME or "::" in e.key):
            total = float(e.cpu_time_total if e.key == RANGE_NAME else e.self_cpu_time_total)
        else:
            continue
        calls = max(int(e.count), 1)
        rows.append(KernelMetrics(
            name=e.key,
            duration_us=total / calls,
            metrics=(("calls", float(calls)), ("total_us", total), ("calls_per_forward", calls / PROFILED_CALLS)),
        ))
    rows.sort(key=lambda k: -(k.metric("total_us") or 0.0))
    return tuple(rows[:50])
