"""The baseline worker: a worker of its own that times the eager and ``torch.compile`` baselines and never runs
candidate code (``torch.compile`` leaves threads and caches behind). It is kept from one candidate and one problem to
the next while it does not fail.

It works off the critical path: :meth:`BaselineWorker.get_ready` only sends requests (start, prepare the problem's
reference, build and compile the baselines) and returns at once, so the worker does all that while the candidate is
compiled and verified (:meth:`BaselineWorker.build_on_host`, sent as a candidate's evaluation begins, has the model
built on the host before that, while the reference's outputs are computed); :meth:`BaselineWorker.time_block` reads
those replies first, then times one block of runs.
A harness told the next problem keeps a second one getting ready for it (``Harness.expect_problem``) and swaps the
two when it moves on, so that a suite's ``torch.compile`` builds overlap the problem before theirs.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import deque
from pathlib import Path
from typing import Callable, Iterator, Protocol

from ...records import Failure, Problem
from ..protocol import BuildOnHost, MeasureBaselines, Prepare, Reply, WorkerInit
from .outside_clock import Interval
from .process import WorkerFault, WorkerProcess


# What each baseline imports that a worker does not import anyway: loaded as the worker starts, in the background.
BASELINE_MODULES = {"compile": ("torch._dynamo", "torch._inductor.compile_fx")}


class Pausable(Protocol):
    def pause(self) -> None: ...

    def resume(self) -> None: ...


@contextlib.contextmanager
def stopped(pausable: Pausable) -> Iterator[None]:
    """``pausable`` paused within the block, resumed after it, however the block ends."""
    pausable.pause()
    try:
        yield
    finally:
        pausable.resume()


def baseline_modules(names: tuple[str, ...]) -> tuple[str, ...]:
    """The modules the baselines ``names`` need beyond a worker's own, in order, each once."""
    return tuple(dict.fromkeys(module for name in names for module in BASELINE_MODULES.get(name, ())))


class BaselineWorker:
    """:param make_init: what a new worker is told. :param root: where its home directories go.
    :param start: starts a worker process (``WorkerProcess(init, home)``). :param name: its homes' names begin so
    (two baseline workers with one root need two)."""

    def __init__(self, make_init: Callable[[], WorkerInit], root: Path,
                 start: Callable[[WorkerInit, Path], WorkerProcess] = WorkerProcess, name: str = "baselines") -> None:
        self._make_init = make_init
        self._root = root
        self._name = name
        self._start = start
        self._numbers = itertools.count(1)
        self._worker: WorkerProcess | None = None
        self._problem = ""  # digest of the problem the worker was told to prepare
        self._asked: set[str] = set()  # the baselines it was told to build for that problem
        self._failed = ""  # why getting ready failed, for every block until the next get_ready
        # of the requests not answered yet, in order: whether each sets the worker up (its start, a problem's
        # preparation, its model on the host) rather than builds a baseline
        self._unanswered: deque[bool] = deque()

    @property
    def prepared_for(self) -> str:
        """The digest of the problem the worker was last told to prepare ("" when it has none, or died)."""
        return self._problem if self._worker is not None and self._worker.alive else ""

    @property
    def failed(self) -> str:
        """Why getting ready failed ("" when it did not)."""
        return self._failed

    def start(self) -> WorkerProcess:
        """The worker process, started if none is running (Python, torch, the device's context: seconds a first
        candidate's evaluation can overlap); returns without waiting for it."""
        if self._worker is not None and not self._worker.alive:
            self.discard()
        if self._worker is None:
            self._worker = self._start(self._make_init(), self._root / f"{self._name}-{next(self._numbers)}")
            self._problem, self._asked = "", set()
            self._unanswered = deque([True])  # its start answers once it is ready
        return self._worker

    def _send(self, worker: WorkerProcess, request: object, *, sets_up: bool) -> None:
        worker.send(request)
        self._unanswered.append(sets_up)

    def build_on_host(self, problem: Problem) -> None:
        """Start the worker if needed and, where it was not told ``problem`` yet, have it prepare ``problem`` and
        build its model on the host (``BuildOnHost``); returns without waiting. The model reaches the device only
        with :meth:`get_ready`'s builds, so a problem whose baselines get ready after the candidate's verification
        (large for the device) has its constructor's seconds overlap the reference's and the candidate's."""
        worker = self.start()
        if self._told(worker, problem):  # not when told already: get_ready's builds are under way or done
            self._send(worker, BuildOnHost(), sets_up=True)

    def get_ready(self, problem: Problem, names: tuple[str, ...]) -> None:
        """Start the worker if needed, have it prepare ``problem`` and build those of ``names`` it was not told to
        build for it yet; returns without waiting."""
        self._failed = ""
        worker = self.start()
        self._told(worker, problem)
        new = tuple(name for name in names if name not in self._asked)
        if new:
            self._send(worker, MeasureBaselines(new, (0, 0)), sets_up=False)
            self._asked.update(new)

    def _told(self, worker: WorkerProcess, problem: Problem) -> bool:
        """Have ``worker`` prepare ``problem`` unless it was told it already; whether it was told now."""
        if self._problem == problem.digest:
            return False
        self._send(worker, Prepare(problem), sets_up=True)
        self._problem, self._asked = problem.digest, set()
        return True

    def wait_prepared(self, timeout_s: float) -> None:
        """Wait until the worker has started and done what sets it up for its problem (the preparation, its model
        on the host); the baselines' builds it was sent after may still be under way (:meth:`paused` stops them).
        A failure discards the worker and is said by every later :meth:`time_block`."""
        worker = self._worker
        if worker is None:
            return
        replies: list[Reply] = []
        try:
            while True in self._unanswered:
                replies.append(worker.receive(timeout_s, "starting the baseline worker and preparing"))
                self._unanswered.popleft()
        except WorkerFault as fault:
            replies.append(Reply(failure=fault.failure, message=fault.message))
        self._judge(replies)

    def wait_ready(self, timeout_s: float) -> None:
        """Wait until what :meth:`get_ready` asked for is done (before any timed run, so that nothing is built
        beside one); a failure discards the worker and is said by every later :meth:`time_block`."""
        worker = self._worker
        if worker is None:
            return
        try:
            replies = worker.drain(timeout_s, "starting the baseline worker and building the baselines")
        except WorkerFault as fault:
            replies = [Reply(failure=fault.failure, message=fault.message)]
        self._unanswered.clear()
        self._judge(replies)

    def _judge(self, replies: list[Reply]) -> None:
        """Discard the worker where one of ``replies`` is a failure, and keep why."""
        failed = next((reply for reply in replies if reply.failure is not None), None)
        if failed is not None:
            self._failed = f"the baseline worker could not get ready: {failed.message}"
            self.discard()

    def time_block(self, name: str, block: tuple[int, int], timeout_s: float, timers: tuple[str, ...] = (),
                   held_ms: float = 0.0) -> Reply:
        """Time baseline ``name`` over the timed runs ``block`` under ``timers`` (every one when empty), each call
        held ``held_ms`` more (``MeasureBaselines``); a failure discards the worker (whatever failed may have left
        it unfit) and comes back as the reply's failure."""
        worker = self._worker
        if worker is None:
            return Reply(failure=Failure.HARNESS, message=self._failed or "the baseline worker is not started")
        try:
            reply = worker.call(MeasureBaselines((name,), block, timers, held_ms), timeout_s, f"the {name} baseline")
        except WorkerFault as fault:
            self.discard()
            return Reply(failure=fault.failure, message=f"{name} baseline failed: {fault.message}")
        if reply.failure is not None:
            self.discard()
            return Reply(failure=reply.failure, message=f"{name} baseline failed: {reply.message}")
        return reply

    def take_calls(self) -> list[Interval]:
        """The calls the worker marked since the last take, by the KForge process's clock."""
        return self._worker.calls.take() if self._worker is not None else []

    def pause(self) -> None:
        """Stop the worker's processes until :meth:`resume` (``WorkerProcess.pause``)."""
        if self._worker is not None:
            self._worker.pause()

    def resume(self) -> None:
        if self._worker is not None:
            self._worker.resume()

    def paused(self) -> contextlib.AbstractContextManager[None]:
        """Stopped within the block (:meth:`pause`), going on after it."""
        return stopped(self)

    def discard(self) -> None:
        if self._worker is not None:
            self._worker.kill()
        self._worker = None
        self._problem, self._asked = "", set()
        self._unanswered = deque()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
        self._worker = None
