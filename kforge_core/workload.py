"""The problem's own floor, the one every backend uses: the bytes it must move and the matrix FLOPs it must do,
whatever the kernel.

Bytes are each input and output once, and the parameters once (the compulsory traffic; write-allocate and re-reads
are not counted, as in STREAM); FLOPs are what PyTorch's ``FlopCounterMode`` counts for the reference run on meta
tensors (matrix products, convolutions, attention; elementwise work counts nothing, so such problems are judged by
bandwidth). Against a device's peaks they give the fastest any candidate could be. This runs the reference's
forward on meta tensors only, never a candidate, so it may run in the KForge process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from .records import Problem, ValueSpec


@dataclass(frozen=True)
class ProblemFloor:
    """What any candidate for a problem must do at least.

    :param bytes: inputs and outputs moved once, parameters read once.
    :param flops: matrix FLOPs of one forward; None when the reference does not run on meta tensors.
    :param dtype: the first output's dtype: which peak the FLOPs are measured against.
    """

    bytes: int
    flops: int | None
    dtype: str


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
def _reference_flops(path: str, digest: str) -> int | None:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from .problem import import_problem_module

    try:
        module = import_problem_module(Path(path), f"kforge_problem_flops_{digest}")
        init_inputs = module.get_init_inputs()
        with torch.device("meta"):
            model = module.Model(*init_inputs)
        inputs = [torch.empty_like(x, device="meta") if isinstance(x, torch.Tensor) else x
                  for x in module.get_inputs()]
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(*inputs)
        return int(counter.get_total_flops())
    except Exception:  # a problem that cannot run on meta tensors has no FLOP count, not an error
        return None


def floor_bytes(problem: Problem) -> int:
    """The bytes ``problem`` must move: inputs and outputs once, parameters (in the first input's dtype) once."""
    first_tensor = next((s for s in problem.inputs if s.kind == "tensor"), problem.outputs[0])
    moved = sum(_tensor_bytes(s) for s in (*problem.inputs, *problem.outputs))
    return moved + problem.parameter_count * _element_size(first_tensor.dtype)


def problem_floor(problem: Problem) -> ProblemFloor:
    """The floor of ``problem`` (its FLOPs counted once per process and problem)."""
    return ProblemFloor(floor_bytes(problem), _reference_flops(str(problem.path), problem.digest),
                        problem.outputs[0].dtype)
