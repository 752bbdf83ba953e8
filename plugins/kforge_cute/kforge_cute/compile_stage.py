"""The cute backend's compile stage, run inside the harness's worker.

Steps: route ``cute.compile`` through the compile cache (:mod:`compile_cache`); the core's preamble (syntax, import,
``ModelNew``); with ``warmup_forward`` (the default) one call of ``ModelNew`` on the problem's inputs, since
candidates compile in their first forward. A ``cute.compile`` that raised, or a DSL error out of a ``@cute.jit``
function called directly, is ``Failure.COMPILE`` with the DSL's message trimmed to the candidate's lines
(:mod:`dsl_errors`). A device fault in that first call is ``Failure.DEVICE_FAULT``; anything else it raises is left
for verification to report with its trial. The log lists every ``cute.compile``: compiled, or found in a cache.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kforge_core.hookspecs import hookimpl
from kforge_core.languages.triton import run_forward
from kforge_core.plugin_api import NotBuilt, candidate_class_name, import_for_compile, stage_device
from kforge_core.records import Backend, Candidate, CompileResult, Failure, StageContext
from kforge_nvidia.warmup import context_poisoned, describe_exception

from .compile_cache import CompileSession, install
from .dsl_errors import describe_dsl_error, error_chain, is_dsl_error
from .options import CuteOptions


def cache_root(context: StageContext) -> Path:
    return Path(context.cache_dir or Path.home() / ".cache" / "kforge") / "cute"


def start_session(candidate_digest: str, workdir: Path, root: Path, options: CuteOptions) -> CompileSession:
    """Prepare this process for one candidate: the DSL keeps what it caches itself (direct ``@cute.jit`` calls)
    under ``root``, and ``cute.compile`` goes through the compile cache."""
    os.environ.setdefault("CUTE_DSL_CACHE_DIR", str(root / "dsl"))  # read when the DSL is first imported
    return install(source=candidate_digest, workdir=workdir, directory=root / "kernels" if options.disk_cache
                   else None)


def _failure_log(session: CompileSession, exc: BaseException | None, workdir: Path) -> str | None:
    """The trimmed log when the candidate failed to compile, else None."""
    if session.failures:
        first = session.failures[0]
        located = error_chain(first.located, workdir) if first.located is not None else ()
        return describe_dsl_error(error_chain(first.error, workdir), workdir, located)
    if exc is not None and is_dsl_error(error_chain(exc, workdir)):
        return describe_dsl_error(error_chain(exc, workdir), workdir)
    return None


def compile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    start = time.perf_counter()
    options: CuteOptions = context.options if context.options is not None else backend.default_options()

    def result(ok: bool, log: str = "", failure: Failure | None = None, cached: bool = False) -> CompileResult:
        return CompileResult(ok=ok, log=log, seconds=time.perf_counter() - start, cached=cached, failure=failure)

    workdir = Path(context.workdir)
    try:
        session = start_session(candidate.digest, workdir, cache_root(context), options)
    except ImportError as exc:
        return result(False, f"the CuTe DSL cannot be imported in the worker: {exc}", Failure.IMPORT)

    def import_failure(exc: Exception) -> NotBuilt:
        log = _failure_log(session, exc, workdir)
        if log is not None:
            return NotBuilt(Failure.COMPILE, log)
        return NotBuilt(Failure.IMPORT, describe_exception(exc, workdir))

    try:
        module = import_for_compile(candidate, workdir, import_failure, candidate_class_name(context))
    except NotBuilt as failed:
        return result(False, failed.log, failed.failure)
    notes: list[str] = []
    if options.warmup_forward:
        try:
            # not marked as a call on context.timer: the DSL compiles direct @cute.jit calls inside it, unmarked
            run_forward(module, context.problem.path, stage_device(backend, context),
                        class_name=candidate_class_name(context))
        except Exception as exc:
            log = _failure_log(session, exc, workdir)
            if log is not None:
                return result(False, log, Failure.COMPILE)
            if context_poisoned():
                return result(False, "the first call of ModelNew on the problem's inputs faulted:\n"
                              + describe_exception(exc, workdir), Failure.DEVICE_FAULT)
            notes.append(f"note: the first forward raised {type(exc).__name__}; verification reports it")
    for failure in session.failures:  # the candidate caught it and went on, with another configuration
        first_line = describe_dsl_error(error_chain(failure.error, workdir), workdir).splitlines()[0][:200]
        notes.append(f"note: cute.compile {failure.function} failed and the candidate went on: {first_line}")
    log = "\n".join([event.line() for event in session.events] + notes)
    cached = bool(session.events) and all(event.cached for event in session.events)
    return result(True, log, cached=cached)


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    return compile_candidate(backend, candidate, context)
