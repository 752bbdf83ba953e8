"""Each timed call's inputs are made behind a pad whose size follows the run's number, held until the call's
outputs are copied, under every timer: run ``n`` of the candidate and run ``n`` of a baseline are made behind the
same pad however their blocks are cut, so both are timed over the same spread of places in device memory. None on
the host CPU, with the setting off, or where the largest pad would take too much of the available memory."""

from __future__ import annotations

import contextlib
import types

import pytest
import torch

from kforge_core.device import MemoryStats
from kforge_core.devices.harness_device import HarnessDevice
from kforge_core.harness.worker import placement_spread as spread_module
from kforge_core.harness.worker import run_timing
from kforge_core.harness.worker.placement_spread import MOST_SHARE_OF_AVAILABLE, PAD_MIB, PlacementSpread
from kforge_core.harness.worker.run_timing import time_runs, timing_method
from kforge_core.settings import HarnessSettings

from .test_timing_sequence import ClockedHoldingDevice, LoggedDevice

PADS = tuple(mib << 20 for mib in PAD_MIB)


class LoggedSpread(PlacementSpread):
    """A spread that logs each pad it holds, and when it lets it go, into the device's log."""

    log: list[str] = []

    @contextlib.contextmanager
    def around(self, run: int):
        self.log.append(f"pad {self.pad_bytes(run) >> 20}")
        with super().around(run):
            yield
        self.log.append("pad gone")


def _timed_log(monkeypatch, device: LoggedDevice, runs: range, settings: HarnessSettings) -> list[str]:
    LoggedSpread.log = device.log
    monkeypatch.setattr(run_timing, "PlacementSpread", LoggedSpread)
    real_fresh = run_timing.fresh_inputs

    def fresh(pool, index):  # noqa: ANN001
        device.log.append("inputs")
        return real_fresh(pool, index)

    monkeypatch.setattr(run_timing, "fresh_inputs", fresh)
    reference = types.SimpleNamespace(pool=[[torch.ones(4)]], pool_seeds=[7])

    def call(x: torch.Tensor) -> torch.Tensor:
        device.log.append("call")
        return x * 2

    time_runs(call, reference, HarnessDevice(device), settings, runs=runs)
    return device.log


def _per_call(log: list[str]) -> list[list[str]]:
    """The log cut at each timed call's pad."""
    calls: list[list[str]] = []
    for entry in log:
        if entry.startswith("pad ") and entry != "pad gone":
            calls.append([])
        if calls:
            calls[-1].append(entry)
    return calls


def test_every_timed_call_under_every_timer_is_made_behind_its_runs_pad(monkeypatch):
    device = ClockedHoldingDevice(streams=1)
    settings = HarnessSettings(warmup=1, repetitions=3)
    log = _timed_log(monkeypatch, device, range(3), settings)
    calls = _per_call(log)
    assert len(calls) == 3 * 3  # the device clock's runs, then wall and events for each run
    for call in calls:
        assert call.index("inputs") < call.index("call") < call.index("pad gone"), call
    pads = [int(call[0].split()[1]) for call in calls]
    assert pads == [PAD_MIB[0], PAD_MIB[1], PAD_MIB[2], PAD_MIB[0], PAD_MIB[0], PAD_MIB[1], PAD_MIB[1],
                    PAD_MIB[2], PAD_MIB[2]]
    # the warm-up run is made behind no pad
    assert log.index("call") < log.index(f"pad {PAD_MIB[0]}")


def test_a_runs_pad_is_the_same_however_the_blocks_are_cut(monkeypatch):
    settings = HarnessSettings(warmup=0, repetitions=12)
    whole = _timed_log(monkeypatch, LoggedDevice(), range(12), settings)
    cut = []
    for block in (range(0, 5), range(5, 9), range(9, 12)):
        cut += _timed_log(monkeypatch, LoggedDevice(), block, settings)

    def pads(log: list[str]) -> list[str]:
        return [entry for entry in log if entry.startswith("pad ") and entry != "pad gone"]

    assert pads(whole) == pads(cut)
    assert len(set(pads(whole))) == len(PAD_MIB)


def test_a_runs_pad_cycles_through_the_sizes_by_its_number():
    spread = PlacementSpread("cpu", PADS)
    with spread.around(3):
        assert spread.pad_bytes(3) == PAD_MIB[3] << 20
    assert spread.pad_bytes(len(PAD_MIB)) == 0 == PAD_MIB[0]
    assert PlacementSpread("cpu").pad_bytes(3) == 0


def _device(*, host_cpu: bool = False, available: int = 0):
    return types.SimpleNamespace(host_cpu=host_cpu, torch_device="cpu",
                                 memory=lambda: MemoryStats(total=available, available=available))


def test_no_spread_on_the_host_cpu_with_the_setting_off_or_where_the_pads_would_crowd_the_device():
    on = HarnessSettings()
    assert PlacementSpread.for_block(_device(), on).pads_bytes == PADS  # available memory unknown
    assert PlacementSpread.for_block(_device(available=80 << 30), on).pads_bytes == PADS
    assert PlacementSpread.for_block(_device(host_cpu=True), on).pads_bytes == ()
    assert PlacementSpread.for_block(_device(), HarnessSettings(placement_spread=False)).pads_bytes == ()
    crowded = int(max(PADS) / MOST_SHARE_OF_AVAILABLE) - 1
    assert PlacementSpread.for_block(_device(available=crowded), on).pads_bytes == ()
    assert PlacementSpread.for_block(_device(available=crowded + 2), on).pads_bytes == PADS


def test_the_timing_method_says_where_the_spread_is_made():
    reference = types.SimpleNamespace(pool=[[torch.ones(4)]], pool_seeds=[7])
    accelerator = HarnessDevice(LoggedDevice())
    assert "behind a pad of" in timing_method(accelerator, HarnessSettings(), reference).notes
    assert "behind a pad of" not in timing_method(accelerator, HarnessSettings(placement_spread=False),
                                                  reference).notes
    assert spread_module.spread_note(types.SimpleNamespace(host_cpu=True), HarnessSettings()) == ""


@pytest.mark.gpu
def test_the_timed_calls_inputs_lie_at_several_places_on_the_gpu():
    """On a GPU the pads move where each run's inputs are made: without them the caching allocator hands every run
    the block the last one freed."""
    from kforge_core.devices import make_device
    from kforge_cuda import CUDA

    device = make_device(CUDA)
    device.start()
    reference = types.SimpleNamespace(pool=[[torch.ones(1 << 20, device="cuda")]], pool_seeds=[7])

    def places(settings: HarnessSettings) -> set[int]:
        seen: set[int] = set()

        def call(x: torch.Tensor) -> torch.Tensor:
            seen.add(x.data_ptr())
            return x.add(1)

        time_runs(call, reference, device, settings, timers=("wall",))
        return seen

    unspread = places(HarnessSettings(warmup=1, repetitions=10, placement_spread=False))
    spread = places(HarnessSettings(warmup=1, repetitions=10))
    assert len(spread) >= 3 and len(spread) > len(unspread), (len(spread), len(unspread))
