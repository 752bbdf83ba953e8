"""How large a problem is for its device: its footprint (one call's inputs and outputs, and the model's parameters
and buffers, from the problem's description) against the device's memory.

The harness overlaps work in separate processes for speed: the baseline worker gets ready while a candidate is
verified, and spares and a second baseline worker prepare the next problem beside the current one. Each of them holds
its own copy of a call's inputs (and more) on the device. For a problem large for the device those copies add up
past what the device has, so a large problem is evaluated one process at a time: its baselines get ready after the
candidate was verified, and nothing is prepared ahead beside it or for it; its waiting processes hand back every
block their allocators cache unused (``worker/memory.py``). A footprint of a gibibyte or more is large on any device:
there the copies would not fail, but they would multiply what a call needs (the aim is about three times its
footprint, whatever the device has to spare).
"""

from __future__ import annotations

import math

from ..records import Problem

LARGE_SHARE = 1 / 16  # a footprint above this share of the device's memory: a large problem
LARGE_BYTES = 1 << 30  # and a footprint of this many bytes or more, on any device


def call_bytes(problem: Problem) -> int:
    """The bytes of one call's input and output tensors, as the problem describes them."""
    import torch

    return sum(math.prod(spec.shape) * getattr(torch, spec.dtype, torch.float32).itemsize
               for value in (*problem.inputs, *problem.outputs) for spec in value.tensors())


def footprint_bytes(problem: Problem) -> int:
    """What every process that runs ``problem`` holds for it at least: one call's inputs and outputs, and the model's
    parameters and buffers (a wide MLP's weights can be gigabytes where its inputs are kilobytes). Not counted: the
    call's own workspace (intermediates, library scratch), which only running it shows."""
    return call_bytes(problem) + problem.weight_bytes


def large_for_device(problem: Problem, memory_bytes: int) -> bool:
    """Whether ``problem``'s footprint is more than :data:`LARGE_SHARE` of a device of ``memory_bytes``, or
    :data:`LARGE_BYTES` or more (never, where the device's memory is not known: 0)."""
    footprint = footprint_bytes(problem)
    return memory_bytes > 0 and (footprint > LARGE_SHARE * memory_bytes or footprint >= LARGE_BYTES)
