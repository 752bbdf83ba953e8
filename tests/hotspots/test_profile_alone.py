"""The step as the profiler sees it alone: each phase's steps in a session of their own, after a warm step, with none
of the tracker's hooks in the model, taken in turns with the steps measured without it; and the thread that times
them on a CPU of its own (no GPU needed: the host CPU's profile)."""

from __future__ import annotations

import os
import types

import pytest
import torch

from kforge_core.hotspots.worker.phases import Driver
from kforge_core.hotspots.report import phase_line
from kforge_core.hotspots.worker.profile import measured_and_profiled, span_us
from kforge_core.hotspots.worker.profiler_cost import burst_pair_us, cost_per_operation_us
from kforge_core.hotspots.worker.timing_cpu import timing_cpu
from torch.profiler import ProfilerActivity


class Recorder(torch.nn.Module):
    """A forward that notes, each call, whether a profiler is on."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(32, 32)
        self.profiled: list[bool] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.profiled.append(torch.autograd.profiler._is_profiler_enabled)
        return torch.relu(self.linear(x))


def host_device() -> types.SimpleNamespace:
    def start_timer():
        return lambda: 1.0
    return types.SimpleNamespace(profiler_activity=None, synchronize=lambda: None, flush_caches=lambda: None,
                                 start_timer=start_timer, host_cpu=True, torch_device="cpu")


def test_measured_and_profiled_steps_are_taken_in_turns_each_session_after_one_warm_step():
    model = Recorder()
    found = measured_and_profiled(Driver(model, (torch.randn(8, 32),), causal_lm=False), host_device(),
                                  decode_steps=5, profile_steps=3, repetitions=2)
    # the same steps without the profiler, then in a session: one warm step, three timed or profiled; twice
    assert model.profiled == [False, False, False, False, False, True, True, True] * 2
    assert list(found) == ["forward"]
    samples = found["forward"]
    assert samples.measured == [1 / 3, 1 / 3] and len(samples.profiled) == 2  # the clock over three steps and min(samples.profiled) > 0
    assert samples.operations >= 2  # the host's operators of a step: at least the linear layer's and the relu
    assert samples.own_cost_us >= 0


def test_the_profilers_own_cost_is_a_burst_inside_a_session_less_one_without():
    device, seen = host_device(), []
    device.synchronize = lambda: seen.append(torch.autograd.profiler._is_profiler_enabled)
    plain, profiled = burst_pair_us(device, [ProfilerActivity.CPU], launches=200)
    assert seen == [False, False, False, False, True, True]  # a warm burst, one timed without, one inside a session
    assert plain > 0 and profiled > 0
    assert cost_per_operation_us([(1.0, 3.5), (1.2, 3.0), (0.9, 3.1)]) == pytest.approx(3.1 - 1.0)
    assert cost_per_operation_us([(2.0, 1.5)]) == 0.0  # never negative: a profiler that cost nothing


def test_the_report_says_what_the_profiler_added_per_operation():
    figures = {"measured_step_ms": 8.0, "measured_spread": 0.02, "profiled_step_ms": 9.0, "operations_per_step": 400,
               "profiler_vs_measured": 9.0 / 8.0, "profiled_device_ms": 2.0, "device_busy": 0.25, "weight": 1.0}
    line = phase_line({"phases": {"decode": figures}}, "decode")
    assert "9 ms profiled (112% of it, 2.5 us more for each of its 400 operations)" in line
    figures.update(profiler_us_per_operation=2.0, profiled_less_own_cost_ms=8.2)
    line = phase_line({"phases": {"decode": figures}}, "decode")
    assert ("(112% of it, 2.5 us more for each of its 400 operations; the profiler's own cost, measured apart, 2 us an "
            "operation: 8.2 ms without it, 102%)") in line
    figures.update(profiled_step_ms=7.9, profiler_vs_measured=7.9 / 8.0)
    assert "(99% of it)" in phase_line({"phases": {"decode": figures}}, "decode")


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinities are Linux's")
def test_an_accelerators_steps_are_timed_on_a_cpu_of_their_own_and_the_host_cpus_on_every_core():
    before = os.sched_getaffinity(0)
    try:
        with timing_cpu(types.SimpleNamespace(host_cpu=False)):
            inside = os.sched_getaffinity(0)
        settled = os.sched_getaffinity(0)  # the process's other threads on the node, the timing CPU left out
        assert len(inside) == 1 and inside <= before and settled <= before
        with timing_cpu(types.SimpleNamespace(host_cpu=True)):
            assert os.sched_getaffinity(0) == settled
    finally:
        os.sched_setaffinity(0, before)


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

    with pytest.raises(RuntimeError, match="second profiled step"):
        measured_and_profiled(Driver(Failing(), (torch.randn(8, 32),), causal_lm=False), host_device(),
                              decode_steps=5, profile_steps=3, repetitions=1)
    assert not torch.autograd.profiler._is_profiler_enabled
