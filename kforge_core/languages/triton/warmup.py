"""Running ``ModelNew`` once on the problem's own inputs, so that a JIT (Triton's, a ``load_inline`` in
``__init__``) builds in the compile stage and its failures are compile errors. Tools' child processes (a profiler,
a sanitizer) use the same steps to run a candidate.

Device work goes through the worker's device (:class:`~kforge_core.devices.harness_device.HarnessDevice`); nothing
here names a vendor.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ...candidate_module import DEFAULT_CLASS, candidate_class
from ...problem import import_problem_module
from ...timing.stage_timer import StageTimer
from ...values import map_tensors
from .builds import triton_builds_marked

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice


def to_device(value: Any, device: Any) -> Any:
    """``value`` with every tensor inside it (in tuples, lists, dicts) on ``device``."""
    return map_tensors(value, lambda tensor: tensor.to(device))


def _problem_module(problem_path: Path) -> ModuleType:
    """The problem's module, imported once per process and content: importing it again would replace objects
    the harness watches between the start and the end of a candidate (and look like tampering)."""
    digest = hashlib.sha256(str(problem_path).encode() + b"\0" + problem_path.read_bytes()).hexdigest()[:16]
    name = f"kforge_problem_warmup_{digest}"
    return sys.modules.get(name) or import_problem_module(problem_path, name)


def build_model_and_inputs(module: ModuleType, problem_path: Path, device: Any, seed: int = 0,
                           class_name: str = DEFAULT_CLASS, timer: StageTimer | None = None):
    """The candidate's class (``class_name``; see ``candidate_class``) built from ``get_init_inputs()`` on
    ``device`` (a torch device), and ``get_inputs()`` moved there; the construction is a build on ``timer``."""
    import torch

    timer = timer or StageTimer()
    problem_module = _problem_module(problem_path)
    torch.manual_seed(seed)
    init_inputs = problem_module.get_init_inputs()
    cls = candidate_class(module, class_name).cls
    with timer.building(f"{cls.__name__}(*get_init_inputs())"):
        model = cls(*init_inputs).to(device)
    inputs = [to_device(value, device) for value in problem_module.get_inputs()]
    return model, inputs


def run_forward(module: ModuleType, problem_path: Path, device: HarnessDevice, *, calls: int = 1,
                class_name: str = DEFAULT_CLASS, timer: StageTimer | None = None) -> None:
    """Build the model and call it ``calls`` times, waiting for the device after each. The random generators'
    state is put back afterwards: this call must not change what the harness draws next. Each call is a call of
    forward on ``timer``, each Triton compilation in it a build, so a forward that never returns times out at the
    call's limit while JIT time does not count against it."""
    import torch

    timer = timer or StageTimer()
    devices = [device.index] if device.index is not None else []
    with torch.random.fork_rng(devices=devices, device_type=device.torch_device.type), torch.no_grad(), \
            triton_builds_marked(timer):
        model, inputs = build_model_and_inputs(module, problem_path, device.torch_device, class_name=class_name,
                                               timer=timer)
        for call in range(calls):
            with timer.calling("the first forward" if call == 0 else f"forward call {call + 1}"):
                model(*inputs)
                device.synchronize()
