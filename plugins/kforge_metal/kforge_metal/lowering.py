"""What the generation agent is told about the ``metal`` backend: the MSL programming model, the Apple GPU read
from this machine, the single-shot example (fused RMSNorm) and the reply format."""

from __future__ import annotations

from importlib import resources

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, Example, Lowering, Problem

from .device_facts import MetalFacts, read_device_facts

REPLY_FORMAT = (
    "Answer with one fenced ```python block holding the complete module that defines ModelNew, with the Metal "
    "source inside it as a string passed to torch.mps.compile_shader."
)
EXAMPLE_NOTE = (
    "One threadgroup per row: float4 loads, simd_sum within each SIMD-group and threadgroup memory across them, "
    "then the same threads write the scaled row; one read of x and one write of y."
)


def _package_text(*parts: str) -> str:
    return resources.files("kforge_metal").joinpath(*parts).read_text()


def shipped_example() -> Example:
    return Example(problem=_package_text("example", "rmsnorm.py"), solution=_package_text("example", "rmsnorm_msl.py"),
                   note=EXAMPLE_NOTE)


def programming_model_text() -> str:
    return _package_text("programming_model.md")


def lower(facts: MetalFacts) -> Lowering:
    return Lowering(
        backend="metal",
        programming_model=programming_model_text(),
        hardware=facts.describe(),
        example=shipped_example(),
        reply_format=REPLY_FORMAT,
    )


@hookimpl
def kforge_lower(backend: Backend, problem: Problem) -> Lowering:
    return lower(read_device_facts())
