"""The profile stage of both NVIDIA backends: Nsight Compute on the candidate's forward, inside the worker.

When ncu is missing, switched off (``use_ncu = false``) or cannot profile (no permission for the GPU's counters),
this returns None and the core's generic PyTorch-profiler implementation answers instead.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from kforge_core.candidate_module import candidate_class_name
from kforge_core.records import Backend, Candidate, ProfileResult, StageContext

from .child import child_command
from .compile_stage import cache_root
from .ncu import NcuError, run_ncu
from .ncu_csv import parse_ncu_csv
from .options import NvidiaOptions
from .toolchain import find_tool

log = logging.getLogger("kforge.cuda")
DROPPED_PREFIX = "# metrics not collected: "
MAX_RAW_CHARS = 400_000


def profile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    options: NvidiaOptions = context.options if context.options is not None else backend.default_options()
    ncu = find_tool("ncu", options.ncu) if options.use_ncu else None
    if ncu is None:
        return None
    workdir = Path(context.workdir)
    program = child_command(workdir=workdir, entry=candidate.entry, problem=context.problem.path,
                            cache_root=cache_root(context), backend=backend.name, options=options, mode="profile",
                            candidate_class=candidate_class_name(context))
    try:
        run = run_ncu(ncu, program, workdir / "ncu", options.tool_timeout_s, workdir)
    except NcuError as exc:
        log.warning("ncu could not profile %s (%s); using the PyTorch profiler", candidate.label, exc)
        return None
    raw = run.csv[:MAX_RAW_CHARS]
    if run.dropped_metrics:
        raw = DROPPED_PREFIX + ", ".join(run.dropped_metrics) + "\n" + raw
    return ProfileResult(tool="ncu", kernels=parse_ncu_csv(run.csv), raw=raw, files=(run.report,))


def dropped_metrics(profile: ProfileResult) -> tuple[str, ...]:
    match = re.match(re.escape(DROPPED_PREFIX) + r"(.*)", profile.raw)
    return tuple(m.strip() for m in match.group(1).split(",")) if match else ()
