"""How large a problem is for its device: its footprint (one call's inputs and outputs, and the model's parameters
and buffers, from the problem's description) and what one call holds at its peak (the intermediates its forward
made when it was described, too) against the device's memory.

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

from ..records import Problem, ValueSpec

LARGE_SHARE = 1 / 16  # a call at its peak above this share of the device's memory: a large problem
LARGE_BYTES = 1 << 30  # and a footprint of this many bytes or more, on any device


def call_bytes(problem: Problem) -> int:
    """The bytes of one call's input and output tensors, as the problem describes them."""
    return _tensor_bytes((*problem.inputs, *problem.outputs))


def _tensor_bytes(values: tuple[ValueSpec, ...]) -> int:
    import torch

    return sum(math.prod(spec.shape) * getattr(torch, spec.dtype, torch.float32).itemsize
               for value in values for spec in value.tensors())


def footprint_bytes(problem: Problem) -> int:
    """What every process that runs ``problem`` holds for it at least: one call's inputs and outputs, and the model's
    parameters and buffers (a wide MLP's weights can be gigabytes where its inputs are kilobytes). Not counted: the
    call's own workspace (intermediates, library scratch; :func:`call_peak_bytes` has the intermediates)."""
    return call_bytes(problem) + problem.weight_bytes


def call_peak_bytes(problem: Problem) -> int:
    """What one call holds on its device at its peak, as far as the problem's description tells: its inputs, the
    model's parameters and buffers, and the most its forward's own tensors held at once (its outputs, where that
    is not known)."""
    return (_tensor_bytes(problem.inputs) + problem.weight_bytes
            + max(_tensor_bytes(problem.outputs), problem.forward_peak_bytes))


def large_for_device(problem: Problem, memory_bytes: int) -> bool:
    """Whether ``problem``'s call at its peak (:func:`call_peak_bytes`: an attention's score matrices count, where its
    inputs are megabytes) is more than :data:`LARGE_SHARE` of a device of ``memory_bytes``, or its footprint
    :data:`LARGE_BYTES` or more (never, where the device's memory is not known: 0)."""
    return memory_bytes > 0 and (call_peak_bytes(problem) > LARGE_SHARE * memory_bytes
                                 or footprint_bytes(problem) >= LARGE_BYTES)
