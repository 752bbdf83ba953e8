"""The backend this plugin registers, ``triton`` (Triton kernels on an NVIDIA GPU), and its options
(``[backends.triton]`` in ``kforge.toml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend
from kforge_nvidia.device import CudaDevice
from kforge_nvidia.options import NvidiaOptions


@dataclass(frozen=True)
class TritonOptions(NvidiaOptions):
    """``[backends.triton]``: :class:`~kforge_nvidia.options.NvidiaOptions`; Triton compiles and caches kernels
    itself (under the KForge cache directory)."""


TRITON = Backend(
    name="triton",
    programming_model="Triton",
    device="cuda",
    description="@triton.jit kernels launched from ModelNew (NVIDIA GPUs)",
    options_type=TritonOptions,
    device_class=CudaDevice,
)


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(TRITON)
