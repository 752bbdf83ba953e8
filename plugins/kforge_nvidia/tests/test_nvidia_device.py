"""The NVIDIA device without a GPU: the CUDA runtime's faults, the caching allocator's free blocks, and every
NVIDIA backend handing the harness this device."""

from __future__ import annotations

import subprocess
import sys

import torch

from kforge_core.devices import make_device
from kforge_core.plugin_api import classify_exception
from kforge_core.records import Failure
from kforge_cuda import CUDA
from kforge_cute import CUTE
from kforge_nvidia.device import CudaDevice, free_cuda_blocks
from kforge_triton import TRITON


def test_every_nvidia_backend_runs_on_the_cuda_device():
    assert CUDA.device_class is CudaDevice and TRITON.device_class is CudaDevice and CUTE.device_class is CudaDevice


def test_the_cuda_runtimes_faults_are_classified_by_the_device():
    device = make_device(CUDA)  # no GPU needed to read error texts
    assert classify_exception(RuntimeError("CUDA error: an illegal memory access was encountered"), device) is \
        Failure.DEVICE_FAULT
    assert classify_exception(RuntimeError("CUDA error: device-side assert triggered"), device) is \
        Failure.DEVICE_FAULT
    assert classify_exception(RuntimeError("CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate"), device) is \
        Failure.OUT_OF_MEMORY
    assert classify_exception(RuntimeError("CUDA error: an illegal memory access was encountered")) is \
        Failure.RUNTIME  # the core alone does not know CUDA's words


def test_the_free_blocks_of_the_cuda_caching_allocator_are_found_for_poisoning(monkeypatch):
    segments = [
        {"device": 0, "blocks": [{"size": 2 << 20, "state": "inactive"}, {"size": 512, "state": "active_allocated"},
                                 {"size": 1024, "state": "inactive"}]},
        {"device": 0, "blocks": [{"size": 6 << 30, "state": "inactive"}, {"size": 4 << 30, "state": "inactive"}]},
        {"device": 1, "blocks": [{"size": 1 << 20, "state": "inactive"}]},
    ]
    monkeypatch.setattr(torch.cuda, "memory_snapshot", lambda: segments)
    # largest first, only free blocks of this device, at most 8 GiB in all
    assert free_cuda_blocks(torch.device("cuda", 0)) == [6 << 30, 2 << 20, 1024]


def test_naming_the_device_imports_no_torch():
    code = "import sys, kforge_nvidia.device, kforge_cuda, kforge_triton, kforge_cute; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
