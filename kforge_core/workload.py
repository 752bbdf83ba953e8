"""The problem's own floor, the one every backend uses: the bytes it must move and the FLOPs it does, whatever the
kernel.

Bytes are each input and output once, and the parameters once (the compulsory traffic; write-allocate and re-reads
are not counted, as in STREAM); FLOPs are counted per operator of the reference run on meta tensors
(:mod:`kforge_core.work_count`: matrix products, convolutions and attention by PyTorch's formulas, elementwise and
reduction work too). Against a device's peaks they give the speed of light (:mod:`kforge_core.speed_of_light`). This
runs the reference's forward on meta tensors only, never a candidate, so it may run in the KForge process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from .records import Problem, ValueSpec
from .values import map_tensors
from .work_count import WorkCount, count_forward


@dataclass(frozen=True)
class ProblemFloor:
    """What any candidate for a problem must do at least.

    :param bytes: inputs and outputs moved once, parameters read once.
    :param flops: matrix FLOPs of one forward; None when the reference does not run on meta tensors.
    :param dtype: the first output's dtype: which peak the FLOPs are measured against.
    :param work: all its FLOPs by kind and dtype, or why they could not be counted.
    :param input_bytes: the inputs' share of ``bytes`` (read by every call, whatever a candidate keeps).
    :param output_bytes: the outputs' share.
    """

    bytes: int
    flops: int | None
    dtype: str
    work: WorkCount = WorkCount(reason="not counted")
    input_bytes: int = 0
    output_bytes: int = 0


def _element_size(dtype: str) -> int:
    import torch

    return torch.empty((), dtype=getattr(torch, dtype)).element_size()


def _tensor_bytes(spec: ValueSpec) -> int:
    if spec.kind != "tensor":
        return 0
    count = 1
    for size in spec.shape:
        count *= size
    return count * _element_size(spec.dtype)


@functools.lru_cache(maxsize=16)
def _reference_work(path: str, digest: str) -> WorkCount:
    """The reference's work, counted on meta tensors: made there from the start where its getters allow it (no
    data is ever made), else from inputs made on the CPU and replaced by meta tensors of their shapes."""
    import torch

    from .problem import import_problem_module

    try:
        module = import_problem_module(Path(path), f"kforge_problem_flops_{digest}")
    except Exception as exc:  # noqa: BLE001 - a problem that does not import has no count, not an error
        return WorkCount(reason=_one_line(exc))
    try:
        with torch.device("meta"):
            torch.manual_seed(0)
            model = module.Model(*module.get_init_inputs())
            return count_forward(model, [map_tensors(x, _on_meta) for x in module.get_inputs()])
    except Exception:  # noqa: BLE001 - a getter that needs real data: made on the CPU instead
        pass
    try:
        init_inputs = module.get_init_inputs()
        inputs = [map_tensors(x, _on_meta) for x in module.get_inputs()]
        with torch.device("meta"):
            return count_forward(module.Model(*init_inputs), inputs)
    except Exception as exc:  # noqa: BLE001 - a forward that reads values cannot run on meta tensors
        return WorkCount(reason=f"the reference does not run on meta tensors: {_one_line(exc)}")


def _on_meta(tensor: object) -> object:
    import torch

    return torch.empty_like(tensor, device="meta")  # type: ignore[arg-type]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def floor_bytes(problem: Problem) -> int:
    """The bytes ``problem`` must move: inputs and outputs once (tensors nested in containers too), parameters
    (in the first input tensor's dtype) once."""
    first_tensor = next((t for value in problem.inputs for t in value.tensors()), _first_output(problem))
    moved = _bytes_of(problem.inputs) + _bytes_of(problem.outputs)
    return moved + problem.parameter_count * _element_size(first_tensor.dtype)


def _first_output(problem: Problem) -> ValueSpec:
    return problem.outputs[0].tensors()[0]


def _bytes_of(values: tuple) -> int:
    return sum(_tensor_bytes(t) for value in values for t in value.tensors())


def problem_floor(problem: Problem) -> ProblemFloor:
    """The floor of ``problem`` (its FLOPs counted once per process and problem)."""
    work = _reference_work(str(problem.path), problem.digest)
    return ProblemFloor(floor_bytes(problem), work.flops("matrix") if work.counted else None,
                        _first_output(problem).dtype, work, _bytes_of(problem.inputs), _bytes_of(problem.outputs))
