"""KForge's ``metal`` backend: Metal Shading Language kernels for Apple GPUs, compiled at run time with
``torch.mps.compile_shader`` and dispatched from ``ModelNew``.

Each hook hands its work to a module with one job (availability, lowering, compile_stage, profile_stage,
summary); the core routes them here only for ``metal``. The device the harness drives is
:class:`~kforge_metal.device.MetalDevice` (``METAL.device_class``). Importing this package imports neither torch
nor any candidate code, so a machine without an Apple GPU still loads the plugin and ``kforge backends`` says why
the backend is unavailable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import (
    Availability, Backend, Candidate, CompileResult, Lowering, Problem, ProfileResult, ProfileSummary, StageContext,
)

from .backend import METAL, MetalOptions, metal_options

__all__ = ["METAL", "MetalOptions"]


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(METAL)


@hookimpl
def kforge_backend_availability(backend: Backend, options: Any) -> Availability | None:
    from .availability import metal_availability

    return metal_availability(metal_options(options))


@hookimpl
def kforge_lower(backend: Backend, problem: Problem, options: Any, cache_dir: Path) -> Lowering | None:
    from .device_facts import read_device_facts
    from .lowering import lower

    return lower(read_device_facts())


@hookimpl
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult | None:
    from .compile_stage import compile_candidate

    return compile_candidate(backend, candidate, context)


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    from .profile_stage import profile_candidate

    return profile_candidate(backend, candidate, context)


@hookimpl
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    if profile.tool != "metal":
        return None  # not the metal profile stage's: the core's generic summary answers
    from .summary import summarize_metal

    return summarize_metal(profile)
