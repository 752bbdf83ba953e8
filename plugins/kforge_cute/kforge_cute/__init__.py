"""KForge backend for NVIDIA Hopper and Blackwell GPUs in the CuTe DSL: ``cute``.

The hook implementations below are thin: the core calls them only for the backend this plugin registers, and each
hands the work to a module with one job (availability, lowering, compile_stage, profile_stage). The device is the
cuda backend's (``kforge_cuda.device.CudaDevice``) and verification the core's generic one; the profile is Nsight
Compute through the cuda backend's runner, parser and summary. Importing this package imports neither the DSL nor
any candidate code.
"""

from __future__ import annotations

from typing import Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import (
    Availability, Backend, Candidate, CompileResult, Lowering, Problem, ProfileResult, ProfileSummary, StageContext,
)

from .backend import CUTE

__all__ = ["CUTE"]


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(CUTE)


@hookimpl
def kforge_backend_availability(backend: Backend) -> Availability | None:
    from .availability import cute_availability

    return cute_availability()


@hookimpl
def kforge_lower(backend: Backend, problem: Problem) -> Lowering | None:
    from .lowering import lower

    return lower(backend, problem)


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult | None:
    from .compile_stage import compile_candidate

    return compile_candidate(backend, candidate, context)


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    from .profile_stage import profile_candidate

    return profile_candidate(backend, candidate, context)


@hookimpl
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    from kforge_cuda.profile_stage import summarize_ncu

    return summarize_ncu(problem, profile)
