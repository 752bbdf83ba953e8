"""What the generation agent is told about the cute backend: the CuTe DSL's programming model, the target GPU
read from this machine (the NVIDIA layer's facts, as for cuda and triton), the single-shot example and the reply format."""

from __future__ import annotations

from importlib import resources
from string import Template

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, Example, Lowering, Problem
from kforge_nvidia.device_facts import hardware_text
from kforge_nvidia.driver import driver_capability

from .dsl_info import INSTALL_HINT, dsl_version, tvm_ffi_version

REPLY_FORMAT = ("Answer with one fenced ```python block holding the complete module that defines ModelNew and its "
                "@cute.kernel and @cute.jit functions.")
EXAMPLE_NOTE = ("One CTA per row holds the row in registers after 128-bit loads; the two reductions go through warp "
                "shuffles and shared memory; compiled once per shape and launched on PyTorch's current stream.")


def _package_text(*parts: str) -> str:
    return resources.files("kforge_cute").joinpath(*parts).read_text()


def example() -> Example:
    """The single-shot example: a fused problem and our CuTe DSL kernel for it."""
    return Example(problem=_package_text("examples", "cute_problem.py"),
                   solution=_package_text("examples", "cute_solution.py"), note=EXAMPLE_NOTE)


def target_arch() -> str:
    """What the DSL compiles for here: the device's arch, with the ``a`` suffix that unlocks wgmma and TMA
    multicast on sm_90 and later (the DSL's own default)."""
    capability = driver_capability()
    if capability is None:
        return "the device's architecture (sm_90a on Hopper, sm_100a on Blackwell)"
    major, minor = capability
    return f"sm_{major}{minor}{'a' if major >= 9 else ''}"


def programming_model() -> str:
    tvm = tvm_ffi_version()
    return Template(_package_text("prompts", "cute.md")).substitute(
        arch=target_arch(), dsl_version=dsl_version() or "4.8 (not installed here)",
        tvm_ffi=f"apache-tvm-ffi {tvm} is installed here" if tvm else f"not installed here: {INSTALL_HINT} brings it")


def lower(backend: Backend, problem: Problem) -> Lowering:
    return Lowering(backend=backend.name, programming_model=programming_model(), hardware=hardware_text(),
                    example=example(), reply_format=REPLY_FORMAT)


@hookimpl
def kforge_lower(backend: Backend, problem: Problem) -> Lowering:
    return lower(backend, problem)
