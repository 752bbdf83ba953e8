"""Generic stage implementations that serve any backend whose candidates are Python modules on a torch device.

They are registered ``trylast``, so a plugin's own implementation for its backend answers first.
"""

from __future__ import annotations

import time
import traceback

from ..candidate_module import import_candidate
from ..hookspecs import hookimpl
from ..records import Backend, Candidate, CompileResult, Failure, StageContext


def _syntax_error(candidate: Candidate) -> str | None:
    for f in candidate.files:
        if not f.name.endswith(".py"):
            continue
        try:
            compile(f.text, f.name, "exec")
        except SyntaxError as exc:
            line = (exc.text or "").rstrip()
            return f"{f.name}:{exc.lineno}: SyntaxError: {exc.msg}\n    {line}"
    return None


@hookimpl(trylast=True)
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    """Check the syntax of every Python file, import the entry module and find ``ModelNew``."""
    start = time.perf_counter()
    error = _syntax_error(candidate)
    if error is not None:
        return CompileResult(ok=False, log=error, seconds=time.perf_counter() - start, failure=Failure.SYNTAX)
    try:
        module = import_candidate(candidate, context.workdir)
    except Exception as exc:
        log = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return CompileResult(ok=False, log=log, seconds=time.perf_counter() - start, failure=Failure.IMPORT)
    if not isinstance(getattr(module, "ModelNew", None), type):
        return CompileResult(
            ok=False,
            log=f"{candidate.entry} defines no class ModelNew",
            seconds=time.perf_counter() - start,
            failure=Failure.NO_MODEL_NEW,
        )
    return CompileResult(ok=True, seconds=time.perf_counter() - start)
