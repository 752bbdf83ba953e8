"""One Nsight Compute profile at a time on this machine.

A profile replays each kernel many times under the GPU's performance counters. Two at once on one GPU (two tests,
two benches sharing a machine, each worker in its own sandbox with a ``/tmp`` of its own) left one of them without a
profile: it fell back to the PyTorch profiler, where alone each got Nsight Compute's. Profiles take turns through a
lock file in the build cache, the one directory every worker of the machine shares.
"""

from __future__ import annotations

import fcntl
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .ncu import NcuError

LOCK_FILE = "ncu.lock"
_POLL_S = 0.2


@contextmanager
def profiler_turn(lock_dir: Path, timeout_s: float) -> Iterator[None]:
    """Hold the machine's profiler for the block; waits for another profile to end, at most ``timeout_s``
    (then :class:`NcuError`)."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / LOCK_FILE, "a") as handle:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise NcuError(f"another Nsight Compute profile held this machine's profiler for "
                                   f"{timeout_s:.0f} s") from None
                time.sleep(_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
