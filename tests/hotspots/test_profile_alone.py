"""The step as the profiler sees it alone: each phase's steps in a session of their own, after a warm step, with none
of the tracker's hooks in the model (no GPU needed: the host CPU's profile)."""

from __future__ import annotations

import types

import pytest
import torch

from kforge_core.hotspots.worker.phases import Driver
from kforge_core.hotspots.worker.profile import span_us, steps_alone_ms


class Recorder(torch.nn.Module):
    """A forward that notes, each call, whether a profiler is on."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(32, 32)
        self.profiled: list[bool] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.profiled.append(torch.autograd.profiler._is_profiler_enabled)
        return torch.relu(self.linear(x))


def test_the_steps_are_profiled_alone_after_one_warm_step():
    model = Recorder()
    device = types.SimpleNamespace(profiler_activity=None, synchronize=lambda: None)
    found = steps_alone_ms(Driver(model, (torch.randn(8, 32),), causal_lm=False), device, steps=3)
    assert model.profiled == [False, True, True, True]
    assert list(found) == ["forward"] and found["forward"] > 0


def _event(start: float, end: float, device_type: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(time_range=types.SimpleNamespace(start=start, end=end),
                                 device_type=f"DeviceType.{device_type}")


def test_the_span_runs_from_the_first_start_to_the_last_end_on_one_side():
    events = [_event(0, 50, "CPU"), _event(10, 20, "CUDA"), _event(30, 45, "CUDA"), _event(40, 90, "CPU")]
    assert span_us(events, on_device=True) == 35  # 10 to 45: the host's records are not the device's
    assert span_us(events, on_device=False) == 90
    assert span_us([_event(0, 5, "CPU")], on_device=True) == 0.0


def test_a_step_that_raises_leaves_no_profiler_running():
    class Failing(Recorder):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if len(self.profiled) == 2:
                raise RuntimeError("the model's second profiled step fails")
            return super().forward(x)

    device = types.SimpleNamespace(profiler_activity=None, synchronize=lambda: None)
    with pytest.raises(RuntimeError, match="second profiled step"):
        steps_alone_ms(Driver(Failing(), (torch.randn(8, 32),), causal_lm=False), device, steps=3)
    assert not torch.autograd.profiler._is_profiler_enabled
