"""The devices the core itself provides (the host CPU, :mod:`.cpu`), the choice of a backend's device class, and the
harness's policy around a device (:mod:`.harness_device`). Other devices come with their plugins
(``Backend.device_class``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cpu import CpuDevice
from .harness_device import HarnessDevice

if TYPE_CHECKING:
    from ..device import Device
    from ..records import Backend

__all__ = ["CpuDevice", "HarnessDevice", "device_class_of", "make_device"]


def device_class_of(backend: Backend) -> type[Device]:
    """The class that serves ``backend``'s device: its own, or the core's built-in CPU device.

    :raises ValueError: when ``backend`` names no class and its device is not the host CPU.
    """
    if backend.device_class is not None:
        return backend.device_class
    if backend.device != CpuDevice.torch_type:
        raise ValueError(f"backend {backend.name!r} runs on device {backend.device!r} but names no device_class; "
                         f"the only device built into the core is the host CPU ({CpuDevice.torch_type!r})")
    return CpuDevice


def make_device(backend: Backend, *, flush_bytes: int = 0) -> HarnessDevice:
    """The device a worker uses for ``backend``: its class's instance, with the harness's policy around it
    (``flush_bytes``: ``harness.l2_flush_bytes``, 0: the device decides)."""
    return HarnessDevice(device_class_of(backend)(backend), flush_bytes=flush_bytes)
