"""The compile stage of both NVIDIA backends, run inside the harness's worker.

Steps: check the syntax; import the candidate while ``load_cuda`` builds through the content-hash cache and
``load_inline`` is content-addressed; find ``ModelNew``; with ``warmup_forward`` (triton's default) run it once on
the problem's inputs so JIT builds happen here (the call is a call of forward on the stage's timer, each Triton
compilation in it a build, so a forward that never returns times out at the call's limit). Build failures (nvcc, the PyTorch extension builder, Triton) become ``Failure.COMPILE`` with a trimmed log.
A device fault in the warm-up call (the CUDA context fails every call after it) is reported as
``Failure.DEVICE_FAULT`` with the candidate's line; anything else it raises is left for verification to classify.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Iterator

from kforge_core.candidate_module import NotBuilt, candidate_class, candidate_class_name, import_for_compile
from kforge_core.devices import make_device
from kforge_core.languages import triton as triton_language
from kforge_core.harness.flags import BUILD_ERROR_CAUGHT
from kforge_core.records import Backend, Candidate, CompileResult, Failure, Flag, StageContext
from kforge_core.stage_timer import StageTimer
from kforge_core.tracebacks import innermost_candidate_line

from . import runtime
from .build_cache import BuildConfig, BuildOutcome, CudaBuildError
from .device_facts import driver_capability
from .inline_cache import cached_load_inline
from .options import CudaOptions, NvidiaOptions, TritonOptions
from .toolchain import find_tool, nvcc_version
from .warmup import context_poisoned


class _Builds:
    """What was built (or failed to build) while one candidate was imported and warmed up."""

    def __init__(self) -> None:
        self.outcomes: list[BuildOutcome] = []
        self.failures: list[CudaBuildError] = []
        self.inline_failures: list[CudaBuildError] = []  # load_inline's: the candidate may catch them, as in PyTorch

    def record(self, item: BuildOutcome | CudaBuildError) -> None:
        (self.failures if isinstance(item, CudaBuildError) else self.outcomes).append(item)

    def record_inline(self, item: BuildOutcome | CudaBuildError) -> None:
        (self.inline_failures if isinstance(item, CudaBuildError) else self.outcomes).append(item)


def cache_root(context: StageContext) -> Path:
    return Path(context.cache_dir or Path.home() / ".cache" / "kforge") / "nvidia"


def build_config(options: CudaOptions, root: Path) -> BuildConfig:
    """How ``load_cuda`` builds: the options' flags, for the options' arch or else the device's (read from the
    driver, so the process that builds ahead does not import PyTorch)."""
    nvcc = find_tool("nvcc", options.nvcc) or "nvcc"
    arch = options.arch
    if not arch:
        capability = driver_capability()
        if capability is None:
            import torch

            capability = torch.cuda.get_device_capability()
        arch = f"sm_{capability[0]}{capability[1]}"
    return BuildConfig(nvcc=nvcc, arch=arch, cache_dir=root / "nvcc", opt_level=options.opt_level,
                       extra_flags=options.extra_nvcc_flags, options_hash=options.hash(),
                       timeout_s=options.build_timeout_s)


@contextlib.contextmanager
def building(options: NvidiaOptions, root: Path, timer: StageTimer | None = None) -> Iterator[_Builds]:
    """Route every build the candidate starts through the caches under ``root``, and record them (a
    ``load_inline`` is a build on ``timer``)."""
    builds = _Builds()
    triton_cache = triton_language.use_cache_dir(root / "triton")
    triton_before = triton_language.cache_entries(triton_cache)
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        nvcc = find_tool("nvcc", getattr(options, "nvcc", ""))
        toolchain = nvcc_version(nvcc) if nvcc else "no nvcc"
        if isinstance(options, CudaOptions):
            stack.enter_context(runtime.build_session(build_config(options, root), builds.record))
        stack.enter_context(cached_load_inline(root / "inline", toolchain, builds.record_inline, timer))
        yield builds
    if isinstance(options, TritonOptions) and "triton" in sys.modules and options.warmup_forward:
        # Triton compiled on the first call, or found every kernel in its cache
        compiled = bool(triton_language.cache_entries(triton_cache) - triton_before)
        builds.record(BuildOutcome(triton_cache, "triton", not compiled, time.perf_counter() - start))


def compile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    start = time.perf_counter()
    options = context.options if context.options is not None else backend.default_options()

    def result(ok: bool, log: str = "", failure: Failure | None = None, cached: bool = False) -> CompileResult:
        return CompileResult(ok=ok, log=log, seconds=time.perf_counter() - start, cached=cached, failure=failure)

    notes: list[str] = []
    with building(options, cache_root(context), context.timer) as builds:
        def import_failure(exc: Exception) -> NotBuilt:
            build_log = _build_failure_log(exc, builds)
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
            warm_failure = _warm_up(backend, candidate, module, context, builds, notes)
            if warm_failure is not None:
                return result(False, warm_failure[1], warm_failure[0])
    if builds.failures:  # the candidate caught load_cuda's build error and went on: it still did not build
        return result(False, builds.failures[0].log, Failure.COMPILE)
    log = "\n".join([o.log for o in builds.outcomes if o.log] + notes)
    cached = bool(builds.outcomes) and all(o.cached for o in builds.outcomes)
    # load_inline failed and the candidate caught PyTorch's error and went on (its fallback), as under PyTorch
    caught = tuple(Flag(BUILD_ERROR_CAUGHT, f"building {f.name!r} failed{' (from the build cache)' if f.cached else ''}"
                                            f" and the candidate went on without it:\n{f.log}", blocking=False)
                   for f in builds.inline_failures)
    return dataclasses.replace(result(True, log, cached=cached), flags=caught)


def _warm_up(backend: Backend, candidate: Candidate, module: ModuleType, context: StageContext,
             builds: _Builds, notes: list[str]) -> tuple[Failure, str] | None:
    """None when the first forward ran, or failed in a way verification reports with its trial; else the failure
    and its log: a build that failed (a JIT), or a device fault. A fault poisons the CUDA context, so it is
    reported here, with the candidate's line that faulted (and the memcheck report when ``sanitize`` is on)."""
    try:
        device = context.device if context.device is not None else make_device(backend)
        triton_language.run_forward(module, context.problem.path, device, class_name=candidate_class_name(context),
                                    timer=context.timer)
    except Exception as exc:
        build_log = _build_failure_log(exc, builds)
        if build_log is not None:
            return Failure.COMPILE, build_log
        if context_poisoned():
            return Failure.DEVICE_FAULT, _fault_log(backend, candidate, context, exc)
        notes.append(f"note: the first forward raised {type(exc).__name__}; verification reports it")
    return None


def _fault_log(backend: Backend, candidate: Candidate, context: StageContext, exc: BaseException) -> str:
    log = "the first call of ModelNew on the problem's inputs faulted:\n" + describe_exception(exc, context.workdir)
    options = context.options if context.options is not None else backend.default_options()
    if options.sanitize:
        from .sanitize import run_memcheck

        log += "\n\n" + run_memcheck(backend, candidate, context, options)
    return log


def _build_failure_log(exc: BaseException, builds: _Builds) -> str | None:
    """The trimmed log when ``exc`` (or what caused it) is a build failure; None for other errors."""
    if builds.failures or builds.inline_failures:
        return (builds.failures or builds.inline_failures)[0].log
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, CudaBuildError):
            return seen.log
        if triton_language.is_build_error(seen):
            return triton_language.trim_error(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return None


def describe_exception(exc: BaseException, workdir: Path) -> str:
    """The exception and the innermost line of the candidate's own code that led to it."""
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    own = innermost_candidate_line(exc, workdir)
    if own is None:
        return message
    return f"{Path(own.file).name}:{own.line} in {own.function}: {own.text}\n{message}"
