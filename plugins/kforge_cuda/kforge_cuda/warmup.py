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

from kforge_core.problem import import_problem_module


def to_device(value: Any, device: str) -> Any:
    import torch

    return value.to(device) if isinstance(value, torch.Tensor) else value


def _problem_module(problem_path: Path) -> ModuleType:
    """The problem's module, imported once per process and content: importing it again would replace objects
    the harness watches between the start and the end of a candidate (and look like tampering)."""
    digest = hashlib.sha256(str(problem_path).encode() + b"\0" + problem_path.read_bytes()).hexdigest()[:16]
    name = f"kforge_problem_warmup_{digest}"
    return sys.modules.get(name) or import_problem_module(problem_path, name)


def build_model_and_inputs(module: ModuleType, problem_path: Path, device: str = "cuda", seed: int = 0):
    """``ModelNew(*get_init_inputs())`` on ``device`` and ``get_inputs()`` moved there, from ``seed``."""
    import torch

    problem_module = _problem_module(problem_path)
    torch.manual_seed(seed)
    init_inputs = problem_module.get_init_inputs()
    model = module.ModelNew(*init_inputs).to(device)
    inputs = [to_device(value, device) for value in problem_module.get_inputs()]
    return model, inputs


def run_forward(module: ModuleType, problem_path: Path, *, device: str = "cuda", calls: int = 1) -> None:
    """Build the model and call it ``calls`` times, then wait for the device. The random generators' state is
    put back afterwards: this call must not change what the harness draws next."""
    import torch

    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        model, inputs = build_model_and_inputs(module, problem_path, device)
        for _ in range(calls):
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
