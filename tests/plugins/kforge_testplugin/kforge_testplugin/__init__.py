"""A complete third-party backend plugin: the ``echo`` backend runs candidates with PyTorch on the CPU.

It implements every hook for its own backend and leaves a trace of each call, so tests can see that KForge's core
called it without knowing anything about it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kforge_core import (
    Availability, Backend, CompileResult, Example, KernelMetrics, Lowering, ProfileResult, ProfileSummary, hookimpl,
)
from kforge_core.candidate_module import import_candidate

NAME = "echo"


@dataclass(frozen=True)
class EchoOptions:
    greeting: str = "hello"
    level: int = 1

    def __post_init__(self) -> None:
        if self.level < 0:
            raise ValueError("level must be >= 0")


BACKEND = Backend(
    name=NAME,
    programming_model="PyTorch operators",
    device="cpu",
    description="test backend from a separately packaged plugin",
    options_type=EchoOptions,
)


@hookimpl
def kforge_register_backends(register):
    register(BACKEND)


@hookimpl
def kforge_backend_availability(backend, options):
    return Availability.yes(f"echo says {options.greeting} at level {options.level}")


@hookimpl
def kforge_lower(backend, problem):
    return Lowering(
        backend=NAME,
        programming_model=f"Write ModelNew with PyTorch operators for {problem.name}.",
        hardware="the host CPU",
        example=Example(problem="# any problem", solution="class ModelNew: ...", note="echo example"),
    )


@hookimpl
def kforge_compile(backend, candidate, context):
    start = time.perf_counter()
    (context.workdir / "echo-compiled.txt").write_text(candidate.digest)
    import_candidate(candidate, context.workdir)
    return CompileResult(ok=True, log="echo: built", seconds=time.perf_counter() - start)


@hookimpl
def kforge_profile(backend, candidate, context):
    return ProfileResult(tool="echo", kernels=(KernelMetrics("echo_kernel", 1.5, (("bytes", 1024.0),)),),
                         raw=f"echo profiled {candidate.label}")


@hookimpl
def kforge_summarize_profile(backend, profile):
    kernel = profile.kernels[0]
    return ProfileSummary(text=f"echo summary: {kernel.name} took {kernel.duration_us} us")
