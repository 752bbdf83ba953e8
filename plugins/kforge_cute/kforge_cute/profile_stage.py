"""The cute backend's profile stage: Nsight Compute on the candidate's forward, inside the worker, through the
cuda backend's runner and CSV parser (the summary is the cuda backend's too).

When ncu is missing, switched off (``use_ncu = false``) or cannot profile (no permission for the GPU's counters),
this returns None and the core's generic PyTorch-profiler implementation answers instead.
"""

from __future__ import annotations

import logging
from pathlib import Path

from kforge_core.records import Backend, Candidate, ProfileResult, StageContext
from kforge_cuda.ncu import NcuError, run_ncu
from kforge_cuda.ncu_csv import parse_ncu_csv
from kforge_cuda.profile_stage import DROPPED_PREFIX, MAX_RAW_CHARS
from kforge_cuda.toolchain import find_tool

from .child import child_command
from .compile_stage import cache_root
from .options import CuteOptions

log = logging.getLogger("kforge.cute")


def profile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    options: CuteOptions = context.options if context.options is not None else backend.default_options()
    ncu = find_tool("ncu", options.ncu) if options.use_ncu else None
    if ncu is None:
        return None
    workdir = Path(context.workdir)
    program = child_command(workdir=workdir, entry=candidate.entry, problem=context.problem.path,
                            cache_root=cache_root(context), digest=candidate.digest, options=options)
    try:
        run = run_ncu(ncu, program, workdir / "ncu", options.tool_timeout_s, workdir)
    except NcuError as exc:
        log.warning("ncu could not profile %s (%s); using the PyTorch profiler", candidate.label, exc)
        return None
    raw = run.csv[:MAX_RAW_CHARS]
    if run.dropped_metrics:
        raw = DROPPED_PREFIX + ", ".join(run.dropped_metrics) + "\n" + raw
    return ProfileResult(tool="ncu", kernels=parse_ncu_csv(run.csv), raw=raw, files=(run.report,))
