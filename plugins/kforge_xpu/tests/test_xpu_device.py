"""The device layer against StandInXpu, an explicit stand-in for torch.xpu (no Intel GPU here): which calls it
makes, what it times, what it writes to flush and to poison, what it reports. The real torch.xpu runs it in
test_xpu_on_intel.py (``make xpu-test``)."""

import torch
import pytest

from kforge_core.harness.device import POISON_WORD
from kforge_core.records import Failure
from kforge_xpu.device import FALLBACK_FLUSH_BYTES, XpuDevice

from xpu_testing import StandInXpu, b580_properties


class Allocations:
    """Allocates on the host (real tensors, real writes) and remembers what it handed out."""

    def __init__(self) -> None:
        self.tensors: list[torch.Tensor] = []

    def __call__(self, nbytes: int) -> torch.Tensor:
        tensor = torch.full((nbytes,), 0xAB, dtype=torch.uint8)
        self.tensors.append(tensor)
        return tensor


def _device(xpu=None, **kwargs) -> tuple[XpuDevice, StandInXpu, Allocations]:
    xpu = xpu or StandInXpu(b580_properties(last_level_cache_size=1 << 20))
    allocations = Allocations()
    return XpuDevice(xpu, 0, empty=allocations, **kwargs), xpu, allocations


def test_names_and_synchronizes_the_whole_device():
    device, xpu, _ = _device()
    assert (device.name, device.torch_device) == ("Intel(R) Arc(TM) B580 Graphics", "xpu:0")
    device.synchronize()
    assert xpu.calls == ["synchronize"]


def test_timer_reads_device_events_after_waiting_for_the_whole_device():
    device, xpu, _ = _device()
    timer = device.timer()
    timer.start()
    xpu.clock_ms += 1.25
    assert timer.stop() == 1.25
    assert xpu.calls == ["event.record", "event.record", "synchronize"]


def test_flush_writes_twice_the_last_level_cache_and_waits():
    device, xpu, allocations = _device()
    device.flush_caches()
    device.flush_caches()
    (buffer,) = allocations.tensors  # allocated once, written every time
    assert buffer.numel() == 2 << 20 and int(buffer.max()) == 0
    assert xpu.calls == ["synchronize", "synchronize"]


def test_flush_size_when_the_cache_is_unknown_or_chosen():
    unknown = StandInXpu(b580_properties(last_level_cache_size=0))
    assert XpuDevice(unknown, empty=Allocations()).flush_bytes == FALLBACK_FLUSH_BYTES
    assert XpuDevice(unknown, empty=Allocations(), flush_bytes=4096).flush_bytes == 4096


def test_poison_fills_each_free_block_and_each_output_size():
    device, xpu, allocations = _device()
    xpu.snapshot = [
        {"device": 0, "blocks": [{"size": 64, "state": "inactive"}, {"size": 4096, "state": "active_allocated"}]},
        {"device": 0, "blocks": [{"size": 1024, "state": "inactive"}]},
        {"device": 1, "blocks": [{"size": 512, "state": "inactive"}]},  # another device's
    ]
    with device.poison_free_memory(output_bytes=(10,)):
        sizes = [t.numel() for t in allocations.tensors]
        assert sizes == [1024, 64, 12]  # largest free block first; the output size rounded up to whole words
        for tensor in allocations.tensors:
            assert bool((tensor.view(torch.int32) == POISON_WORD).all())
    assert xpu.calls == ["synchronize"]


def test_poison_without_a_snapshot_still_poisons_the_outputs():
    class NoSnapshot(StandInXpu):
        def memory_snapshot(self):
            raise RuntimeError("snapshots are not supported")

    device, _, allocations = _device(NoSnapshot())
    with device.poison_free_memory(output_bytes=(8,)):
        assert [t.numel() for t in allocations.tensors] == [8]


def test_memory_figures_come_from_the_allocator_and_the_driver():
    device, xpu, _ = _device()
    xpu.allocated, xpu.peak, xpu.free = 100, 300, 5000
    stats = device.memory()
    assert (stats.allocated, stats.peak_allocated, stats.free, stats.total) == (100, 300, 5000, 12168933376)
    device.reset_peak_memory()
    assert device.memory().peak_allocated == 100


# Error texts as Intel's stack prints them (quoted from public issue reports against intel-xpu-backend-for-triton
# and torch-xpu-ops, and from Intel's Triton driver source).
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
    device, _, _ = _device()
    assert device.classify(RuntimeError(text)) is failure


def test_pytorch_out_of_memory_is_out_of_memory():
    device, _, _ = _device()
    assert device.classify(torch.OutOfMemoryError("XPU out of memory. Tried to allocate 2.00 GiB")) is \
        Failure.OUT_OF_MEMORY


def test_facts_as_plain_data():
    device, _, _ = _device()
    facts = device.facts_dict()
    assert facts["xe_cores"] == 20 and facts["sub_group_sizes"] == (16, 32)
    assert facts["bandwidth"]["bytes_per_s"] == 456e9
