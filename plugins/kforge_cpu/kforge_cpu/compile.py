"""``kforge_compile`` for the ``cpu`` backend, run in the isolated worker.

Numba compiles lazily, on a kernel's first call, so building a candidate means importing it, instantiating
``ModelNew`` with the problem's init inputs and running one forward on the problem's inputs. What can go wrong
there is classified as follows:

* a syntax error, or an exception while importing the module: ``Failure.SYNTAX`` / ``Failure.IMPORT``;
* an error out of a Numba compilation (typing, lowering, an unsupported feature, a library Numba needs), whether
  at import (eager signatures), in the constructor or in the first forward: ``Failure.COMPILE``, with Numba's
  message trimmed to the error kind, the candidate's lines and the types;
* any other exception in the constructor or the first forward is the candidate's own runtime error:
  ``Failure.RUNTIME`` (``Failure.OUT_OF_MEMORY`` for a ``MemoryError``, ``Failure.RESOURCE_LIMIT`` for one of the
  worker's limits reached) with the candidate's line, reported here so that verification does not run a candidate
  that cannot run once.

``seconds`` is the wall time of all of it, JIT included; the harness times the candidate afterwards, when every
kernel is compiled. The log of a success lists each JIT compilation and its time.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import (
    CandidateClass, NotBuilt, candidate_class, candidate_class_name, import_for_compile, limit_reached,
)
from kforge_core.records import Backend, Candidate, CompileResult, Failure, StageContext

from .backend import CpuOptions, cpu_options
from .clock import clock
from .kernels import kernel_name, numba_kernels, uses_fastmath
from .numba_errors import describe_compile_error, describe_exception, is_compile_error
from .problem_instance import private_rng, problem_module




@dataclass(frozen=True)
class Built:
    log: str
    cached: bool


def forget_cached_source(candidate: Candidate, workdir: Path) -> None:
    """Drop the candidate's file names from ``linecache``. Numba quotes source lines through it, keyed by the
    path relative to the working directory: in a warm worker, another candidate's ``model_new.py`` would
    otherwise be quoted in this one's error messages."""
    for f in candidate.files:
        for name in (f.name, str(workdir / f.name), str((workdir / f.name).resolve())):
            linecache.cache.pop(name, None)


def apply_threads(options: CpuOptions) -> int:
    """Set Numba's thread count for this worker (verification and timing run in the same process)."""
    import numba

    threads = min(options.threads or numba.config.NUMBA_NUM_THREADS, numba.config.NUMBA_NUM_THREADS)
    numba.set_num_threads(threads)
    return threads


def _classify(exc: Exception, workdir: Path, jit: Any, during: str, otherwise: Failure) -> NotBuilt:
    if is_compile_error(exc):
        compiling = jit.last.describe() if jit.last is not None else None
        return NotBuilt(Failure.COMPILE, describe_compile_error(exc, workdir, compiling))
    reached = limit_reached(exc)  # its scratch space full, no process or thread left: the worker's limits
    failure = Failure.OUT_OF_MEMORY if isinstance(exc, MemoryError) else Failure.RESOURCE_LIMIT if reached \
        else otherwise
    described = describe_exception(exc, workdir, during)
    return NotBuilt(failure, f"{described}\nresource_limit: {reached}" if reached else described)


def _import(candidate: Candidate, context: StageContext, jit: Any) -> tuple[ModuleType, CandidateClass]:
    during, workdir, name = f"importing {candidate.entry}", context.workdir, candidate_class_name(context)
    module = import_for_compile(candidate, workdir, lambda exc: _classify(exc, workdir, jit, during, Failure.IMPORT),
                                name)
    return module, candidate_class(module, name)


def _first_forward(found: CandidateClass, context: StageContext, jit: Any) -> float:
    """Instantiate the candidate's class and run it once on the problem's inputs; returns the forward's seconds.
    The call is marked as a call of forward and each Numba compilation in it as a build (``context.timer``), so a
    forward that never returns times out at the call's limit while JIT time does not count against it."""
    import torch

    problem = problem_module(context.problem)
    with private_rng():
        init_inputs, inputs = problem.get_init_inputs(), problem.get_inputs()
        construct = f"{found.cls.__name__}(*get_init_inputs())"
        try:
            with context.timer.building(construct):
                model = found.cls(*init_inputs)
        except Exception as exc:
            raise _classify(exc, context.workdir, jit, construct, Failure.RUNTIME) from None
        start = clock()
        try:
            with torch.no_grad(), context.timer.calling("the first forward (Numba compiles its kernels)"):
                model(*inputs)
        except Exception as exc:
            raise _classify(exc, context.workdir, jit, "the first forward", Failure.RUNTIME) from None
        return clock() - start


def _check_fastmath(kernels: dict[str, Any], options: CpuOptions) -> None:
    offending = sorted(kernel_name(k) for k in kernels.values() if uses_fastmath(k))
    if offending and not options.fastmath:
        raise NotBuilt(
            Failure.COMPILE,
            f"fastmath is disabled for the cpu backend ([backends.cpu] fastmath = false), but "
            f"{', '.join(offending)} use(s) fastmath=True: remove it",
        )


def build(candidate: Candidate, context: StageContext, options: CpuOptions) -> Built:
    from .jit_events import recording_jit

    threads = apply_threads(options)
    forget_cached_source(candidate, context.workdir)
    with recording_jit(context.timer) as jit:
        module, found = _import(candidate, context, jit)
        forward_seconds = _first_forward(found, context, jit)
    kernels = numba_kernels(module)
    _check_fastmath(kernels, options)
    lines = [f"Numba compiled {len(jit.compiles)} signature(s) in {jit.seconds:.2f} s; first forward "
             f"{forward_seconds:.2f} s (JIT included); {threads} Numba threads"]
    lines += [f"  {c.describe()}: {c.seconds:.2f} s" for c in jit.compiles]
    if found.note:
        lines.append(f"note: {found.note}")
    if not kernels:
        lines.append(f"note: {candidate.entry} has no module-level Numba kernel (@njit function)")
    return Built("\n".join(lines), cached=bool(kernels) and not jit.compiles)


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult | None:
    start = clock()
    try:
        built = build(candidate, context, cpu_options(context.options))
    except NotBuilt as failed:
        return CompileResult(ok=False, log=failed.log, seconds=clock() - start, failure=failed.failure)
    return CompileResult(ok=True, log=built.log, seconds=clock() - start, cached=built.cached)
