"""The device's random generator made usable again where a candidate's failed graph capture left it waiting.

PyTorch tells a device's default generator when a CUDA graph capture begins, and again when it ends. A capture
that fails inside ``torch.cuda.graph`` (cuDNN asking for workspace during the capture, a synchronize inside it)
raises before the end is told, and a candidate that catches the error and falls back to eager code still returns
the right answer; but the generator is left expecting the end, and the next random draw on the device outside a
capture raises ("Offset increment outside graph capture encountered unexpectedly"). Inputs are drawn on the device
(``reference.seeded_inputs``), so that draw would be KForge's, and the candidate's verdict a ``harness_error``. A
program in plain PyTorch that draws its inputs on the host never sees it; KernelBench's eval judges such a candidate
as it runs.

Before it draws, the worker tries one draw; where the generator refuses it, a copy of its state takes its place (the
seed and offset carried over, nothing of the unfinished capture) and the draw is tried again. A generator that still
refuses, or any other error, is raised as it was. Nothing here names a device: the generators are the device
module's (``torch.get_device_module``), and a device without them is left alone. Each repair is counted
(:func:`repairs`): the worker's integrity check sees the count change during a candidate, and a worker whose
candidate left a capture unfinished is not reused for the next one (what else of the capture it left, the
allocator's or the driver's, is not KForge's to know).

A call that draws random numbers (dropout in training mode) draws them from the generators' state at the call. The
referee calls the reference right after making its inputs from their seed; a timed call's inputs are often a clone
of a set made earlier, and the generators have moved on since. :class:`GeneratorStates` keeps their state as it was
right after such a set was made, and puts it back before each call on a clone of it, so that the call draws what
the referee's call on the same inputs drew.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import torch

log = logging.getLogger("kforge")
_repaired = [0]


def repairs() -> int:
    """How many times this process's generators were repaired."""
    return _repaired[0]


def draws_on(device: torch.device) -> bool:
    """Make sure the default generator of ``device`` draws outside a capture; True when it had to be repaired."""
    try:
        _draw(device)
        return False
    except RuntimeError as refused:
        if not _replace_state(device):
            raise
        try:
            _draw(device)
        except RuntimeError:
            raise refused from None
        log.debug("the %s generator was left inside an unfinished graph capture; its state was copied anew", device)
        _repaired[0] += 1
        return True


def _draw(device: torch.device) -> None:
    torch.empty(1, device=device).uniform_()


def _replace_state(device: torch.device) -> bool:
    module = torch.get_device_module(device.type)
    generators = getattr(module, "default_generators", ())
    index = device.index if device.index is not None else module.current_device()
    if index >= len(generators):
        return False
    generator = generators[index]
    if not hasattr(generator, "clone_state") or not hasattr(generator, "graphsafe_set_state"):
        return False
    generator.graphsafe_set_state(generator.clone_state())
    return True


@dataclass(frozen=True)
class GeneratorStates:
    """The host's default generator's state and that of ``device``'s (``module``'s generator; None where the device
    has no generator of its own, or is the host), as they were when :meth:`now` took them."""

    device: torch.device
    host: torch.Tensor
    module: Any = None
    on_device: torch.Tensor | None = None

    @classmethod
    def now(cls, device: torch.device) -> GeneratorStates:
        module = _generator_module(device)
        if module is None:
            return cls(device, torch.get_rng_state())
        return cls(device, torch.get_rng_state(), module, _device_state(module, device))

    def restore(self) -> None:
        """Put both generators back where they were; a device generator a failed graph capture left unusable is
        repaired first (:func:`draws_on`)."""
        torch.set_rng_state(self.host)
        if self.module is None:
            return
        try:
            _set_device_state(self.module, self.device, self.on_device)
        except RuntimeError:
            draws_on(self.device)
            _set_device_state(self.module, self.device, self.on_device)


def _generator_module(device: torch.device) -> Any:
    """The device module whose generator draws on ``device`` (``torch.get_device_module``); None where it has no
    generator of its own (the host's module has none: the host's default generator is ``torch``'s)."""
    try:
        module = torch.get_device_module(device.type)
    except (RuntimeError, ValueError, AttributeError):  # a device type with no module of its own
        return None
    return module if hasattr(module, "get_rng_state") and hasattr(module, "set_rng_state") else None


def _device_state(module: Any, device: torch.device) -> torch.Tensor:
    try:
        return module.get_rng_state(device)
    except TypeError:  # a device module whose generator takes no device (one device only)
        return module.get_rng_state()


def _set_device_state(module: Any, device: torch.device, state: torch.Tensor) -> None:
    try:
        module.set_rng_state(state, device)
    except TypeError:
        module.set_rng_state(state)
