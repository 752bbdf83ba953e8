"""Whether the cute backend can run here, and if not, exactly why. An answer, never an exception.

Runs in KForge's process: it asks the driver for the device (no DSL import: ``import cutlass`` takes seconds) and
reads the DSL's installed version.
"""

from __future__ import annotations

from dataclasses import dataclass

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Availability, Backend
from kforge_nvidia.driver import driver_device

from .dsl_info import INSTALL_HINT, MIN_CAPABILITY, dsl_version, supports, tvm_ffi_version


@dataclass(frozen=True)
class DeviceSeen:
    name: str
    capability: tuple[int, int]

    @property
    def arch(self) -> str:
        return f"sm_{self.capability[0]}{self.capability[1]}"


def judge(version: str | None, device: DeviceSeen | None, tvm_ffi: str | None = None) -> Availability:
    """The answer for a DSL version (None: not installed), the device found (None: none) and the TVM-FFI version
    (None: not installed, which leaves kernels callable, only slower to call). Every reason that applies is given,
    so one look says all that is missing."""
    reasons = []
    if version is None:
        reasons.append(f"the CuTe DSL is not installed ({INSTALL_HINT})")
    if device is None:
        reasons.append("no CUDA device (no NVIDIA driver or GPU found)")
    elif not supports(device.capability):
        reasons.append(f"{device.name} is {device.arch}; the CuTe DSL backend needs Hopper or Blackwell "
                       f"(sm_{MIN_CAPABILITY[0]}{MIN_CAPABILITY[1]} or newer)")
    if reasons:
        return Availability.no("; ".join(reasons))
    assert device is not None
    calls = f"TVM-FFI {tvm_ffi}" if tvm_ffi else "no TVM-FFI (kernels are called through DLPack)"
    return Availability.yes(f"{device.name}, {device.arch}, CuTe DSL {version}, {calls}")


def device_seen() -> DeviceSeen | None:
    """GPU 0 as the driver reports it, or None without a driver or device."""
    device = driver_device(0)
    return DeviceSeen(device.name, device.capability) if device is not None else None


def cute_availability() -> Availability:
    return judge(dsl_version(), device_seen(), tvm_ffi_version())


@hookimpl
def kforge_backend_availability(backend: Backend) -> Availability:
    return cute_availability()
