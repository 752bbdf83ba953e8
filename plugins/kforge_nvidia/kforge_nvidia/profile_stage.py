"""Nsight Compute on the candidate's forward, inside the worker, and the analyst's summary of what it measured.

When ncu is missing, switched off (``use_ncu = false``) or cannot profile (no permission for the GPU's counters),
the profile stage returns None and the core's generic PyTorch-profiler implementation answers instead.
:func:`profile_candidate` profiles :mod:`.child` built with a language's build routes (``cuda``, ``triton``);
:func:`ncu_profile` any child program that calls a candidate's forward (``cute`` has its own);
:func:`kforge_summarize_profile` serves every backend on an NVIDIA GPU.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import candidate_class_name
from kforge_core.records import Backend, Candidate, Problem, ProfileResult, ProfileSummary, StageContext

from .builds import BuildRoutes, cache_root
from .child import child_command
from .ncu import NcuError, run_ncu
from .ncu_csv import parse_ncu_csv
from .options import NvidiaOptions
from .profiler_turns import profiler_turn
from .toolchain import find_tool

log = logging.getLogger("kforge.nvidia")
DROPPED_PREFIX = "# metrics not collected: "
MAX_RAW_CHARS = 400_000


def profile_candidate(backend: Backend, candidate: Candidate, context: StageContext,
                      routes: BuildRoutes) -> ProfileResult | None:
    """Nsight Compute's profile of the candidate built with the language's ``routes``, or None (see above)."""
    options: NvidiaOptions = context.options if context.options is not None else backend.default_options()
    ncu = find_tool("ncu", options.ncu) if options.use_ncu else None
    if ncu is None:
        return None
    workdir = Path(context.workdir)
    program = child_command(workdir=workdir, entry=candidate.entry, problem=context.problem.path,
                            cache_root=cache_root(context), routes=routes, options=options, mode="profile",
                            candidate_class=candidate_class_name(context))
    return ncu_profile(ncu, program, workdir, options.tool_timeout_s, candidate.label, cache_root(context))


def ncu_profile(ncu: str, program: list[str], workdir: Path, timeout_s: float, label: str,
                lock_dir: Path) -> ProfileResult | None:
    """Nsight Compute's profile of ``program`` (a child process that calls one candidate's forward between
    ``cudaProfilerStart`` and ``cudaProfilerStop``), or None, with a warning, when ncu cannot profile it. Profiles
    on this machine take turns (``profiler_turns``, through a lock file in ``lock_dir``, the build cache)."""
    try:
        with profiler_turn(lock_dir, timeout_s):
            run = run_ncu(ncu, program, workdir / "ncu", timeout_s, workdir)
    except NcuError as exc:
        log.warning("ncu could not profile %s (%s); using the PyTorch profiler", label, exc)
        return None
    raw = run.csv[:MAX_RAW_CHARS]
    if run.dropped_metrics:
        raw = DROPPED_PREFIX + ", ".join(run.dropped_metrics) + "\n" + raw
    return ProfileResult(tool="ncu", kernels=parse_ncu_csv(run.csv), raw=raw, files=(run.report,))


def summarize_ncu(problem: Problem | None, profile: ProfileResult) -> ProfileSummary | None:
    """The analyst's summary of an Nsight Compute profile, against the problem's floor; None for another tool's."""
    if profile.tool != "ncu":
        return None
    from kforge_core.plugin_api import problem_floor

    from .ncu_summary import summarize_kernels

    floor = problem_floor(problem) if problem is not None else None
    return ProfileSummary(text=summarize_kernels(profile.kernels, dropped=dropped_metrics(profile), floor=floor))


@hookimpl
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    return summarize_ncu(problem, profile)


def dropped_metrics(profile: ProfileResult) -> tuple[str, ...]:
    match = re.match(re.escape(DROPPED_PREFIX) + r"(.*)", profile.raw)
    return tuple(m.strip() for m in match.group(1).split(",")) if match else ()
