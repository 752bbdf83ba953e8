"""The problem's own floor: the bytes it must move and the matrix FLOPs it must do, whatever the kernel.

Bytes are each input and output once, and the parameters once; FLOPs are what PyTorch's ``FlopCounterMode``
counts for the reference run on meta tensors (matrix products, convolutions, attention; elementwise work counts
nothing). Against the GPU's peaks they give the fastest any candidate could be; the summary compares the measured
kernel time with it. This runs the reference's forward on meta tensors only, in the KForge process, never a
candidate.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from kforge_core.records import Problem, ValueSpec
from kforge_core.values import map_tensors


@dataclass(frozen=True)
class ProblemFloor:
    bytes: int
    flops: int | None
    dtype: str  # of the first output: which peak the FLOPs are measured against


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

    from kforge_core.problem import import_problem_module

    try:
        module = import_problem_module(Path(path), f"kforge_problem_flops_{digest}")
        init_inputs = module.get_init_inputs()
        with torch.device("meta"):
            model = module.Model(*init_inputs)
        inputs = [map_tensors(x, lambda t: torch.empty_like(t, device="meta")) for x in module.get_inputs()]
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(*inputs)
        return int(counter.get_total_flops())
    except Exception:  # a problem that cannot run on meta tensors has no FLOP count, not an error
        return None


def problem_floor(problem: Problem) -> ProblemFloor:
    tensors = [t for value in (*problem.inputs, *problem.outputs) for t in value.tensors()]
    first_output = problem.outputs[0].tensors()[0]
    first_tensor = next((t for value in problem.inputs for t in value.tensors()), first_output)
    moved = sum(_tensor_bytes(t) for t in tensors)
    moved += problem.parameter_count * _element_size(first_tensor.dtype)
    return ProblemFloor(moved, _reference_flops(str(problem.path), problem.digest), first_output.dtype)
