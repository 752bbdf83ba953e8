"""The cuda backend's worker stages: the NVIDIA layer's compile stage, memcheck on a failing verification and
Nsight Compute, each with this language's build routes: ``load_cuda`` builds through its content-hash cache
(:mod:`.build_config`), in the worker and in the child program the profiler and the sanitizer run alike."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, Candidate, CompileResult, ProfileResult, StageContext
from kforge_core.stage_timer import StageTimer
from kforge_nvidia import compile_stage, profile_stage
from kforge_nvidia.builds import Builds
from kforge_nvidia.sanitize import memcheck_on_failure

from . import runtime
from .build_config import build_config
from .options import CudaOptions


@contextlib.contextmanager
def build_routes(options: CudaOptions, root: Path, builds: Builds, timer: StageTimer | None = None) -> Iterator[None]:
    """Within the block, ``load_cuda`` builds with the options' flags under ``root`` and records into ``builds``."""
    with runtime.build_session(build_config(options, root), builds.record):
        yield


def compile_candidate(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    return compile_stage.compile_candidate(backend, candidate, context, build_routes)


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
    return compile_candidate(backend, candidate, context)


@hookimpl(wrapper=True)
def kforge_verify(backend: Backend, candidate: Candidate, context: StageContext):
    """With ``sanitize`` on, a failing candidate's verdict carries compute-sanitizer's memcheck report."""
    return (yield from memcheck_on_failure(backend, candidate, context, build_routes))


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    return profile_stage.profile_candidate(backend, candidate, context, build_routes)
