"""An extracted problem held to the module it came from: its file passes ``kforge check``'s loading, and its
``Model``, given the module's own weights (``load_state_dict``: the names are the module's, the class is its
class), computes on the captured inputs what the module computed in the model's forward."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...problem import ProblemError, import_problem_module, load_problem
from .values import tensor_leaves

# how far the problem's outputs may be from the module's: the same code, weights and inputs on the same device
# give the same values; a different memory layout may pick another kernel, which rounds differently
TOLERANCE = {"float32": 1e-5, "float64": 1e-9, "bfloat16": 1e-2, "float16": 1e-3}


@dataclass(frozen=True)
class Reproduction:
    ok: bool
    max_abs_error: float
    why: str = ""


def check_problem(path: Path) -> str:
    """Why ``kforge check`` refuses the file ("" when it passes)."""
    try:
        load_problem(path)
    except ProblemError as exc:
        return str(exc).splitlines()[0]
    return ""


def reproduce(path: Path, module: Any, served: list[Any], outputs: list[Any], device: Any) -> Reproduction:
    """Run the problem's Model with ``module``'s weights on the ``served`` inputs and compare with ``outputs``."""
    import torch

    problem = import_problem_module(path, f"kforge_hotspot_{path.stem}")
    torch.manual_seed(0)
    model = problem.Model(*problem.get_init_inputs()).to(device)
    model.load_state_dict(module.state_dict())
    model.eval()
    with torch.no_grad():
        got = tensor_leaves(model(*_on(served, device)))
    if len(got) != len(outputs):
        return Reproduction(False, float("inf"), f"{len(got)} outputs where the module gave {len(outputs)}")
    worst = 0.0
    for index, (a, b) in enumerate(zip(got, outputs)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return Reproduction(False, float("inf"), f"output {index} is {a.dtype} {list(a.shape)} where the "
                                                     f"module gave {b.dtype} {list(b.shape)}")
        if not b.is_floating_point():
            if not torch.equal(a, b.to(a.device)):
                return Reproduction(False, float("inf"), f"output {index} differs")
            continue
        error = float((a.double() - b.to(a.device).double()).abs().nan_to_num(0.0).max()) if a.numel() else 0.0
        worst = max(worst, error)
        allowed = TOLERANCE.get(str(b.dtype).removeprefix("torch."), 1e-3)
        if not torch.allclose(a.double(), b.to(a.device).double(), atol=allowed, rtol=allowed, equal_nan=True):
            return Reproduction(False, worst, f"output {index} differs from the module's by up to {error:.3g} "
                                              "(it depends on more than its inputs and weights: state kept "
                                              "between calls, or values read from elsewhere)")
    return Reproduction(True, worst)


def _on(value: Any, device: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device, copy=True)  # the captured values stay as they were, whatever the forward does
    if isinstance(value, tuple):
        return tuple(_on(v, device) for v in value)
    if isinstance(value, list):
        return [_on(v, device) for v in value]
    if isinstance(value, dict):
        return {k: _on(v, device) for k, v in value.items()}
    return value
