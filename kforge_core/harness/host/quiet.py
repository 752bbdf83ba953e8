"""What else a harness runs stays quiet while a candidate is timed: no worker starting beside the timed runs (a spare
still starting is paused), no worker getting ready for the next problem's baselines running (its start and the
problem's preparation, which makes that problem's inputs on the device, finish first; its baselines' builds are then
paused, as a builder's are), no builder of coming problems' ``torch.compile`` baselines running (each is stopped:
its compiled calls and kernel tuning would share the device with the timed runs), and no build either where builds
may not run beside them (``prebuild_during_timing`` off, and always on the host CPU, whose cores the timed runs
need): running builds finish first, queued ones wait."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator

from .baselines_window import BaselinesWindow
from .pool import WorkerPool
from .prebuild import Prebuilder


@dataclass(frozen=True)
class QuietForTiming:
    """:param builds_beside: whether builds (candidates' ahead, the next problem's baselines) may go on beside a
    timed run."""

    pool: WorkerPool
    prebuilder: Prebuilder
    builds_beside: bool
    baselines: BaselinesWindow | None = None

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        baselines = self.baselines.quiet() if self.baselines is not None else contextlib.nullcontext()
        with self.pool.starts_paused(), baselines:
            if not self.builds_beside:
                with self.prebuilder.held():
                    yield
            else:
                yield
