"""The ``xpu`` profile stage, in the worker: unitrace on the candidate's forwards when unitrace is here.

Without unitrace (or with ``use_unitrace = false``), or when unitrace cannot profile (no permission for the GPU's
metrics, an old driver), this returns None and the core's generic implementation answers with the PyTorch
profiler, which records XPU activities (kernel times) on this device.
"""

from __future__ import annotations

import logging
from pathlib import Path

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, Candidate, ProfileResult, StageContext

from .backend import xpu_options
from .profile_child import profile_command
from .unitrace_report import parse_unitrace
from .unitrace_run import UnitraceError, find_unitrace, run_unitrace

log = logging.getLogger("kforge.xpu")


def profile_with_unitrace(candidate: Candidate, context: StageContext, unitrace: str) -> ProfileResult | None:
    options = xpu_options(context.options)
    workdir = Path(context.workdir)
    program = profile_command(workdir=workdir, entry=candidate.entry, problem=context.problem.path,
                              calls=options.profile_calls)
    try:
        run = run_unitrace(unitrace, program, workdir / "unitrace", metric_group=options.metric_group,
                           timeout_s=options.tool_timeout_s, cwd=workdir)
    except UnitraceError as exc:
        log.warning("unitrace could not profile %s (%s); using the PyTorch profiler", candidate.label, exc)
        return None
    report = parse_unitrace(run.text, forwards=options.profile_calls)
    if not report.kernels and not report.commands:
        log.warning("unitrace recorded no kernel for %s; using the PyTorch profiler", candidate.label)
        return None
    return ProfileResult(tool="unitrace", kernels=report.kernels + report.commands, raw=run.text, files=run.files)


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    options = xpu_options(context.options)
    unitrace = find_unitrace(options.unitrace) if options.use_unitrace else None
    if unitrace is None:
        return None
    return profile_with_unitrace(candidate, context, unitrace)
