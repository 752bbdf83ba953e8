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
"""

from __future__ import annotations

import logging

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
