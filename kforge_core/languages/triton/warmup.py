"""Running ``ModelNew`` once on the problem's own inputs, so that a JIT (Triton's, a ``load_inline`` in
``__init__``) builds in the compile stage and its failures are compile errors. Tools' child processes (a profiler,
a sanitizer) use the same steps to run a candidate.

Device work goes through the backend's :class:`~kforge_core.device.Device`; nothing here names a vendor.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ...problem import import_problem_module

if TYPE_CHECKING:
    from ...device import Device


def to_device(value: Any, device: Any) -> Any:
    import torch

    return value.to(device) if isinstance(value, torch.Tensor) else value


def _problem_module(problem_path: Path) -> ModuleType:
    """The problem's module, imported once per process and content: importing it again would replace objects
    the harness watches between the start and the end of a candidate (and look like tampering)."""
    digest = hashlib.sha256(str(problem_path).encode() + b"\0" + problem_path.read_bytes()).hexdigest()[:16]
    name = f"kforge_problem_warmup_{digest}"
    return sys.modules.get(name) or import_problem_module(problem_path, name)


def build_model_and_inputs(module: ModuleType, problem_path: Path, device: Any, seed: int = 0):
    """``ModelNew(*get_init_inputs())`` on ``device`` (a torch device) and ``get_inputs()`` moved there."""
    import torch

    problem_module = _problem_module(problem_path)
    torch.manual_seed(seed)
    init_inputs = problem_module.get_init_inputs()
    model = module.ModelNew(*init_inputs).to(device)
    inputs = [to_device(value, device) for value in problem_module.get_inputs()]
    return model, inputs


def run_forward(module: ModuleType, problem_path: Path, device: Device, *, calls: int = 1) -> None:
    """Build the model and call it ``calls`` times, then wait for the device. The random generators' state is
    put back afterwards: this call must not change what the harness draws next."""
    import torch

    devices = [device.index] if device.index is not None else []
    with torch.random.fork_rng(devices=devices, device_type=device.torch_device.type), torch.no_grad():
        model, inputs = build_model_and_inputs(module, problem_path, device.torch_device)
        for _ in range(calls):
            model(*inputs)
        device.synchronize()
