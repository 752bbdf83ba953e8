"""Building a ``cuda`` candidate ahead, from its sources alone (the ``kforge_prebuild`` hook).

The candidate is read, never imported: every ``load_cuda(...)`` call whose source is a string literal, a
module-level name bound to one, or ``Path("x.cu")`` naming one of the candidate's files, is built through the same
content-hash cache that ``load_cuda`` uses when the candidate is imported; the compile stage then finds each
library built. ``load_inline`` calls with static arguments are built into the compile stage's ``load_inline`` cache
(:mod:`kforge_cuda.inline_prebuild`). Sources made at run time are built by the compile stage as before.
``triton`` has nothing to build ahead: Triton compiles on the first call.
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass

from kforge_core.hookspecs import hookimpl
from kforge_core.languages.cuda_cpp.build_cache import CudaBuildError, build_library
from kforge_core.plugin_api import parsed_python_files
from kforge_core.records import Backend, Candidate, CompileResult, Failure, StageContext
from kforge_nvidia.builds import cache_root

from kforge_nvidia.toolchain import find_tool, nvcc_version

from .build_config import build_config
from .inline_prebuild import build_inline, find_inline_calls, module_literals


@dataclass(frozen=True)
class CudaSource:
    """A CUDA source found in a candidate's files, and the ``name`` its ``load_cuda`` call gives it."""

    text: str
    name: str
    where: str  # file:line of the call


def find_cuda_sources(candidate: Candidate) -> list[CudaSource]:
    """Each distinct CUDA source the candidate's ``load_cuda`` calls build, where it can be read statically."""
    files = {f.name: f.text for f in candidate.files}
    found: dict[str, CudaSource] = {}
    for file, tree in parsed_python_files(candidate):
        constants = _module_strings(tree)
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and _called_name(call.func) == "load_cuda"):
                continue
            argument = call.args[0] if call.args else _keyword(call, "source")
            text, default_name = _source_text(argument, constants, files)
            if text is None:
                continue
            name_node = _keyword(call, "name")
            name = _string(name_node, constants) or default_name or "kernels"
            found.setdefault(text, CudaSource(text, name, f"{file.name}:{call.lineno}"))
    return list(found.values())


def prebuild_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    """Build every source :func:`find_cuda_sources` finds; a failure carries nvcc's trimmed log."""
    start = time.perf_counter()
    sources = find_cuda_sources(candidate)
    inline_calls = find_inline_calls(candidate)
    if not sources and not inline_calls:
        return CompileResult(ok=True, log="no load_cuda or load_inline source to build ahead (the compile stage "
                                          "builds it)", seconds=time.perf_counter() - start)
    options = context.options if context.options is not None else backend.default_options()
    built: list[str] = []
    all_cached = True
    for call in inline_calls:  # into the compile stage's load_inline cache; a failure is cached there for it
        nvcc = find_tool("nvcc", getattr(options, "nvcc", ""))
        inline = build_inline(call, cache_root(context) / "inline", nvcc_version(nvcc) if nvcc else "no nvcc")
        if isinstance(inline, CudaBuildError):
            return CompileResult(ok=False, log=f"{call.where}: {inline.log}", failure=Failure.COMPILE,
                                 seconds=time.perf_counter() - start, cached=inline.cached)
        all_cached = all_cached and inline.cached
        built.append(f"{call.where}: load_inline {'cached' if inline.cached else 'built'} in {inline.seconds:.2f} s")
    if not sources:
        return CompileResult(ok=True, log="\n".join(built), seconds=time.perf_counter() - start, cached=all_cached)
    config = build_config(options, cache_root(context))
    for source in sources:
        try:
            outcome = build_library(source.text, source.name, config)
        except CudaBuildError as exc:
            return CompileResult(ok=False, log=f"{source.where}: {exc.log}", failure=Failure.COMPILE,
                                 seconds=time.perf_counter() - start, cached=exc.cached)
        all_cached = all_cached and outcome.cached
        built.append(f"{source.where}: {'cached' if outcome.cached else 'built'} in {outcome.seconds:.2f} s")
    return CompileResult(ok=True, log="\n".join(built), seconds=time.perf_counter() - start, cached=all_cached)


# ------------------------------------------------------------------------------------------------ reading the AST


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _module_strings(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound exactly once, to a string literal."""
    return {name: value.value for name, value in module_literals(tree).items()
            if isinstance(value, ast.Constant) and isinstance(value.value, str)}


def _string(node: ast.expr | None, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _source_text(node: ast.expr | None, constants: dict[str, str],
                 files: dict[str, str]) -> tuple[str | None, str | None]:
    """The CUDA text ``node`` stands for, and the name a ``.cu`` path gives it; (None, None) when not static."""
    if isinstance(node, ast.Call) and _called_name(node.func) == "Path" and len(node.args) == 1:
        path = _string(node.args[0], constants)
        if path is not None and path in files and path.endswith(".cu"):
            return files[path], path.rsplit("/", 1)[-1][:-3]
        return None, None
    return _string(node, constants), None


@hookimpl
def kforge_prebuild(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    return prebuild_candidate(backend, candidate, context)
