"""What else a harness runs stays quiet while a candidate is timed: no worker starting beside the timed runs (a spare
still starting is paused), and no build either where builds may not run beside them (``prebuild_during_timing``
off, and always on the host CPU, whose cores the timed runs need): running builds finish first, queued ones wait."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator

from .pool import WorkerPool
from .prebuild import Prebuilder


@dataclass(frozen=True)
class QuietForTiming:
    """:param builds_beside: whether builds (candidates' ahead, the next problem's baselines) may go on beside a
    timed run."""

    pool: WorkerPool
    prebuilder: Prebuilder
    builds_beside: bool

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self.pool.starts_paused():
            if not self.builds_beside:
                with self.prebuilder.held():
                    yield
            else:
                yield
