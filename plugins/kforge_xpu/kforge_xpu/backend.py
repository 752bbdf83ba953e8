"""The ``xpu`` backend and its options (``[backends.xpu]`` in ``kforge.toml``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, options_hash

from .device import XpuDevice

_METRIC_GROUP = re.compile(r"^[A-Za-z0-9_]+$")


@dataclass(frozen=True)
class XpuOptions:
    """``[backends.xpu]``: how Triton candidates for Intel GPUs are compiled and profiled.

    :param warmup_forward: call ``ModelNew`` once on the problem's inputs in the compile stage, so that Triton's
        JIT (and Intel's ``ocloc``/IGC behind it) builds there and its failures are compile errors.
    :param use_unitrace: profile with Intel's ``unitrace`` when it is found; otherwise (or when it fails) the
        PyTorch profiler's XPU activities are used.
    :param unitrace: path to ``unitrace``; empty: found on PATH.
    :param metric_group: the hardware metric group unitrace queries per kernel (``-q -g GROUP``); empty: none,
        kernel times and properties only.
    :param profile_calls: forwards profiled after two warm-up calls.
    :param tool_timeout_s: wall-clock limit for one unitrace run.
    """

    warmup_forward: bool = True
    use_unitrace: bool = True
    unitrace: str = ""
    metric_group: str = "ComputeBasic"
    profile_calls: int = 3
    tool_timeout_s: float = 300.0

    def __post_init__(self) -> None:
        if self.metric_group and not _METRIC_GROUP.match(self.metric_group):
            raise ValueError(f"backends.xpu.metric_group = {self.metric_group!r}: a unitrace metric group name "
                             "(ComputeBasic, MemoryProfile, ...) or empty")
        if self.profile_calls < 1:
            raise ValueError(f"backends.xpu.profile_calls = {self.profile_calls}: must be >= 1")
        if self.tool_timeout_s <= 0:
            raise ValueError("backends.xpu.tool_timeout_s must be > 0")

    def hash(self) -> str:
        """A stable digest of every option."""
        return options_hash(self)


XPU = Backend(
    name="xpu",
    programming_model="Triton",
    device="xpu",
    description="@triton.jit kernels launched from ModelNew (Intel GPUs: Arc B-series, Data Center GPU Max)",
    options_type=XpuOptions,
    device_class=XpuDevice,
)


def xpu_options(options: XpuOptions | None) -> XpuOptions:
    """The options a hook was given, or the defaults when the caller passed None."""
    return options if options is not None else XpuOptions()


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(XPU)
