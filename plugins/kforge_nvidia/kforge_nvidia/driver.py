"""What the CUDA driver says about the GPUs, asked through ``libcuda`` directly: no PyTorch, so the KForge process
can say whether a backend runs here without importing torch (3 to 6 s on a busy GPU machine) before its workers
start. The ordinals are those PyTorch uses, under the same ``CUDA_VISIBLE_DEVICES``."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

# CUdevice_attribute values of the driver API.
MULTIPROCESSOR_COUNT = 16
CLOCK_RATE_KHZ, MEMORY_CLOCK_KHZ, MEMORY_BUS_BITS = 13, 36, 37
CAPABILITY_MAJOR, CAPABILITY_MINOR = 75, 76
_NAME_BYTES = 256


@dataclass(frozen=True)
class DriverDevice:
    """One GPU as the driver reports it."""

    name: str
    capability: tuple[int, int]
    sm_count: int


def _library() -> Any | None:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None


def driver_version() -> int | None:
    """The CUDA version the driver supports, as the driver API encodes it (13000 for 13.0); None without a driver."""
    cuda = _library()
    if cuda is None:
        return None
    version = ctypes.c_int()
    return version.value if cuda.cuDriverGetVersion(ctypes.byref(version)) == 0 else None


def device_count() -> int | None:
    """How many GPUs this process sees; None without a driver, 0 where it starts without a usable GPU."""
    cuda = _library()
    if cuda is None:
        return None
    count = ctypes.c_int()
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def _opened(ordinal: int) -> tuple[Any, ctypes.c_int] | None:
    """The driver and its handle of device ``ordinal``; None without a driver or that device."""
    cuda = _library()
    device = ctypes.c_int()
    if cuda is None or cuda.cuInit(0) != 0 or cuda.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
        return None
    return cuda, device


def _attributes(cuda: Any, device: ctypes.c_int, attributes: tuple[int, ...]) -> tuple[int, ...]:
    values = []
    for attribute in attributes:
        value = ctypes.c_int()
        ok = cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, device) == 0
        values.append(value.value if ok else 0)
    return tuple(values)


def driver_attributes(ordinal: int, attributes: tuple[int, ...]) -> tuple[int, ...] | None:
    """The values of CUdevice_attribute ``attributes`` of device ``ordinal``; None without a driver or device, 0
    where one is not said."""
    opened = _opened(ordinal)
    return _attributes(*opened, attributes) if opened is not None else None


def driver_capability(ordinal: int = 0) -> tuple[int, int] | None:
    """Device ``ordinal``'s compute capability, as ``torch.cuda.get_device_capability`` gives it; None without a
    driver or device."""
    values = driver_attributes(ordinal, (CAPABILITY_MAJOR, CAPABILITY_MINOR))
    if values is None or values[0] == 0:
        return None
    return values[0], values[1]


def driver_device(ordinal: int = 0) -> DriverDevice | None:
    """Device ``ordinal``'s name, compute capability and SM count; None without a driver or that device."""
    opened = _opened(ordinal)
    if opened is None:
        return None
    cuda, device = opened
    name = ctypes.create_string_buffer(_NAME_BYTES)
    if cuda.cuDeviceGetName(name, _NAME_BYTES, device) != 0:
        return None
    major, minor, sm_count = _attributes(cuda, device, (CAPABILITY_MAJOR, CAPABILITY_MINOR, MULTIPROCESSOR_COUNT))
    return DriverDevice(name.value.decode(errors="replace"), (major, minor), sm_count)
