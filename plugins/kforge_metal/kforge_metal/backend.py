"""The ``metal`` backend and its options (``[backends.metal]`` in ``kforge.toml``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, options_hash

from .device import MetalDevice


@dataclass(frozen=True)
class MetalOptions:
    """``[backends.metal]``: how candidates for Apple GPUs are compiled and profiled.

    :param first_forward: run ``ModelNew`` once on the problem's inputs in the compile stage, so that shaders
        compiled in ``__init__`` or on the first call are compiled there, and their errors are compile errors.
    :param profile_forwards: forwards timed with ``torch.mps.Event`` (and traced) when profiling.
    :param xctrace: record a Metal System Trace with ``xcrun xctrace`` while profiling, where Xcode is installed.
    :param xctrace_timeout_s: wall-clock limit of one ``xctrace record`` (and of each export).
    :param profile_image: render the profile as a picture (a kernel timeline and a bandwidth chart) for the
        analysis agent.
    """

    first_forward: bool = True
    profile_forwards: int = 10
    xctrace: bool = True
    xctrace_timeout_s: float = 300.0
    profile_image: bool = True

    def __post_init__(self) -> None:
        if self.profile_forwards < 1:
            raise ValueError(f"backends.metal.profile_forwards = {self.profile_forwards}: must be >= 1")
        if self.xctrace_timeout_s <= 0:
            raise ValueError(f"backends.metal.xctrace_timeout_s = {self.xctrace_timeout_s}: must be > 0")

    def hash(self) -> str:
        return options_hash(self)


METAL = Backend(
    name="metal",
    programming_model="Metal Shading Language",
    device="mps",
    description="MSL kernels compiled at run time with torch.mps.compile_shader, dispatched from ModelNew (Apple GPUs)",
    options_type=MetalOptions,
    code_languages=("python", "metal"),
    device_class=MetalDevice,
)


def metal_options(options: MetalOptions | None) -> MetalOptions:
    """The options a hook was given, or the defaults when the caller passed None."""
    return options if options is not None else MetalOptions()


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(METAL)
