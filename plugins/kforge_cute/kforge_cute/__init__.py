"""KForge backend for NVIDIA Hopper and Blackwell GPUs in the CuTe DSL: ``cute``.

The hook implementations below are thin: each answers only for the backend this plugin registers and hands the
work to a module with one job (availability, lowering, compile_stage, profile_stage). Verification is the core's
generic one; the profile is Nsight Compute through the cuda backend's runner, parser and summary. Importing this
package imports neither the DSL nor any candidate code.
"""

from __future__ import annotations

from typing import Any, Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import (
    Availability, Backend, Candidate, CompileResult, Lowering, Problem, ProfileResult, ProfileSummary, StageContext,
)

from .backend import CUTE

__all__ = ["CUTE"]


def _ours(backend: Backend) -> bool:
    return backend.name == CUTE.name


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(CUTE)


@hookimpl
def kforge_backend_availability(backend: Backend, options: Any) -> Availability | None:
    if not _ours(backend):
        return None
    from .availability import cute_availability

    return cute_availability()


@hookimpl
def kforge_lower(backend: Backend, problem: Problem) -> Lowering | None:
    if not _ours(backend):
        return None
    from .lowering import lower

    return lower(backend, problem)


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult | None:
    if not _ours(backend):
        return None
    from .compile_stage import compile_candidate

    return compile_candidate(backend, candidate, context)


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    if not _ours(backend):
        return None
    from .profile_stage import profile_candidate

    return profile_candidate(backend, candidate, context)


@hookimpl
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    if not _ours(backend) or profile.tool != "ncu":
        return None
    from kforge_cuda.problem_floor import problem_floor
    from kforge_cuda.profile_stage import dropped_metrics
    from kforge_cuda.summary import summarize_kernels

    floor = problem_floor(problem) if problem is not None else None
    return ProfileSummary(text=summarize_kernels(profile.kernels, dropped=dropped_metrics(profile), floor=floor))
