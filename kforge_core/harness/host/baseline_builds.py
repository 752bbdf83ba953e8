"""The ``torch.compile`` baselines of coming problems, built ahead and side by side, into Inductor's on-disk caches.

A ``torch.compile`` build of a whole architecture is seconds to minutes of CPU work (compiling in one process), and
the baseline worker builds one problem at a time. Builders are baseline workers of their own that build the
baselines of the problems a harness was told are coming, several at once on the host's cores, and keep nothing but
what Inductor and Triton write into their caches (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR``: the baseline
workers' own, in KForge's state directory, out of every candidate's reach): when the baseline worker builds the same
problem's baseline afterwards, it finds the graph, its kernels and their tuned configurations there, and a second
bench of the same suite finds them too. A builder is an ordinary baseline worker (the same start, the same settings,
so the caches' keys are the baseline worker's): it never runs candidate code.

Builders are stopped while a candidate is timed (:meth:`BaselineBuilds.pause`): their compiled calls, and the
tuning runs of the kernels they build, would share the device with the timed runs. A builder with nothing left to
build ends, and gives its device memory back.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from dataclasses import dataclass
from typing import Callable

from ...records import Problem
from .baseline_worker import BaselineWorker, stopped

BUILT_BASELINES = ("compile",)  # the baselines whose build is worth doing ahead (eager's is the model's constructor)
# a builder's wait for one build: its own limit, times this, since the builder is stopped while candidates are timed
PAUSED_ALLOWANCE = 3


@dataclass
class _Build:
    state: str = "queued"  # queued, building, built, failed
    began: float = 0.0  # time.monotonic() when a builder took it
    seconds: float = 0.0  # how long it took, once built or failed
    error: str = ""


class BaselineBuilds:
    """Builds ``names`` (the baselines that need a build: ``compile``) of the problems :meth:`request` is given, in
    up to ``builders`` baseline workers at once.

    :param make_builder: a new builder (a :class:`BaselineWorker`), given its number.
    :param timeout_s: the limit of one build (the baseline worker's: its start and ``compile_timeout_s``).
    """

    def __init__(self, make_builder: Callable[[int], BaselineWorker], builders: int, names: tuple[str, ...],
                 timeout_s: float) -> None:
        self._make_builder, self._most, self._names, self._timeout_s = make_builder, builders, names, timeout_s
        self._builds: dict[str, _Build] = {}
        self._queue: list[tuple[str, Problem]] = []
        self._running: list[BaselineWorker] = []
        self._threads: list[threading.Thread] = []
        self._serving = 0  # builder threads that have not decided to end
        self._numbers = itertools.count(1)
        self._paused = 0  # nested pauses
        self._closed = False
        self._changed = threading.Condition()

    @property
    def names(self) -> tuple[str, ...]:
        """The baselines these builders build."""
        return self._names

    def request(self, problem: Problem) -> None:
        """Build ``problem``'s baselines, once, after those requested before."""
        with self._changed:
            if self._closed or problem.digest in self._builds:
                return
            self._builds[problem.digest] = _Build()
            self._queue.append((problem.digest, problem))
            if self._serving < min(self._most, len(self._queue) + self._building_locked()):
                self._serving += 1
                thread = threading.Thread(target=self._serve, name=f"kforge-baseline-builder-{len(self._threads)}",
                                          daemon=True)
                self._threads.append(thread)
                thread.start()
            self._changed.notify_all()

    def hurry(self, digest: str) -> None:
        """``digest``'s build, where it is still queued, goes first: its problem is the current one."""
        with self._changed:
            queued = next((i for i, (known, _) in enumerate(self._queue) if known == digest), None)
            if queued:
                self._queue.insert(0, self._queue.pop(queued))

    def state(self, digest: str) -> str:
        """``queued``, ``building``, ``built``, ``failed``, or ``""`` for a problem never requested."""
        with self._changed:
            build = self._builds.get(digest)
            return build.state if build is not None else ""

    def done(self, digest: str) -> bool:
        """Whether nothing is left to wait for: built, failed, or never requested here."""
        with self._changed:
            return self._done_locked(digest)

    def wait(self, digest: str, timeout_s: float) -> bool:
        """Wait until ``digest``'s build is done (never while a candidate is timed: the builders are stopped
        then); True when it is."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not self._closed and not self._done_locked(digest):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return self._done_locked(digest)

    def missing(self, digest: str) -> str:
        """Why ``digest``'s baselines could not be measured yet, in words, for the verdict."""
        with self._changed:
            build = self._builds.get(digest)
            if build is None:
                return "not built"
            if build.state == "queued":
                return (f"its build had not begun when the candidate was timed ({len(self._queue)} problems' builds "
                        "queued); it goes on, and a later evaluation of this problem finds it in Inductor's cache")
            if build.state == "building":
                return (f"its build was still running ({time.monotonic() - build.began:.0f} s in) when the candidate "
                        "was timed; it goes on, and a later evaluation of this problem finds it in Inductor's cache")
            return build.error or f"built in {build.seconds:.1f} s"

    def seconds(self, digest: str) -> float | None:
        """How long ``digest``'s build took, once it is done."""
        with self._changed:
            build = self._builds.get(digest)
            return build.seconds if build is not None and build.state in ("built", "failed") else None

    def pause(self) -> None:
        """Stop every builder (and any started later) until :meth:`resume`."""
        with self._changed:
            self._paused += 1
            if self._paused == 1:
                for builder in self._running:
                    builder.pause()

    def resume(self) -> None:
        with self._changed:
            self._paused = max(0, self._paused - 1)
            if self._paused == 0:
                for builder in self._running:
                    builder.resume()

    def paused(self) -> contextlib.AbstractContextManager[None]:
        """Every builder stopped within the block, going on after it."""
        return stopped(self)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._queue.clear()
            running = list(self._running)
            self._changed.notify_all()
        for builder in running:
            builder.resume()
            builder.discard()  # a build under way is not waited for
        for thread in self._threads:
            thread.join(timeout=10)

    # ------------------------------------------------------------------------------------------ inside

    def _done_locked(self, digest: str) -> bool:
        build = self._builds.get(digest)
        return build is None or build.state in ("built", "failed")

    def _building_locked(self) -> int:
        return sum(build.state == "building" for build in self._builds.values())

    def _serve(self) -> None:
        """One builder's thread: take the next problem, build it, until none is left (then the builder ends)."""
        builder: BaselineWorker | None = None
        build: _Build | None = None
        ended = False
        try:
            while True:
                with self._changed:
                    if not self._queue or self._closed:  # ends under the lock that saw nothing left
                        ended = self._end_locked(builder)
                        return
                    digest, problem = self._queue.pop(0)
                    build = self._builds[digest]
                    build.state, build.began = "building", time.monotonic()
                    if builder is None:
                        builder = self._make_builder(next(self._numbers))
                        self._running.append(builder)
                    builder.get_ready(problem, self._names)
                    if self._paused:
                        builder.pause()
                builder.wait_ready(self._timeout_s * PAUSED_ALLOWANCE)
                with self._changed:
                    build.seconds = time.monotonic() - build.began
                    build.state, build.error = ("failed", builder.failed) if builder.failed else ("built", "")
                    self._changed.notify_all()
        finally:
            if not ended:  # something raised: the build it held is not left waited for
                with self._changed:
                    if build is not None and build.state == "building":
                        build.state, build.error = "failed", "its builder ended before the build was done"
                    self._end_locked(builder)
            if builder is not None:
                builder.resume()
                builder.close()

    def _end_locked(self, builder: BaselineWorker | None) -> bool:
        self._serving -= 1
        if builder is not None and builder in self._running:
            self._running.remove(builder)
        self._changed.notify_all()
        return True
