"""The baselines a candidate is compared with: the problem's ``Model`` as it is ("eager") and under
``torch.compile`` ("compile"), timed exactly like candidates. Runs inside workers only."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ...settings import HarnessSettings
from ...tracebacks import exception_line
from ..protocol import BaselineResults
from .reference import ReferenceData, build_model, clone_values
from .timing import time_runs, timing_method

if TYPE_CHECKING:
    from ...device import Device


def measure_baselines(names: tuple[str, ...], reference: ReferenceData, device: Device,
                      settings: HarnessSettings) -> BaselineResults:
    samples, errors = [], []
    for name in names:
        model = build_model(reference.module.Model, reference.init_inputs, reference.seed, reference.device)
        try:
            call = _prepared(name, model, reference)
            samples.append((name, tuple(time_runs(call, reference, device, settings).samples_ms)))
        except Exception as exc:  # a baseline that cannot be measured is reported, not fatal
            errors.append((name, f"{name} baseline failed: {exception_line(exc)}"))
    return BaselineResults(tuple(samples), tuple(errors), timing_method(device, settings, reference))


def _prepared(name: str, model: torch.nn.Module, reference: ReferenceData):
    if name == "eager":
        return model
    if name == "compile":
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(*clone_values(reference.pool[0]))  # compiling happens here, outside the timed runs
        return compiled
    raise ValueError(f"unknown baseline {name!r}")
