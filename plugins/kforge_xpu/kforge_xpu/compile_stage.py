"""The ``xpu`` compile stage, in the worker: import the candidate, find ``ModelNew`` and, with
``warmup_forward`` (the default), call it once on the problem's inputs on the device, so that Triton's JIT and
Intel's compilers behind it (SPIR-V, then IGC through ``ocloc`` or the driver) build every kernel here.

A build that fails (Triton's own errors, Intel's ``IntelGPUError``, a Level Zero module build failure) is
``compile_error`` with its log trimmed for the model; a device fault on that first call is ``device_fault`` with
the candidate's line; anything else it raises is left for verification to report with its trial. Triton's cache
lives under the KForge cache directory, so a kernel built before loads in milliseconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType

from kforge_core.hookspecs import hookimpl
from kforge_core.languages import triton as triton_language
from kforge_core.plugin_api import (
    NotBuilt, candidate_class_name, candidate_traceback, exception_line, import_for_compile, stage_device,
)
from kforge_core.records import Backend, Candidate, CompileResult, Failure, StageContext

from .backend import xpu_options
from .intel_errors import build_failure, build_log


def triton_cache(context: StageContext) -> Path:
    """Where Triton keeps what it built: ``TRITON_CACHE_DIR`` when set, else under the KForge cache directory."""
    root = Path(context.cache_dir or Path.home() / ".cache" / "kforge")
    return triton_language.use_cache_dir(root / "xpu" / "triton")


def compile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    start = time.perf_counter()

    def result(failure: Failure | None = None, log: str = "", cached: bool = False) -> CompileResult:
        return CompileResult(ok=failure is None, log=log, seconds=time.perf_counter() - start, cached=cached,
                             failure=failure)

    def import_failure(exc: Exception) -> NotBuilt:
        built = build_failure(exc)
        if built is not None:
            return NotBuilt(Failure.COMPILE, build_log(built))
        return NotBuilt(Failure.IMPORT, candidate_traceback(exc, Path(context.workdir)))

    cache = triton_cache(context)
    before = triton_language.cache_entries(cache)
    try:
        module = import_for_compile(candidate, Path(context.workdir), import_failure, candidate_class_name(context))
    except NotBuilt as failed:
        return result(failed.failure, failed.log)
    if not xpu_options(context.options).warmup_forward:
        return result()
    failure, log = warm_up(backend, module, context)
    if failure is not None:
        return result(failure, log)
    built_now = bool(triton_language.cache_entries(cache) - before)
    cache_line = "triton: built the kernels" if built_now else "triton: every kernel came from the cache"
    return result(log="\n".join(filter(None, [log, cache_line])), cached=not built_now)


def warm_up(backend: Backend, module: ModuleType, context: StageContext) -> tuple[Failure | None, str]:
    """The first forward on the device. A build that failed, or a device fault (the device cannot be trusted
    after one), is the stage's failure, with its log; any other error is the candidate's to be reported by
    verification with its trial, and only noted here."""
    device = stage_device(backend, context)
    try:
        triton_language.run_forward(module, context.problem.path, device, class_name=candidate_class_name(context),
                                    timer=context.timer)
    except Exception as exc:
        built = build_failure(exc)
        if built is not None:
            return Failure.COMPILE, build_log(built)
        if device.classify(exc) is Failure.DEVICE_FAULT:
            return Failure.DEVICE_FAULT, ("the first call of ModelNew on the problem's inputs faulted:\n"
                                          + candidate_traceback(exc, Path(context.workdir)))
        return None, f"note: the first forward raised {exception_line(exc)}; verification reports it"
    return None, ""


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    return compile_candidate(backend, candidate, context)
