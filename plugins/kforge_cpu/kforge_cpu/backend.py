"""The ``cpu`` backend and its options (``[backends.cpu]`` in ``kforge.toml``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend


@dataclass(frozen=True)
class CpuOptions:
    """``[backends.cpu]``: how candidates for the host CPU are compiled and profiled.

    :param fastmath: whether candidates may use ``fastmath=True`` (reassociated, vectorised reductions; results
        can differ from the reference in the last bits). When False, a candidate that uses it fails to compile.
    :param threads: how many threads Numba's parallel loops use; 0 uses every CPU Numba sees.
    :param profile_repetitions: timed forwards per measurement when profiling (after one warm-up forward).
    :param thread_scaling: whether the profile also times the forward at 1, 2, 4, ... threads.
    """

    fastmath: bool = True
    threads: int = 0
    profile_repetitions: int = 5
    thread_scaling: bool = True

    def __post_init__(self) -> None:
        cpus = os.cpu_count() or 1
        if not 0 <= self.threads <= cpus:
            raise ValueError(f"backends.cpu.threads = {self.threads}: use 0 (every CPU) up to {cpus} on this machine")
        if self.profile_repetitions < 1:
            raise ValueError(f"backends.cpu.profile_repetitions = {self.profile_repetitions}: must be >= 1")


CPU_BACKEND = Backend(
    name="cpu",
    programming_model="Numba",
    device="cpu",
    description="the host CPU: @njit(parallel=True) kernels on NumPy views of CPU tensors",
    options_type=CpuOptions,
)


@hookimpl
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    register(CPU_BACKEND)


def cpu_options(options: CpuOptions | None) -> CpuOptions:
    """The options a hook was given, or the defaults when the caller passed None."""
    return options if options is not None else CpuOptions()
