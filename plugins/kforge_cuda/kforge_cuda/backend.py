"""The backend this plugin registers: ``cuda``, CUDA C++ kernels on an NVIDIA GPU."""

from __future__ import annotations

from typing import Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend
from kforge_nvidia.device import CudaDevice

from .options import CudaOptions

CUDA = Backend(
    name="cuda",
    programming_model="CUDA C++",
    device="cuda",
    description="CUDA C++ kernels built by nvcc into a cached library, launched from ModelNew (NVIDIA GPUs)",
    options_type=CudaOptions,
    device_class=CudaDevice,
)


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(CUDA)
