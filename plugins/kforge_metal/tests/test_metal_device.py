"""The Apple GPU as the harness drives it: fault texts of the MPS runtime and Metal classified here; the device's
operations themselves need the GPU (``mps`` tests)."""

from __future__ import annotations

import pytest

from kforge_core.records import Failure
from kforge_metal.device import MetalDevice
from kforge_metal.device_facts import MetalFacts
from kforge_metal.faults import classify_fault, classify_fault_text

# The texts the MPS allocator and Metal's command-buffer errors carry.
OOM = ("MPS backend out of memory (MPS allocated: 17.23 GB, other allocations: 1.02 GB, max allowed: 18.13 GB). "
       "Tried to allocate 1.00 GB on private pool.")
PAGE_FAULT = ("Error: command buffer exited with error status.\n\tThe Metal Performance Shaders operations encoded "
              "on it may not have completed.\n\tError: \n\t(null)\n\tCaused GPU Address Fault Error "
              "(0000000b:kIOGPUCommandBufferCallbackErrorPageFault)")
TIMEOUT = "Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)"
VICTIM = "Discarded (victim of GPU error/recovery) (00000005:kIOGPUCommandBufferCallbackErrorInnocentVictim)"
GPU_OOM = "Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"


@pytest.mark.parametrize("text, failure", [
    (OOM, Failure.OUT_OF_MEMORY), (GPU_OOM, Failure.OUT_OF_MEMORY), (PAGE_FAULT, Failure.DEVICE_FAULT),
    (TIMEOUT, Failure.DEVICE_FAULT), (VICTIM, Failure.DEVICE_FAULT),
    ("index 5 is out of bounds for dimension 0 with size 4", None),
    ("Failed to create function state object for: rmsnorm2", None),  # the compile stage's, not a fault
])
def test_fault_texts_are_classified(text, failure):
    assert classify_fault_text(text) == failure
    assert classify_fault(RuntimeError(text)) == failure


def test_the_device_names_itself_and_its_facts_without_the_gpu():
    device = MetalDevice(MetalFacts(chip="Apple M4 Pro", gpu_cores=20, working_set_bytes=36 << 30))
    assert (device.torch_device, device.name) == ("mps", "Apple M4 Pro, 20-core GPU")
    facts = device.facts()
    assert facts["gpu_cores"] == 20 and facts["simd_width"] == 32 and facts["threadgroup_memory_bytes"] == 32768


@pytest.mark.mps
def test_the_device_operations_on_the_gpu():
    import torch

    device = MetalDevice()
    x = torch.ones(1 << 20, device="mps")
    timer = device.timer()
    timer.start()
    y = x * 2
    assert timer.stop() >= 0.0 and float(y.sum().item()) == 2.0 * (1 << 20)
    device.flush_caches()
    device.synchronize()
    memory = device.memory()
    assert memory.allocated > 0 and memory.recommended_max > 0
    with device.poison_free_memory([4 << 20]):
        leftover = torch.empty(1 << 20, dtype=torch.float32, device="mps")
        device.synchronize()
    assert device.name.startswith("Apple")
    del leftover
