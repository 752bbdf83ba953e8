"""The cute backend's profile stage: Nsight Compute on the candidate's forward, inside the worker, through the
NVIDIA layer's runner and CSV parser (the summary is the NVIDIA layer's too); the child it profiles is this
plugin's, so that the candidate's kernels come from the compile cache.

When ncu is missing, switched off (``use_ncu = false``) or cannot profile (no permission for the GPU's counters),
this returns None and the core's generic PyTorch-profiler implementation answers instead.
"""

from __future__ import annotations

from pathlib import Path

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, Candidate, ProfileResult, StageContext
from kforge_nvidia.builds import cache_root as nvidia_cache_root
from kforge_nvidia.profile_stage import ncu_profile
from kforge_nvidia.toolchain import find_tool

from .child import child_command
from .compile_stage import cache_root
from .options import CuteOptions


def profile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    options: CuteOptions = context.options if context.options is not None else backend.default_options()
    ncu = find_tool("ncu", options.ncu) if options.use_ncu else None
    if ncu is None:
        return None
    workdir = Path(context.workdir)
    program = child_command(workdir=workdir, entry=candidate.entry, problem=context.problem.path,
                            cache_root=cache_root(context), digest=candidate.digest, options=options)
    # profiles take turns with every NVIDIA backend's, through the lock in the NVIDIA build cache
    return ncu_profile(ncu, program, workdir, options.tool_timeout_s, candidate.label, nvidia_cache_root(context))


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    return profile_candidate(backend, candidate, context)
