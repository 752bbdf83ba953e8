"""The order of a timed run's steps on a device with events, without processes: the wall clock starts after the
flush is drained; the events sample is queued behind the flush (the field's way, Triton's ``do_bench`` and
KernelBench), so that the launch the flush covers is not counted; both calls of a run go to the output checks; and
the flush a device timed by events writes is at least the field's; where the device can hold its queue, the hold
comes between the flush and the start event, as long as the run's wall-clock call and no longer than the call's
launch needs, and only where the device timer saw the call's work on one stream."""

from __future__ import annotations

import contextlib
import time
import types

import pytest
import torch

from kforge_core.device import FIELD_FLUSH_BYTES, Device, DeviceClock, MemoryStats
from kforge_core.devices.harness_device import EVENTS_HOLD, EVENTS_SEQUENCE, HOLD_LIMIT_MS, HarnessDevice
from kforge_core.harness.worker import run_timing as timing
from kforge_core.harness.worker.run_timing import LAUNCH_MARGIN_MS, NO_HOLD, calls_per_run, keep_outputs, time_runs
from kforge_core.records import Backend
from kforge_core.settings import HarnessSettings
from kforge_core.timing.timed_runs import GUARD_RUNS, guard_only

BACKEND = Backend(name="logged", programming_model="PyTorch", device="cpu")


class LoggedEvent:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def record(self) -> None:
        self.log.append("record")

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: LoggedEvent) -> float:
        return 1.0


class LoggedDevice(Device):
    """A device whose queue is a log: what the harness asked of it, in order."""

    torch_type = "cpu"
    event_timer = "logged events"

    def __init__(self, *, floor: int = 0) -> None:
        self.flush_floor_bytes = floor
        self.log: list[str] = []
        super().__init__(BACKEND)

    def cache_bytes(self) -> int:
        return 1024

    def synchronize(self) -> None:
        self.log.append("drain")

    def flush(self, nbytes: int) -> None:
        self.log.append("flush")

    def event(self) -> LoggedEvent:
        return LoggedEvent(self.log)


class HoldingDevice(LoggedDevice):
    """A logged device that can hold its queue, and whose work takes ``busy_s`` to drain after each call."""

    queue_hold = "a logged hold"

    def __init__(self, busy_s: float = 0.0) -> None:
        super().__init__()
        self.busy_s = busy_s
        self.holds: list[float] = []
        self.pending = False

    def hold(self, ms: float) -> None:
        self.log.append("hold")
        self.holds.append(ms)

    def synchronize(self) -> None:
        super().synchronize()
        if self.pending:
            time.sleep(self.busy_s)
            self.pending = False


class StreamsClock(DeviceClock):
    """A device clock that saw each run's work on ``count`` streams."""

    def __init__(self, log: list[str], count: int) -> None:
        self.log, self.count, self.runs = log, count, 0

    def run(self, index: int):
        self.log.append("device run")
        self.runs += 1
        return contextlib.nullcontext()

    def busy_ms(self) -> list[float]:
        return [0.5] * self.runs

    def streams(self) -> int:
        return self.count


class ClockedHoldingDevice(HoldingDevice):
    device_timer = "a clock that counts streams"

    def __init__(self, streams: int) -> None:
        super().__init__()
        self.streams = streams

    def device_clock(self) -> StreamsClock:
        return StreamsClock(self.log, self.streams)


def _timed(device: LoggedDevice, repetitions: int = 2, host_s: float = 0.0):
    reference = types.SimpleNamespace(pool=[[torch.ones(4)]], pool_seeds=[7])
    settings = HarnessSettings(warmup=0, repetitions=repetitions)
    returned: list[int] = []
    labels: list[str] = []

    def call(x: torch.Tensor) -> torch.Tensor:
        device.log.append("call")
        if host_s:
            time.sleep(host_s)  # the host's side of the call: its launch
        if isinstance(device, HoldingDevice):
            device.pending = True
        return x * 2

    def kept(run: int, label: str, outputs) -> None:  # noqa: ANN001
        returned.append(run)
        labels.append(label)
        assert outputs.leaves[0].tolist() == [2.0] * 4 and outputs.structure == (None,)

    timed = time_runs(call, reference, HarnessDevice(device), settings, returned=kept)
    device.labels = labels
    return timed, returned


def test_the_events_sample_is_queued_behind_the_flush_and_the_wall_clock_starts_after_the_drain():
    device = LoggedDevice()
    timed, _ = _timed(device, repetitions=1)
    log = device.log
    wall_call, events_call = (i for i, step in enumerate(log) if step == "call")
    assert log[wall_call - 2:wall_call] == ["flush", "drain"]  # the wall clock: flushed, then drained
    assert "record" not in log[:wall_call]
    # the events: what came before drained, the flush queued and not waited for, the start event right behind it
    assert log[events_call - 4:events_call + 3] == ["drain", "drain", "flush", "record", "call", "record", "drain"]
    assert sorted(timed.samples_ms) == ["events", "wall"] and timed.samples_ms["events"] == [1.0]


def test_both_calls_of_a_timed_run_reach_the_output_checks():
    device = LoggedDevice()
    _, returned = _timed(device, repetitions=3)
    assert calls_per_run(HarnessDevice(device)) == 2 and returned == [0, 0, 1, 1, 2, 2]
    assert device.labels[:2] == ["timed run 0", "timed run 0 (events)"]  # each with a copy of its outputs
    assert device.log.count("call") == 6


def test_a_device_without_events_makes_one_call_per_timed_run():
    device = LoggedDevice()
    device.event_timer = ""
    timed, returned = _timed(device, repetitions=3)
    assert calls_per_run(HarnessDevice(device)) == 1 and returned == [0, 1, 2] and "record" not in device.log
    assert list(timed.samples_ms) == ["wall"]


def test_the_events_timer_says_how_its_samples_are_taken():
    assert HarnessDevice(LoggedDevice()).describe_timer("events") == f"logged events; {EVENTS_SEQUENCE}"
    assert "behind the cache flush" in EVENTS_SEQUENCE and "not drained" in EVENTS_SEQUENCE


def test_a_device_timed_by_events_flushes_at_least_the_fields_buffer_unless_told():
    assert HarnessDevice(LoggedDevice()).flush_bytes == 2048  # twice its cache, no floor
    assert HarnessDevice(LoggedDevice(floor=FIELD_FLUSH_BYTES)).flush_bytes == FIELD_FLUSH_BYTES
    assert HarnessDevice(LoggedDevice(floor=FIELD_FLUSH_BYTES), flush_bytes=4096).flush_bytes == 4096  # the setting


def test_gpu_devices_take_the_fields_flush_as_their_floor():
    from kforge_metal.device import MetalDevice
    from kforge_nvidia.device import CudaDevice
    from kforge_xpu.device import XpuDevice

    assert CudaDevice.flush_floor_bytes == XpuDevice.flush_floor_bytes == MetalDevice.flush_floor_bytes == (
        FIELD_FLUSH_BYTES)


def test_a_device_that_can_hold_its_queue_holds_it_between_the_flush_and_the_start_event():
    device = HoldingDevice()
    _timed(device, repetitions=1)
    log = device.log
    events_call = [i for i, step in enumerate(log) if step == "call"][1]
    assert log[events_call - 5:events_call + 1] == ["drain", "drain", "flush", "hold", "record", "call"]
    assert "hold" not in log[:events_call - 5]  # the wall clock's call is not held
    assert f"{EVENTS_HOLD} (a logged hold)" in HarnessDevice(device).describe_timer("events")
    assert "hold" not in HarnessDevice(LoggedDevice()).describe_timer("events")


def test_the_hold_is_twice_the_runs_wall_clock_call_then_twice_the_calls_launch():
    # 9 ms of device work behind a quick launch: the first hold is twice the wall-clock call's time and a margin;
    # once an events call's launch was timed, twice that and a margin (a launch of microseconds took 4 ms on a loaded
    # host: with 5 ms of work, more than half the first hold)
    device = HoldingDevice(busy_s=0.009)
    timed, _ = _timed(device, repetitions=3)
    first, *later = device.holds
    # (capped at the limit: a loaded host can take more than 1 ms over the wall-clock call of 9 ms of work)
    assert first == pytest.approx(min(2 * timed.samples_ms["wall"][0] + LAUNCH_MARGIN_MS, HOLD_LIMIT_MS))
    assert later and all(hold < first / 2 for hold in later)  # not the 5 ms call's: its launch's
    # a 3 ms launch is held for twice that: launched at half the host's speed, it would still be queued in full
    device = HoldingDevice()
    _timed(device, repetitions=2, host_s=0.003)
    assert all(6.0 < hold <= HOLD_LIMIT_MS for hold in device.holds), device.holds
    # a launch longer than half the hold limit: held for the limit every time (HarnessDevice.hold caps what it asks)
    device = HoldingDevice()
    _timed(device, repetitions=2, host_s=HOLD_LIMIT_MS / 1e3 * 0.6)
    assert device.holds == [HOLD_LIMIT_MS, HOLD_LIMIT_MS]
    # a quick call on an idle device: never held longer than twice its wall-clock call and the margin
    device = HoldingDevice()
    timed, _ = _timed(device, repetitions=3)
    assert all(hold <= 2 * wall + LAUNCH_MARGIN_MS for hold, wall in zip(device.holds, timed.samples_ms["wall"]))


def test_a_device_that_cannot_hold_is_never_asked_to():
    device = LoggedDevice()
    HarnessDevice(device).hold(0.5)
    _timed(device, repetitions=2)
    assert "hold" not in device.log


def test_the_queue_is_held_only_where_the_device_timer_saw_one_stream():
    # the device timer's runs come first in a block; a hold on the caller's stream would not hold a side stream's
    # work, which would then run unseen while it lasts
    device = ClockedHoldingDevice(streams=1)
    timed, _ = _timed(device, repetitions=2)
    assert device.log.index("device run") < device.log.index("call") and device.holds
    assert list(timed.samples_ms) == ["wall", "events", "device"] and timed.device_streams == 1
    assert timed.unheld_streams == 0 and timed.hold_note() == "" and timed.launch_bound() == ()
    device = ClockedHoldingDevice(streams=2)
    timed, _ = _timed(device, repetitions=2)
    assert device.holds == [] and timed.device_streams == 2 and timed.samples_ms["device"] == [0.5, 0.5]
    # and the timing notes say that no hold was made, and what the events figure then counts
    assert timed.unheld_streams == 2 and timed.hold_note().startswith(f"{NO_HOLD}: their work ran on 2 streams")
    assert timed.launch_bound() == ("events",)  # the verdict takes its fastest run (timing/launch_bound.py)


def _blocks(device: LoggedDevice, timers: tuple[str, ...], series: str) -> list:
    """Two blocks of three runs of one series, under ``timers``, with ``events`` the headline."""
    reference = types.SimpleNamespace(pool=[[torch.ones(4)]], pool_seeds=[7])
    settings = HarnessSettings(warmup=0, repetitions=6, timer="events")
    harness_device = HarnessDevice(device)

    def call(x: torch.Tensor) -> torch.Tensor:
        device.log.append("call")
        return x * 2

    return [time_runs(call, reference, harness_device, settings, runs=range(start, start + 3), timers=timers,
                      series=series) for start in (0, 3)]


@pytest.mark.parametrize("streams", [1, 2])
def test_a_long_calls_device_clock_guards_the_first_runs_and_its_streams_keep_the_later_blocks_hold(streams):
    device = ClockedHoldingDevice(streams=streams)
    first, later = _blocks(device, ("events", "device"), series=f"guarded on {streams}")
    assert device.log.count("device run") == GUARD_RUNS == 2  # runs 0 and 1, then none
    assert first.samples_ms["device"] == [0.5, 0.5] and "device" not in later.samples_ms
    assert len(first.samples_ms["events"]) == len(later.samples_ms["events"]) == 3
    # the later block holds the queue, or not, as the streams the first one saw allow
    assert later.device_streams == streams and later.unheld_streams == (0 if streams == 1 else 2)
    assert len(device.holds) == (6 if streams == 1 else 0)


def test_the_device_clock_takes_every_run_where_every_timer_is_measured_or_it_is_the_headline():
    device = ClockedHoldingDevice(streams=1)
    _blocks(device, (), series="every timer")
    assert device.log.count("device run") == 6
    assert not guard_only((), "events") and not guard_only(("device",), "device")
    assert guard_only(("events", "device"), "events") and guard_only(("wall", "device"), "wall")


class CrowdedDevice(LoggedDevice):
    """A device with ``free`` bytes left for this process."""

    def __init__(self, free: int) -> None:
        self.free_bytes = free
        super().__init__()

    def memory(self) -> MemoryStats:
        return MemoryStats(total=1 << 40, available=self.free_bytes)


def test_a_timed_calls_outputs_are_kept_in_host_memory_where_the_device_has_no_room_for_a_copy(monkeypatch):
    hosted: list[torch.Tensor] = []

    def host_copy(tensor: torch.Tensor) -> torch.Tensor:
        hosted.append(tensor)
        return tensor.clone()

    monkeypatch.setattr(timing, "host_copy", host_copy)
    monkeypatch.setattr(timing, "ASK_FROM_BYTES", 4096)
    output = (torch.arange(1024, dtype=torch.float32), torch.ones(8))  # 4,128 bytes
    for free, to_host in ((4 * 4128, False), (4 * 4128 - 1, True), (0, False)):  # 0: the device cannot tell
        hosted.clear()
        kept = keep_outputs(output, HarnessDevice(CrowdedDevice(free)))
        assert len(hosted) == (2 if to_host else 0)
        assert all(torch.equal(copy, original) and copy.data_ptr() != original.data_ptr()
                   for copy, original in zip(kept.leaves, output))
    monkeypatch.setattr(timing, "ASK_FROM_BYTES", 4129)  # smaller outputs: the device is not asked
    hosted.clear()
    keep_outputs(output, HarnessDevice(CrowdedDevice(1)))
    assert not hosted


def test_no_garbage_collection_falls_inside_a_timed_block_and_the_collector_runs_again_after():
    import gc

    device = LoggedDevice()
    reference = types.SimpleNamespace(pool=[[torch.ones(4)]], pool_seeds=[7])
    enabled_in_calls: list[bool] = []

    def call(x: torch.Tensor) -> torch.Tensor:
        enabled_in_calls.append(gc.isenabled())
        return x * 2

    assert gc.isenabled()
    time_runs(call, reference, HarnessDevice(device), HarnessSettings(warmup=1, repetitions=3))
    assert enabled_in_calls and not any(enabled_in_calls)
    assert gc.isenabled()


def test_a_reference_cycle_a_timed_call_leaves_goes_before_the_next_call():
    import weakref

    device = LoggedDevice()
    reference = types.SimpleNamespace(pool=[[torch.ones(4)]], pool_seeds=[7])
    left: list[weakref.ref] = []
    alive_at_calls: list[int] = []

    def call(x: torch.Tensor) -> torch.Tensor:
        alive_at_calls.append(sum(ref() is not None for ref in left))
        cycle: dict = {"output": x * 2}
        cycle["self"] = cycle  # holds its output until a collection
        left.append(weakref.ref(cycle["output"]))
        return cycle["output"]

    time_runs(call, reference, HarnessDevice(device), HarnessSettings(warmup=0, repetitions=3))
    assert len(alive_at_calls) == 6 and not any(alive_at_calls)  # two calls a run, wall and events


def test_a_launch_past_the_hold_is_said_in_the_timing_notes():
    # an 8 ms launch of 5 ms of device work, behind holds of twice the call and then twice the launch: covered (a
    # launch of microseconds behind a hold of twice that was past it whenever a loaded host delayed it a little)
    device = HoldingDevice(busy_s=0.005)
    timed, _ = _timed(device, repetitions=2, host_s=0.008)
    assert timed.launch_past_hold[:2] == (0, 2) and timed.hold_note() == "" and timed.launch_bound() == ()
    # a launch longer than the longest hold: every held run past it, and the notes say so
    device = HoldingDevice()
    timed, _ = _timed(device, repetitions=2, host_s=HOLD_LIMIT_MS / 1e3 * 1.3)
    past, held, longest = timed.launch_past_hold
    assert (past, held) == (2, 2) and longest > HOLD_LIMIT_MS
    assert "outlasted the hold before it in 2 of 2 runs" in timed.hold_note()
    assert timed.launch_bound() == ("events",)
    method = timing.TimingMethod("cpu", 0, 2, 0, "", "", True, notes="pool").noted(timed.hold_note())
    assert method.notes.startswith("pool; events: the call's launch outlasted")
    # a device that cannot hold its queue: no run was held, nothing to say
    timed, _ = _timed(LoggedDevice(), repetitions=2, host_s=0.001)
    assert timed.launch_past_hold == (0, 0, 0.0)


class WaitingDevice(HoldingDevice):
    """A device whose calls wait for it inside them (an ``.item()``, a synchronize): behind a hold, for the hold."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting_ms = 0.0

    def hold(self, ms: float) -> None:
        super().hold(ms)
        self.waiting_ms = ms


def test_a_call_that_waits_for_the_device_inside_it_does_not_grow_its_hold_run_by_run():
    device = WaitingDevice()
    reference = types.SimpleNamespace(pool=[[torch.ones(4)]], pool_seeds=[7])

    def call(x: torch.Tensor) -> torch.Tensor:
        time.sleep(0.002 + device.waiting_ms / 1e3)  # 2 ms of its own, then the wait for what was queued
        device.waiting_ms = 0.0
        return x * 2

    timed = time_runs(call, reference, HarnessDevice(device), HarnessSettings(warmup=0, repetitions=6))
    walls = timed.samples_ms["wall"]
    # twice the wall-clock call at most; sized from the launch alone, each hold was twice the last (2, 4, 8, 16 ms)
    assert all(hold <= 2 * max(walls) + LAUNCH_MARGIN_MS for hold in device.holds), (device.holds, walls)
