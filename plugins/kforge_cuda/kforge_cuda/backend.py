"""The two backends this plugin registers."""

from __future__ import annotations

from kforge_core.records import Backend

from .device import CudaDevice
from .options import CudaOptions, TritonOptions

CUDA = Backend(
    name="cuda",
    programming_model="CUDA C++",
    device="cuda",
    description="CUDA C++ kernels built by nvcc into a cached library, launched from ModelNew (NVIDIA GPUs)",
    options_type=CudaOptions,
    device_class=CudaDevice,
)
TRITON = Backend(
    name="triton",
    programming_model="Triton",
    device="cuda",
    description="@triton.jit kernels launched from ModelNew (NVIDIA GPUs)",
    options_type=TritonOptions,
    device_class=CudaDevice,
)
BACKENDS = {b.name: b for b in (CUDA, TRITON)}
