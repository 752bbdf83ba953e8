"""Outputs compared under the precision contract's tolerances, as the harness compares a candidate's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...model_worker.outputs import leaves


@dataclass
class Comparison:
    matches: bool
    message: str
    max_abs_error: float = 0.0


def compare(actual: Any, expected: Any, tolerances: dict[str, tuple[float, float]]) -> Comparison:
    import torch

    got, want = leaves(actual), leaves(expected)
    if len(got) != len(want):
        return Comparison(False, f"{len(got)} output tensors where the untouched model gives {len(want)}")
    worst = 0.0
    for index, (a, b) in enumerate(zip(got, want)):
        if a.shape != b.shape:
            return Comparison(False, f"output {index} has shape {tuple(a.shape)}, expected {tuple(b.shape)}")
        if not b.is_floating_point():
            if not torch.equal(a, b):
                return Comparison(False, f"output {index} ({b.dtype}) differs")
            continue
        atol, rtol = tolerances.get(str(b.dtype).removeprefix("torch."), (0.0, 0.0))
        a64, b64 = a.detach().double(), b.detach().double()
        error = (a64 - b64).abs()
        finite = torch.isfinite(b64)
        if not torch.equal(torch.isfinite(a64), finite):
            return Comparison(False, f"output {index} has non-finite values where the untouched model has none")
        error = error[finite]
        if error.numel() == 0:
            continue
        max_error = float(error.max())
        worst = max(worst, max_error)
        bad = error > atol + rtol * b64[finite].abs()
        if bool(bad.any()):
            return Comparison(False, f"output {index}: {int(bad.sum())} of {bad.numel()} values outside atol={atol:g}, "
                                     f"rtol={rtol:g} (max abs error {max_error:.3g})", worst)
    return Comparison(True, f"max abs error {worst:.3g}", worst)
