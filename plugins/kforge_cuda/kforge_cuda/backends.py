"""The two backends this plugin registers."""

from __future__ import annotations

from kforge_core.records import Backend

from .options import CudaOptions, TritonOptions

CUDA = Backend(
    name="cuda",
    programming_model="CUDA C++",
    device="cuda",
    description="CUDA C++ kernels built by nvcc into a cached library, launched from ModelNew (NVIDIA GPUs)",
    options_type=CudaOptions,
    visible_devices_env="CUDA_VISIBLE_DEVICES",
)
TRITON = Backend(
    name="triton",
    programming_model="Triton",
    device="cuda",
    description="@triton.jit kernels launched from ModelNew (NVIDIA GPUs)",
    options_type=TritonOptions,
    visible_devices_env="CUDA_VISIBLE_DEVICES",
)
BACKENDS = {b.name: b for b in (CUDA, TRITON)}


def ours(backend: Backend) -> bool:
    return backend.name in BACKENDS
