"""Generic stage implementations that serve any backend whose candidates are Python modules on a torch device.

They are registered ``trylast``, so a plugin's own implementation for its backend answers first.
"""

from __future__ import annotations

import subprocess
import time
import traceback

from ..candidate_module import NotBuilt, candidate_class, candidate_class_name, import_for_compile
from ..hookspecs import hookimpl
from ..records import (
    Backend, Candidate, CompileResult, Failure, Problem, ProfileResult, ProfileSummary, StageContext, VerifyResult,
)
from ..harness.worker.limit_hits import limit_reached
from .build_log import trim_build_log

# Bound at import, before any candidate is imported: a candidate that replaces time.perf_counter cannot
# change what this module measures.
_clock = time.perf_counter


def _is_build_failure(exc: BaseException) -> bool:
    """A JIT build that failed while the module imported (``torch.utils.cpp_extension.load_inline`` and kin)."""
    text = str(exc)
    return isinstance(exc, subprocess.CalledProcessError) or "Error building extension" in text or (
        isinstance(exc, RuntimeError) and ("ninja" in text.lower() or "nvcc" in text.lower()))


@hookimpl(trylast=True)
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    """Check the syntax of every Python file, import the entry module (building what it builds when it is
    imported, as KernelBench's ``load_inline`` candidates do) and find ``ModelNew`` (``harness.candidate_class``)."""
    start = _clock()
    name = candidate_class_name(context)
    try:
        module = import_for_compile(candidate, context.workdir, _import_failure, name)
    except NotBuilt as failed:
        return CompileResult(ok=False, log=failed.log, seconds=_clock() - start, failure=failed.failure)
    return CompileResult(ok=True, log=candidate_class(module, name).note, seconds=_clock() - start)


def _import_failure(exc: Exception) -> NotBuilt:
    reached = limit_reached(exc)  # a build or an import that met the worker's limits is neither's fault
    if _is_build_failure(exc):
        return NotBuilt(Failure.RESOURCE_LIMIT if reached else Failure.COMPILE,
                        trim_build_log(str(exc)) + (f"\nresource_limit: {reached}" if reached else ""))
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return NotBuilt(Failure.RESOURCE_LIMIT, f"{text}\nresource_limit: {reached}") if reached \
        else NotBuilt(Failure.IMPORT, text)


@hookimpl(trylast=True)
def kforge_verify(backend: Backend, candidate: Candidate, context: StageContext) -> VerifyResult:
    """Seeded correctness trials on ``backend.device`` with the cheat checks (see ``torch_verify``)."""
    from .torch_verify import verify_with_torch

    return verify_with_torch(backend, candidate, context)


@hookimpl(trylast=True)
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult:
    """The PyTorch profiler around a few calls of ``ModelNew.forward`` (see ``torch_profile``)."""
    from .torch_profile import profile_with_torch

    return profile_with_torch(backend, candidate, context)


@hookimpl(trylast=True)
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary:
    """Kernels ranked by time, PyTorch operators that ran, bandwidth against the minimum traffic."""
    from .torch_profile_summary import summarize

    return summarize(problem, profile)
