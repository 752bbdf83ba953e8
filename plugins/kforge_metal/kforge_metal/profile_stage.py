"""The profile stage of the ``metal`` backend, run in the worker on a candidate that passed verification.

It measures, on the GPU:

* ``ModelNew.forward``: ``profile_forwards`` forwards, each between two ``torch.mps.Event`` records;
* each kernel of the candidate's ``compile_shader`` libraries, dispatch by dispatch, in two probe forwards
  (see ``dispatch_probe``);
* the copy bandwidth of this GPU (256 MiB device to device), the ceiling a memory-bound kernel is held to;
* where Xcode's ``xctrace`` is found (and ``xctrace`` is on): a Metal System Trace of the forwards run in a child
  process, read into the GPU's busy time, its idle gaps and PyTorch's own named work (see ``metal_trace``).

The PyTorch profiler's operators are recorded too (the core's generic profile), for the check that the work is
done by the candidate's kernels. Everything goes into ``metal_profile.json`` (:class:`MetalProfile`).
"""

from __future__ import annotations

import logging

from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import first_trial_inputs, floor_bytes, profile_with_torch, stage_device, verified_model
from kforge_core.records import Backend, Candidate, ProfileResult, StageContext

from .backend import MetalOptions, metal_options
from .dispatch_probe import kernel_times, probing_dispatches
from .metal_profile import MetalProfile
from .trace_child import trace_child_command
from .xctrace import XctraceError, find_xctrace, record_and_summarize

log = logging.getLogger("kforge.metal")
PROBE_FORWARDS = 2
COPY_BYTES = 256 << 20


def _event_ms(work) -> float:  # noqa: ANN001
    import torch

    torch.mps.synchronize()
    start, end = torch.mps.Event(enable_timing=True), torch.mps.Event(enable_timing=True)
    start.record()
    work()
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end))


def copy_bandwidth_gbs() -> float:
    """GB/s of a 256 MiB device-to-device copy (read plus write), the best of five."""
    import torch

    source = torch.empty(COPY_BYTES // 4, dtype=torch.float32, device="mps").fill_(1.0)
    target = torch.empty_like(source)
    target.copy_(source)
    best = min(_event_ms(lambda: target.copy_(source)) for _ in range(5))
    return 2 * COPY_BYTES / (best * 1e-3) / 1e9 if best > 0 else 0.0


def profile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult:
    import torch

    options = metal_options(context.options)
    model = verified_model(backend, candidate, context)
    args = first_trial_inputs(backend, context)  # timing is verified elsewhere: one input set serves here
    with torch.no_grad():
        forward_ms = tuple(_event_ms(lambda: model(*args)) for _ in range(options.profile_forwards))
        with probing_dispatches() as dispatches:
            for _ in range(PROBE_FORWARDS):
                model(*args)
            torch.mps.synchronize()
    kernels = kernel_times(dispatches, PROBE_FORWARDS) if dispatches is not None else ()
    trace, note = _trace(candidate, context, options)
    measured = MetalProfile(
        device=stage_device(backend, context).hardware_name(), forward_ms=forward_ms, copy_gbs=copy_bandwidth_gbs(),
        minimum_bytes=floor_bytes(context.problem), kernels=kernels, trace=trace, trace_note=note,
        picture=options.profile_image,
    )
    operators = profile_with_torch(backend, candidate, context)  # the operators, for the reference-call check
    path = measured.write(context.workdir)
    trace_files = sorted(context.workdir.glob("xctrace_*.xml"))
    return ProfileResult(tool="metal", kernels=measured.kernel_metrics(), raw=operators.raw,
                         files=(path, *trace_files), ops=operators.ops)


def _trace(candidate: Candidate, context: StageContext, options: MetalOptions):  # noqa: ANN202
    """The Metal System Trace's summary and "", or None and why there is none."""
    if not options.xctrace:
        return None, "Metal System Trace off ([backends.metal] xctrace = false)"
    xcrun = find_xctrace()
    if xcrun is None:
        return None, "no Metal System Trace: xctrace not found (install Xcode and select it with xcode-select)"
    program = trace_child_command(context.workdir, candidate.entry, context.problem.path, options.profile_forwards)
    try:
        return record_and_summarize(xcrun, program, context.workdir, options.xctrace_timeout_s), ""
    except XctraceError as exc:
        log.warning("no Metal System Trace for %s: %s", candidate.label, exc)
        return None, f"no Metal System Trace: {exc}"


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult:
    return profile_candidate(backend, candidate, context)
