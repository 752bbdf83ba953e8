"""The backend this plugin registers."""

from __future__ import annotations

from typing import Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend
from kforge_nvidia.device import CudaDevice

from .options import CuteOptions

CUTE = Backend(
    name="cute",
    programming_model="CuTe DSL",
    device="cuda",
    description="CuTe DSL kernels (@cute.kernel, cute.compile) launched from ModelNew (NVIDIA Hopper and Blackwell)",
    options_type=CuteOptions,
    device_class=CudaDevice,  # the NVIDIA layer's device: timing, L2 flush, poisoning, CUDA faults
)


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(CUTE)
