"""How much memory traffic and arithmetic a problem needs at least, for comparing achieved rates with the peaks.

Bytes: every input tensor read once, every output written once, every parameter and buffer read once (the
compulsory traffic; write-allocate and re-reads are not counted, as in STREAM). Flops: the reference forward under
``torch.utils.flop_counter.FlopCounterMode``, which counts matrix products and convolutions only, so elementwise
and normalisation problems count 0 flops and are judged by bandwidth.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from kforge_core.records import Problem, ValueSpec


def itemsize(dtype: str) -> int:
    import torch

    return torch.empty((), dtype=getattr(torch, dtype)).element_size()


def spec_bytes(specs: Iterable[ValueSpec]) -> int:
    return sum(math.prod(t.shape) * itemsize(t.dtype) for s in specs for t in s.tensors())


def problem_bytes(problem: Problem) -> int:
    """Inputs and outputs from the problem's description (parameters are not described there)."""
    return spec_bytes(problem.inputs) + spec_bytes(problem.outputs)


def reference_flops(model: Any, inputs: list[Any]) -> int:
    """Matmul/convolution flops of one reference forward, counted by PyTorch's flop counter."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(*inputs)
    return int(counter.get_total_flops())
