"""The compile stage every language on NVIDIA GPUs shares, run inside the harness's worker (``cuda``, ``triton``).

Steps: check the syntax; import the candidate while its builds go through the language's routes and ``load_inline``
is content-addressed (:mod:`.builds`); find ``ModelNew``; with ``warmup_forward`` run it once on the problem's
inputs so JIT builds happen here (the call is a call of forward on the stage's timer, each build in it a build, so a
forward that never returns times out at the call's limit). Build failures (nvcc, the PyTorch extension builder,
Triton) become ``Failure.COMPILE`` with a trimmed log. A device fault in the warm-up call (the CUDA context fails
every call after it) is reported as ``Failure.DEVICE_FAULT`` with the candidate's line; anything else it raises is
left for verification to classify.
"""

from __future__ import annotations

import dataclasses
import time
from types import ModuleType

from kforge_core.languages import triton as triton_language
from kforge_core.plugin_api import NotBuilt, candidate_class, candidate_class_name, import_for_compile, stage_device
from kforge_core.records import Backend, Candidate, CompileResult, Failure, StageContext

from .builds import BuildRoutes, Builds, building, cache_root, caught_build_flags
from .warmup import context_poisoned, describe_exception


def compile_candidate(backend: Backend, candidate: Candidate, context: StageContext,
                      routes: BuildRoutes) -> CompileResult:
    """Build ``candidate`` with the language's build ``routes``; the stage's verdict."""
    start = time.perf_counter()
    options = context.options if context.options is not None else backend.default_options()

    def result(ok: bool, log: str = "", failure: Failure | None = None, cached: bool = False) -> CompileResult:
        return CompileResult(ok=ok, log=log, seconds=time.perf_counter() - start, cached=cached, failure=failure)

    notes: list[str] = []
    with building(routes, options, cache_root(context), context.timer) as builds:
        def import_failure(exc: Exception) -> NotBuilt:
            build_log = builds.failure_log(exc)
            if build_log is not None:
                return NotBuilt(Failure.COMPILE, build_log)
            return NotBuilt(Failure.IMPORT, describe_exception(exc, context.workdir))

        name = candidate_class_name(context)
        try:
            module = import_for_compile(candidate, context.workdir, import_failure, name)
        except NotBuilt as failed:
            return result(False, failed.log, failed.failure)
        note = candidate_class(module, name).note
        if note:
            notes.append(f"note: {note}")
        if options.warmup_forward:
            warm_failure = _warm_up(backend, candidate, module, context, builds, notes, routes)
            if warm_failure is not None:
                return result(False, warm_failure[1], warm_failure[0])
    if builds.failures:  # the candidate caught load_cuda's build error and went on: it still did not build
        return result(False, builds.failures[0].log, Failure.COMPILE)
    log = "\n".join([o.log for o in builds.outcomes if o.log] + notes)
    cached = bool(builds.outcomes) and all(o.cached for o in builds.outcomes)
    # load_inline failed and the candidate caught PyTorch's error and went on (its fallback), as under PyTorch
    return dataclasses.replace(result(True, log, cached=cached), flags=caught_build_flags(builds))


def _warm_up(backend: Backend, candidate: Candidate, module: ModuleType, context: StageContext,
             builds: Builds, notes: list[str], routes: BuildRoutes) -> tuple[Failure, str] | None:
    """None when the first forward ran, or failed in a way verification reports with its trial; else the failure
    and its log: a build that failed (a JIT), or a device fault. A fault poisons the CUDA context, so it is
    reported here, with the candidate's line that faulted (and the memcheck report when ``sanitize`` is on)."""
    try:
        device = stage_device(backend, context)
        triton_language.run_forward(module, context.problem.path, device, class_name=candidate_class_name(context),
                                    timer=context.timer)
    except Exception as exc:
        build_log = builds.failure_log(exc)
        if build_log is not None:
            return Failure.COMPILE, build_log
        if context_poisoned():
            return Failure.DEVICE_FAULT, _fault_log(backend, candidate, context, exc, routes)
        notes.append(f"note: the first forward raised {type(exc).__name__}; verification reports it")
    return None


def _fault_log(backend: Backend, candidate: Candidate, context: StageContext, exc: BaseException,
               routes: BuildRoutes) -> str:
    log = "the first call of ModelNew on the problem's inputs faulted:\n" + describe_exception(exc, context.workdir)
    options = context.options if context.options is not None else backend.default_options()
    if options.sanitize:
        from .sanitize import run_memcheck

        log += "\n\n" + run_memcheck(backend, candidate, context, options, routes)
    return log
