"""The backend this plugin registers."""

from __future__ import annotations

from kforge_core.records import Backend
from kforge_cuda.device import CudaDevice

from .options import CuteOptions

CUTE = Backend(
    name="cute",
    programming_model="CuTe DSL",
    device="cuda",
    description="CuTe DSL kernels (@cute.kernel, cute.compile) launched from ModelNew (NVIDIA Hopper and Blackwell)",
    options_type=CuteOptions,
    device_class=CudaDevice,  # the cuda backend's device: timing, L2 flush, poisoning, CUDA faults
)
