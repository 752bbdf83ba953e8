"""The hotspots worker's thread on a timing CPU of its own while it times the model's steps, as the harness's workers
time theirs (``kforge_core/harness/cpu_placement.py``): a step set by the host's launches runs as fast as the CPU that
launches it, and one that moves between CPUs, or shares one with other work, times slower by as much as it pays."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from ...harness.cpu_placement import choose_placement, on_timing_cpu, settle


@contextlib.contextmanager
def timing_cpu(device: Any) -> Iterator[None]:
    """The calling thread on a claimed timing CPU for the block, the process's other threads on the rest of its NUMA
    node; on the host CPU (whose model's work takes every core) or where no CPU can be claimed, as it was."""
    claimed = None if device.host_cpu else choose_placement()
    if claimed is None:
        yield
        return
    try:
        settle(claimed.placement)
        with on_timing_cpu():
            yield
    finally:
        claimed.release()
