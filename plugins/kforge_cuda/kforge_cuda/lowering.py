"""What the generation agent is told about the cuda backend: the programming model (CUDA C++ through
``load_cuda``), the target GPU read from this machine, the single-shot example and the reply format."""

from __future__ import annotations

from importlib import resources
from string import Template

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, Example, Lowering, Problem
from kforge_nvidia.device_facts import device_arch, hardware_text

from .options import CudaOptions

REPLY_FORMAT = ("Answer with one fenced ```python block holding the complete module that defines ModelNew, "
                "with the CUDA source inside it as a string passed to load_cuda.")
EXAMPLE_NOTE = ("One block per row, the row held in registers between the two block reductions, 16-byte "
                "accesses, one launch.")


def _package_text(*parts: str) -> str:
    return resources.files("kforge_cuda").joinpath(*parts).read_text()


def example() -> Example:
    """The single-shot example: a fused problem and our kernel for it."""
    return Example(
        problem=_package_text("examples", "cuda_problem.py"),
        solution=_package_text("examples", "cuda_solution.py"),
        note=EXAMPLE_NOTE,
    )


def target_arch(options: CudaOptions) -> str:
    """What nvcc builds for: the options' arch, else the device's."""
    return options.arch or device_arch() or "the device's architecture"


def lower(backend: Backend, problem: Problem, options: CudaOptions | None) -> Lowering:
    options = options if options is not None else backend.default_options()
    model = Template(_package_text("prompts", "cuda.md")).substitute(arch=target_arch(options))
    return Lowering(backend=backend.name, programming_model=model, hardware=hardware_text(), example=example(),
                    reply_format=REPLY_FORMAT)


@hookimpl
def kforge_lower(backend: Backend, problem: Problem, options: CudaOptions | None) -> Lowering:
    return lower(backend, problem, options)
