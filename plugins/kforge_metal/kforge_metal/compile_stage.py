"""The compile stage of the ``metal`` backend, run inside the harness's worker.

Steps: check the syntax; import the candidate and (with ``first_forward``) build ``ModelNew`` and call it once
on the problem's inputs, while ``torch.mps.compile_shader`` is watched, so that shaders compiled at import, in
``__init__`` or on the first call are compiled here. What can go wrong:

* a shader that does not compile (``SyntaxError`` out of ``compile_shader``): ``Failure.COMPILE`` with the
  compiler's errors placed at the candidate's lines;
* a kernel name the library does not have, or a pipeline Metal cannot build: ``Failure.COMPILE``;
* a fault of the GPU in the first call: ``Failure.DEVICE_FAULT`` / ``Failure.OUT_OF_MEMORY``;
* any other exception of the first call is left for verification, which reports it with its trial.

The log of a success names every compiled kernel with the threadgroup size and memory the compiler allows it.
"""

from __future__ import annotations

import re
import time
from typing import Any

from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import NotBuilt, candidate_class_name, candidate_traceback, import_for_compile
from kforge_core.records import Backend, Candidate, CompileResult, Failure, StageContext

from .backend import metal_options
from .compile_log import render_compile_log
from .shader_recorder import ShaderRecorder, recording_shaders
from .shader_sources import ShaderLocator, ShaderString, shader_strings

_clock = time.perf_counter  # bound before any candidate is imported
_NO_FUNCTION = re.compile(r"Failed to create function state object for: (\S+)")
_NO_PIPELINE = "Failed to created pipeline state object"


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    return compile_candidate(backend, candidate, context)


def compile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    start = _clock()
    try:
        log = _build(backend, candidate, context)
    except NotBuilt as failed:
        return CompileResult(ok=False, log=failed.log, seconds=_clock() - start, failure=failed.failure)
    return CompileResult(ok=True, log=log, seconds=_clock() - start)


def _build(backend: Backend, candidate: Candidate, context: StageContext) -> str:
    strings = shader_strings(candidate)
    notes: list[str] = []
    with recording_shaders() as recorder:
        import_for_compile(candidate, context.workdir, lambda exc: _shader_failure(exc, recorder, strings) or NotBuilt(
            Failure.IMPORT, candidate_traceback(exc, context.workdir)), candidate_class_name(context))
        if metal_options(context.options).first_forward:
            _first_forward(backend, candidate, context, recorder, strings, notes)
    return "\n".join([*describe_kernels(recorder), *notes])


def _first_forward(backend: Backend, candidate: Candidate, context: StageContext, recorder: ShaderRecorder,
                   strings: list[ShaderString], notes: list[str]) -> None:
    from .first_forward import run_first_forward

    try:
        run_first_forward(backend, candidate, context)
    except Exception as exc:
        failed = _shader_failure(exc, recorder, strings)
        if failed is not None:
            raise failed from None
        fault = context.device.classify(exc) if context.device is not None else None
        if fault is not None:
            raise NotBuilt(fault, "the first call of ModelNew on the problem's inputs failed on the GPU:\n"
                              + candidate_traceback(exc, context.workdir)) from None
        notes.append(f"note: the first forward raised {type(exc).__name__}; verification reports it")


def _shader_failure(exc: BaseException, recorder: ShaderRecorder, strings: list[ShaderString]) -> NotBuilt | None:
    """A COMPILE failure when ``exc`` (or what caused it) is a shader's, with its log; else None."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, SyntaxError) and (recorder.failed is not None or "program_source:" in str(seen.msg)):
            return NotBuilt(Failure.COMPILE, _compiler_log(seen, recorder, strings))
        text = str(seen)
        missing = _NO_FUNCTION.search(text)
        if missing:
            kernels = ", ".join(recorder.kernel_names()) or "none"
            return NotBuilt(Failure.COMPILE, f"no kernel function named {missing.group(1)!r} in the compiled "
                                                f"library (its kernels: {kernels})")
        if _NO_PIPELINE in text:
            return NotBuilt(Failure.COMPILE, f"Metal could not build the kernel's pipeline: {text.strip()}")
        seen = seen.__cause__ or seen.__context__
    return None


def _compiler_log(error: SyntaxError, recorder: ShaderRecorder, strings: list[ShaderString]) -> str:
    """The compiler's errors placed in the candidate: through the source compile_shader was given when it was
    watched, else through the candidate's only shader string (a library compiled before the stage watched)."""
    failed = recorder.failed
    if failed is not None:
        return render_compile_log(failed.error, ShaderLocator(failed.source, strings))
    only = strings[0].value if len(strings) == 1 else ""
    return render_compile_log(str(error.msg), ShaderLocator(only, strings))


def describe_kernels(recorder: ShaderRecorder) -> list[str]:
    """One line per compiled kernel: the threadgroup size and threadgroup memory the compiled code allows."""
    lines = []
    for name in recorder.kernel_names():
        library = next(c.library for c in recorder.compiled if c.library is not None and name in dir(c.library))
        lines.append(f"kernel {name}: {_kernel_limits(getattr(library, name))}")
    if not recorder.compiled:
        lines.append("note: no shader was compiled during import and the first call (torch.mps.compile_shader "
                     "was not called)")
    return lines


def _kernel_limits(kernel: Any) -> str:
    parts = []
    for attribute, label in (("max_threads_per_threadgroup", "at most {} threads per threadgroup"),
                             ("thread_execution_width", "SIMD width {}"),
                             ("static_thread_group_memory_length", "{} bytes of threadgroup memory")):
        value = getattr(kernel, attribute, None)
        if value is not None:
            parts.append(label.format(value))
    return ", ".join(parts) or "compiled"
