"""Recurrent layers on ``meta`` tensors, one time step standing for the whole sequence.

PyTorch has no meta kernel for cuDNN's recurrent layers: on meta tensors ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` run
their decomposition, a dozen operators per layer, direction and time step, each through Python's dispatch (and
through every dispatch mode in force). Every step does the same work on tensors of the same shapes, so while
:func:`one_step_sequences` is in force a recurrent layer given a meta sequence runs its first step only, returns an
output of the whole sequence's shape (and the state the step left, whose shape is the state's), and whoever counts
the operators of that step counts them :func:`repeats` times. The problem's description (its outputs, the memory a
forward makes, its shapes) and its work count run the reference so; on real tensors the layers run as they are.
"""

from __future__ import annotations

import contextlib
import contextvars
from functools import partial
from typing import Any, Callable, Iterator

_REPEATS: contextvars.ContextVar[int] = contextvars.ContextVar("kforge_meta_step_repeats", default=1)


def repeats() -> int:
    """How many times the operator running now stands for itself: the time steps of each recurrent layer it runs
    inside (1 outside them)."""
    return _REPEATS.get()


@contextlib.contextmanager
def one_step_sequences(model: Any) -> Iterator[None]:
    """While in force, every recurrent layer of ``model`` (an ``nn.Module``; anything else is left alone) given a
    meta sequence runs one step of it (:func:`_one_step`)."""
    import torch

    if not isinstance(model, torch.nn.Module):
        yield
        return
    layers = [m for m in model.modules() if isinstance(m, torch.nn.RNNBase) and "forward" not in vars(m)]
    for layer in layers:
        layer.forward = partial(_one_step, layer, layer.forward)
    try:
        yield
    finally:
        for layer in layers:
            vars(layer).pop("forward", None)


def _one_step(layer: Any, forward: Callable[..., Any], input: Any, hx: Any = None) -> Any:
    """``layer``'s forward over the first step of a meta ``input`` (its operators counted as many times as the
    sequence has steps), its output widened to the whole sequence; any other input runs as it is."""
    import torch

    if not isinstance(input, torch.Tensor) or not input.is_meta or input.dim() not in (2, 3):
        return forward(input, hx)
    step_dim = 1 if input.dim() == 3 and layer.batch_first else 0
    steps = input.shape[step_dim]
    if steps <= 1:
        return forward(input, hx)
    token = _REPEATS.set(_REPEATS.get() * steps)
    try:
        output, state = forward(input.narrow(step_dim, 0, 1), hx)
    finally:
        _REPEATS.reset(token)
    return _widened(output, step_dim, steps), state


def _widened(step: Any, step_dim: int, steps: int) -> Any:
    """An empty tensor like the one step's output ``step`` with ``steps`` along ``step_dim``, laid out as the step
    is (a ``batch_first`` layer's output is a transposed sequence-major one: what a later operator does with it, a
    ``Linear`` a fused product on a contiguous input or a product and an addition on a strided one, depends on it)."""
    shape = list(step.shape)
    shape[step_dim] = steps
    order = sorted(range(step.dim()), key=lambda d: (-step.stride(d), d))
    laid_out = step.new_empty([shape[d] for d in order])
    return laid_out.permute([order.index(d) for d in range(step.dim())])
