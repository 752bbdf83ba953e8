"""The Apple GPU as the harness drives it (``MetalDevice``): its fault texts and its facts are tested here; its
operations on the GPU are ``mps`` tests."""

from __future__ import annotations

import pytest

import kforge_metal.device_facts
from kforge_core.device import FALLBACK_FLUSH_BYTES
from kforge_core.devices import make_device
from kforge_core.records import Failure
from kforge_metal.backend import METAL
from kforge_metal.device import MetalDevice
from kforge_metal.device_facts import MetalFacts

# The texts the MPS allocator and Metal's command-buffer errors carry.
OOM = ("MPS backend out of memory (MPS allocated: 17.23 GB, other allocations: 1.02 GB, max allowed: 18.13 GB). "
       "Tried to allocate 1.00 GB on private pool.")
PAGE_FAULT = ("Error: command buffer exited with error status.\n\tThe Metal Performance Shaders operations encoded "
              "on it may not have completed.\n\tError: \n\t(null)\n\tCaused GPU Address Fault Error "
              "(0000000b:kIOGPUCommandBufferCallbackErrorPageFault)")
TIMEOUT = "Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)"
VICTIM = "Discarded (victim of GPU error/recovery) (00000005:kIOGPUCommandBufferCallbackErrorInnocentVictim)"
GPU_OOM = "Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"


@pytest.fixture
def device(monkeypatch):
    facts = MetalFacts(chip="Apple M4 Pro", gpu_cores=20, metal_family="Metal 3", working_set_bytes=36 << 30)
    monkeypatch.setattr(kforge_metal.device_facts, "read_device_facts", lambda: facts)
    return make_device(METAL)


@pytest.mark.parametrize("text, failure", [
    (OOM, Failure.OUT_OF_MEMORY), (PAGE_FAULT, Failure.DEVICE_FAULT), (TIMEOUT, Failure.DEVICE_FAULT),
    (VICTIM, Failure.DEVICE_FAULT),
    (GPU_OOM, Failure.DEVICE_FAULT),  # a failed command buffer loses the queue's work, whatever its cause
    ("index 5 is out of bounds for dimension 0 with size 4", None),
    ("Failed to create function state object for: rmsnorm2", None),  # the compile stage's, not a fault
])
def test_fault_texts_are_classified(device, text, failure):
    assert device.classify(RuntimeError(text)) == failure


def test_the_backend_hands_the_core_its_device_and_the_device_names_itself(device):
    assert isinstance(device.vendor, MetalDevice) and str(device.torch_device) == "mps" and device.label == "mps"
    assert device.hardware_name() == "Apple M4 Pro, 20-core GPU"
    assert device.flush_bytes == FALLBACK_FLUSH_BYTES  # no cache size from torch.mps: 256 MiB is written
    assert not device.host_cpu and device.profiler_activity == ""
    facts = device.vendor.facts()
    assert facts["GPU cores"] == "20" and facts["recommended working set"] == "36.0 GiB"


@pytest.mark.mps
def test_the_device_operations_on_the_gpu():
    import torch

    device = make_device(METAL)
    device.start()
    x = torch.ones(1 << 20, device="mps")
    elapsed = device.start_timer()
    span = device.start_events()
    y = x * 2
    span.stop()
    device.synchronize()
    assert elapsed() >= 0.0 and span.elapsed_ms() >= 0.0 and float(y.sum().item()) == 2.0 * (1 << 20)
    device.flush_caches()
    memory = device.memory()
    assert memory.allocated > 0 and memory.total > 0
    device.poison([4 << 20])
    stale = torch.empty(1 << 20, dtype=torch.float32, device="mps")  # the poisoned block, handed back
    assert device.poisoned_fraction(stale) == 1.0
    assert device.hardware_name().startswith("Apple") and "GPU cores" in device.facts()
