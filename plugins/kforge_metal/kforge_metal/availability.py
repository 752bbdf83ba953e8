"""Whether the ``metal`` backend runs here, and if not, exactly why. An answer, never an exception."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import Any

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Availability, Backend

from .backend import MetalOptions, metal_options


@dataclass(frozen=True)
class Platform:
    """What decides availability, read from this machine (:func:`this_platform`) or given by a test."""

    system: str  # platform.system(): "Darwin", "Linux", ...
    machine: str  # platform.machine(): "arm64", "x86_64"
    torch_version: str
    mps_built: bool  # torch.backends.mps.is_built()
    mps_available: bool  # torch.backends.mps.is_available()
    compile_shader: bool  # torch.mps.compile_shader exists


def this_platform() -> Platform:
    import torch

    return Platform(
        system=platform.system(),
        machine=platform.machine(),
        torch_version=torch.__version__,
        mps_built=bool(torch.backends.mps.is_built()),
        mps_available=bool(torch.backends.mps.is_available()),
        compile_shader=hasattr(torch.mps, "compile_shader"),
    )


def unavailable_reason(found: Platform) -> str | None:
    """Why candidates cannot run on ``found``, or None when they can. The first obstacle is the answer."""
    if found.system != "Darwin":
        return f"needs macOS on Apple silicon (this machine runs {found.system or 'an unknown system'})"
    if not found.mps_built:
        return f"no MPS device: this torch {found.torch_version} is built without MPS support"
    if not found.mps_available:
        return ("no MPS device: torch.backends.mps.is_available() is False (MPS needs macOS 12.3 or later and a "
                "Metal GPU)")
    if not found.compile_shader:
        return (f"torch {found.torch_version} has no torch.mps.compile_shader: install PyTorch 2.7 or later "
                "(2.6 has it only as the private torch.mps._compile_shader)")
    return None


def metal_availability(options: MetalOptions) -> Availability:
    found = this_platform()
    reason = unavailable_reason(found)
    if reason is not None:
        return Availability.no(reason)
    from .device_facts import read_device_facts
    from .xctrace import find_xctrace

    facts = read_device_facts()
    xctrace = "xctrace found" if options.xctrace and find_xctrace() else "no xctrace (Metal System Trace off)"
    return Availability.yes(f"{facts.headline()}, torch {found.torch_version}, {xctrace}")


@hookimpl
def kforge_backend_availability(backend: Backend, options: Any) -> Availability:
    return metal_availability(metal_options(options))
