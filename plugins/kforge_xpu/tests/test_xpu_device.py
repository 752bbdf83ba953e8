"""XpuDevice, the xpu backend's device, against StandInXpu, an explicit stand-in for torch.xpu passed to it (no
Intel GPU here): the calls it makes, what it times, how much it flushes, which free blocks it poisons, what it
reports, and which of Intel's runtime errors it reads as a device fault or out-of-memory. The real torch.xpu runs
it in test_xpu_on_intel.py (``make xpu-test``)."""

import pytest

from kforge_core.devices import make_device
from kforge_core.devices.harness_device import HarnessDevice
from kforge_core.records import Failure
from kforge_xpu.backend import XPU
from kforge_xpu.device import XpuDevice

from xpu_testing import StandInXpu, b580_properties


def _device(xpu: StandInXpu | None = None, **kwargs) -> tuple[HarnessDevice, StandInXpu]:
    """The device as a worker holds it (the harness's policy around XpuDevice), and the stand-in it calls."""
    xpu = xpu or StandInXpu(b580_properties(last_level_cache_size=1 << 20))
    return HarnessDevice(XpuDevice(XPU, xpu=xpu), **kwargs), xpu


def test_the_backend_hands_the_core_this_device():
    assert XPU.device_class is XpuDevice
    device = make_device(XPU)  # the real torch.xpu: constructible without an Intel GPU, used only in a worker
    assert isinstance(device.vendor, XpuDevice) and device.torch_device.type == "xpu"
    assert XpuDevice.profiler_activity == "XPU"


def test_names_and_synchronizes_the_whole_device():
    device, xpu = _device()
    assert (device.hardware_name(), device.label) == ("Intel(R) Arc(TM) B580 Graphics", "xpu:0")
    device.synchronize()
    assert xpu.calls == ["synchronize"]


def test_events_timer_reads_device_events():
    device, xpu = _device()
    assert device.timers == ("wall", "events")
    span = device.start_events()
    xpu.clock_ms += 1.25
    span.stop()
    assert span.elapsed_ms() == 1.25
    assert xpu.calls == ["event.record", "event.record", "event.synchronize"]
    assert "torch.xpu.Event" in device.describe_timer("events")


def test_flush_writes_twice_the_last_level_cache_at_least_the_fields_256_mib_or_what_is_asked():
    assert _device()[0].flush_bytes == 256 << 20  # twice its 1 MiB cache is less than the field's flush
    large = StandInXpu(b580_properties(last_level_cache_size=192 << 20))
    assert _device(large)[0].flush_bytes == 384 << 20
    assert _device(flush_bytes=4096)[0].flush_bytes == 4096
    unknown = StandInXpu(b580_properties(last_level_cache_size=0))
    assert _device(unknown)[0].flush_bytes == 256 * 1024 * 1024  # PyTorch without the property: the core's default


def test_the_free_blocks_to_poison_are_this_devices_inactive_ones_largest_first():
    device, xpu = _device()
    xpu.snapshot = [
        {"device": 0, "blocks": [{"size": 64, "state": "inactive"}, {"size": 4096, "state": "active_allocated"}]},
        {"device": 0, "blocks": [{"size": 1024, "state": "inactive"}]},
        {"device": 1, "blocks": [{"size": 512, "state": "inactive"}]},  # another device's
    ]
    assert device.vendor.free_block_sizes() == [1024, 64]

    class NoSnapshot(StandInXpu):
        def memory_snapshot(self):
            raise RuntimeError("snapshots are not supported")

    assert _device(NoSnapshot())[0].vendor.free_block_sizes() == []


def test_memory_figures_come_from_the_allocator_and_the_driver():
    device, xpu = _device()
    xpu.allocated, xpu.reserved, xpu.peak, xpu.free = 100, 200, 300, 5000
    stats = device.memory()
    assert (stats.allocated, stats.reserved, stats.total) == (100, 200, 12168933376)
    assert device.vendor.free_memory() == (5000, 12168933376) and device.vendor.peak_allocated() == 300


def test_facts_a_prompt_may_quote():
    facts = _device()[0].facts()
    assert facts["name"] == "Intel(R) Arc(TM) B580 Graphics" and facts["device"] == "xpu:0"
    assert (facts["Xe-cores"], facts["EUs"], facts["sub-group sizes"]) == ("20", "160", "16/32")
    assert facts["memory bandwidth"].startswith("456 GB/s (stated by Intel")


# Error texts as Intel's stack prints them (quoted from public issue reports against intel-xpu-backend-for-triton
# and torch-xpu-ops, and from Intel's Triton driver source, which prints Level Zero results in hex or decimal).
@pytest.mark.parametrize("text, failure", [
    ("UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)", Failure.OUT_OF_MEMORY),
    ("Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 (PI_ERROR_OUT_OF_RESOURCES)",
     Failure.OUT_OF_MEMORY),
    ("UR backend failed. UR backend returns:20 (UR_RESULT_ERROR_DEVICE_LOST)", Failure.DEVICE_FAULT),
    ("Triton Error [ZE]: 0x70000001", Failure.DEVICE_FAULT),
    ("Triton Error [ZE]: 1879048195", Failure.OUT_OF_MEMORY),  # decimal 0x70000003
    ("Triton Error [ZE] /tmp/tmpx/main.cpp:197: ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET", Failure.DEVICE_FAULT),
    ("Triton Error [ZE]: 0x78000011", None),  # a bad kernel name: the candidate's error, not the device's
    ("The size of tensor a (3) must match the size of tensor b (4)", None),
])
def test_runtime_errors_are_read_in_the_runtimes_words(text, failure):
    assert _device()[0].classify(RuntimeError(text)) is failure
