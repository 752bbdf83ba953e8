"""Timing each kernel a candidate dispatches through a ``compile_shader`` library, during a few probe forwards.

Libraries hand out their kernels by attribute (``lib.rmsnorm``); while probing, the library type's
``__getattr__`` returns the kernel wrapped so that each dispatch is timed on its own: the queue is drained,
``torch.mps.Event`` pairs bracket the dispatch, and its grid and the bytes of its tensor arguments are kept. The
original ``__getattr__`` is back when probing ends. Draining around every dispatch makes a forward slower than
it is: the probe times kernels, the timed forwards time the whole.
"""

from __future__ import annotations

import contextlib
import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterator

from .metal_profile import KernelTime


@dataclass(frozen=True)
class Dispatch:
    kernel: str
    us: float
    bytes: int
    threads: tuple[int, ...]
    group_size: tuple[int, ...]


def _sizes(value: Any) -> tuple[int, ...]:
    if value is None:
        return ()
    return (int(value),) if isinstance(value, int) else tuple(int(v) for v in value)


class _TimedKernel:
    def __init__(self, name: str, kernel: Any, dispatches: list[Dispatch]) -> None:
        self._name, self._kernel, self._dispatches = name, kernel, dispatches

    def __getattr__(self, attribute: str) -> Any:  # max_threads_per_threadgroup and kin
        return getattr(self._kernel, attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import torch

        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        torch.mps.synchronize()
        start, end = torch.mps.Event(enable_timing=True), torch.mps.Event(enable_timing=True)
        start.record()
        result = self._kernel(*args, **kwargs)
        end.record()
        end.synchronize()
        threads = kwargs.get("threads")
        if threads is None and tensors:
            threads = tensors[0].numel()
        self._dispatches.append(Dispatch(self._name, start.elapsed_time(end) * 1e3,
                                         sum(t.numel() * t.element_size() for t in tensors),
                                         _sizes(threads), _sizes(kwargs.get("group_size"))))
        return result


@contextlib.contextmanager
def probing_dispatches() -> Iterator[list[Dispatch] | None]:
    """Dispatches of ``compile_shader`` kernels made inside, timed; None where this torch has no such library."""
    import torch

    library_type = getattr(torch._C, "_mps_ShaderLibrary", None)
    if library_type is None:
        yield None
        return
    original = library_type.__getattr__
    dispatches: list[Dispatch] = []

    def timed(library: Any, name: str) -> Any:
        return _TimedKernel(name, original(library, name), dispatches)

    library_type.__getattr__ = timed
    try:
        yield dispatches
    finally:
        library_type.__getattr__ = original


def kernel_times(dispatches: list[Dispatch], forwards: int) -> tuple[KernelTime, ...]:
    """Per kernel: dispatches per forward, median time and bytes per dispatch; slowest in total first."""
    by_kernel: dict[str, list[Dispatch]] = defaultdict(list)
    for dispatch in dispatches:
        by_kernel[dispatch.kernel].append(dispatch)
    times = [
        KernelTime(name=name, calls_per_forward=len(calls) / max(forwards, 1),
                   us_per_call=statistics.median(d.us for d in calls),
                   bytes_per_call=int(statistics.median(d.bytes for d in calls)),
                   threads=calls[-1].threads, group_size=calls[-1].group_size)
        for name, calls in by_kernel.items()
    ]
    return tuple(sorted(times, key=lambda k: -k.us_per_call * k.calls_per_forward))
