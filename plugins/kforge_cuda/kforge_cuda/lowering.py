"""What the generation agent is told about the cuda and triton backends: the programming model, the target GPU
read from this machine, the single-shot example and the reply format."""

from __future__ import annotations

from importlib import resources
from string import Template

from kforge_core.languages import triton as triton_language
from kforge_core.records import Backend, Example, Lowering, Problem

from .backends import TRITON
from .options import CudaOptions, NvidiaOptions

CUDA_REPLY_FORMAT = ("Answer with one fenced ```python block holding the complete module that defines ModelNew, "
                     "with the CUDA source inside it as a string passed to load_cuda.")
CUDA_EXAMPLE_NOTE = ("One block per row, the row held in registers between the two block reductions, 16-byte "
                     "accesses, one launch.")


def _package_text(*parts: str) -> str:
    return resources.files("kforge_cuda").joinpath(*parts).read_text()


def example(backend: str) -> Example:
    """The backend's single-shot example: a fused problem and our kernel for it (Triton's is the language's)."""
    if backend == TRITON.name:
        return triton_language.example()
    return Example(
        problem=_package_text("examples", "cuda_problem.py"),
        solution=_package_text("examples", "cuda_solution.py"),
        note=CUDA_EXAMPLE_NOTE,
    )


def hardware_text() -> str:
    """The facts of GPU 0, or why there are none."""
    import torch

    if torch.version.cuda is None or not torch.cuda.is_available():
        return "No CUDA device is visible here, so the target's facts are unknown; write for a recent NVIDIA GPU."
    from .device_facts import read_gpu_facts

    return read_gpu_facts(0).describe()


def target_arch(options: NvidiaOptions) -> str:
    import torch

    if isinstance(options, CudaOptions) and options.arch:
        return options.arch
    if torch.version.cuda is not None and torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    return "the device's architecture"


def lower(backend: Backend, problem: Problem, options: NvidiaOptions | None) -> Lowering:
    options = options if options is not None else backend.default_options()
    arch = target_arch(options)
    if backend.name == TRITON.name:
        model, reply_format = triton_language.programming_model(arch), triton_language.REPLY_FORMAT
    else:
        model, reply_format = Template(_package_text("prompts", "cuda.md")).substitute(arch=arch), CUDA_REPLY_FORMAT
    return Lowering(
        backend=backend.name,
        programming_model=model,
        hardware=hardware_text(),
        example=example(backend.name),
        reply_format=reply_format,
    )
