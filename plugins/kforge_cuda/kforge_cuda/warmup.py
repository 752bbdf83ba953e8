"""Running ``ModelNew`` once on the problem's own inputs, in the worker or in a tool's child process.

JIT toolchains (Triton, a ``load_inline`` in ``__init__``) build on the first call; doing that call in the compile
stage makes their failures compile errors. The profiler and sanitizer children use the same steps to run a
candidate.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from kforge_core.candidate_module import DEFAULT_CLASS, candidate_class
from kforge_core.problem import import_problem_module
from kforge_core.stage_timer import StageTimer
from kforge_core.values import map_tensors

from .triton_builds import triton_builds_marked


def to_device(value: Any, device: str) -> Any:
    """``value`` with every tensor inside it on ``device``."""
    return map_tensors(value, lambda tensor: tensor.to(device))


def _problem_module(problem_path: Path) -> ModuleType:
    """The problem's module, imported once per process and content: importing it again would replace objects
    the harness watches between the start and the end of a candidate (and look like tampering)."""
    digest = hashlib.sha256(str(problem_path).encode() + b"\0" + problem_path.read_bytes()).hexdigest()[:16]
    name = f"kforge_problem_warmup_{digest}"
    return sys.modules.get(name) or import_problem_module(problem_path, name)


def build_model_and_inputs(module: ModuleType, problem_path: Path, device: str = "cuda", seed: int = 0,
                           class_name: str = DEFAULT_CLASS, timer: StageTimer | None = None):
    """The candidate's class (``class_name``, see ``candidate_class``) built from ``get_init_inputs()`` on
    ``device``, and ``get_inputs()`` moved there, from ``seed``."""
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


def run_forward(module: ModuleType, problem_path: Path, *, device: str = "cuda", calls: int = 1,
                class_name: str = DEFAULT_CLASS, timer: StageTimer | None = None) -> None:
    """Build the model and call it ``calls`` times, then wait for the device. The random generators' state is
    put back afterwards: this call must not change what the harness draws next. Each call is marked on
    ``timer`` as a call of forward, and Triton's compilations in it as builds."""
    import torch

    timer = timer or StageTimer()
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices), torch.no_grad(), triton_builds_marked(timer):
        model, inputs = build_model_and_inputs(module, problem_path, device, class_name=class_name, timer=timer)
        for call in range(calls):
            with timer.calling("the first forward" if call == 0 else f"forward call {call + 1}"):
                model(*inputs)
                torch.cuda.synchronize()


def context_poisoned() -> bool:
    """True when the CUDA context fails every call now: a sticky error (an illegal address, a launch failure)
    happened in it, and nothing more can run in this process."""
    import torch

    if not torch.cuda.is_available():
        return False
    try:
        torch.cuda.synchronize()
        torch.empty(1, device="cuda").fill_(0).item()
    except Exception:
        return True
    return False
