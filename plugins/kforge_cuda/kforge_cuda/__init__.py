"""KForge backends for NVIDIA GPUs: ``cuda`` (CUDA C++) and ``triton`` (Triton).

The hook implementations below are thin: the core calls them only for the two backends this plugin registers, and
each hands the work to a module with one job (availability, lowering, compile_stage, prebuild, sanitize,
profile_stage, summary).
Importing this package imports neither Triton nor any candidate code.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import (
    Availability, Backend, Candidate, CompileResult, Failure, Lowering, Problem, ProfileResult, ProfileSummary,
    StageContext, VerifyResult,
)

from .backends import BACKENDS, CUDA, TRITON

__all__ = ["CUDA", "TRITON"]


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    for backend in BACKENDS.values():
        register(backend)


@hookimpl
def kforge_backend_availability(backend: Backend, options: Any) -> Availability | None:
    from .availability import cuda_availability, triton_availability

    return cuda_availability(options) if backend.name == CUDA.name else triton_availability(options)


@hookimpl
def kforge_lower(backend: Backend, problem: Problem, options: Any) -> Lowering | None:
    from .lowering import lower

    return lower(backend, problem, options)


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult | None:
    from .compile_stage import compile_candidate

    return compile_candidate(backend, candidate, context)


@hookimpl
def kforge_prebuild(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult | None:
    if backend.name != CUDA.name:
        return None  # triton compiles on the first call: nothing to build ahead
    from .prebuild import prebuild_candidate

    return prebuild_candidate(backend, candidate, context)


@hookimpl(wrapper=True)
def kforge_verify(backend: Backend, candidate: Candidate, context: StageContext):
    """Wraps whichever implementation verifies (the core's generic one): with ``sanitize`` on, a failing
    candidate is rerun under compute-sanitizer memcheck and the report joins the verdict's message."""
    options = context.options if context.options is not None else backend.default_options()
    if not getattr(options, "sanitize", False):
        return (yield)
    from .sanitize import SANITIZED_FAILURES, run_memcheck
    from .warmup import context_poisoned

    try:
        result: VerifyResult | None = yield
    except Exception as exc:
        if not context_poisoned():
            raise  # the worker classifies it
        # A fault the candidate's kernels caused surfaced in verification's own code: still the candidate's.
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        result = VerifyResult(correct=False, failure=Failure.DEVICE_FAULT,
                              message=f"the device faulted while the candidate was verified: {first_line}")
    if result is not None and result.failure in SANITIZED_FAILURES:
        report = run_memcheck(backend, candidate, context, options)
        result = dataclasses.replace(result, message=f"{result.message}\n\n{report}".strip(),
                                     notes=(*result.notes, report.splitlines()[0]))
    return result


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    from .profile_stage import profile_candidate

    return profile_candidate(backend, candidate, context)


@hookimpl
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    from .profile_stage import summarize_ncu

    return summarize_ncu(problem, profile)
