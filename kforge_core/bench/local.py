"""``--executor local``: one slot (a harness bound to one device unit) per device given, each in a thread of
KForge's process taking the next problem when it is free. Every slot starts its workers as its thread begins,
before any problem is taken, so the devices start up side by side. Results reach the caller's thread as they
come."""

from __future__ import annotations

import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

from .results import ProblemJob, ProblemResult
from .slot import DeviceSlot

Work = Callable[[DeviceSlot, ProblemJob], ProblemResult]


class LocalExecutor:
    """Runs jobs on ``slots``, one problem at a time on each.

    :param make_slot: the slot for a device index (None: the device as the process sees it) and its label.
    :param devices: the device indices, one slot each.
    :param lookahead: how many later problems a slot builds ahead (``Harness.prebuild``) when it takes one.
    """

    def __init__(self, make_slot: Callable[[int | None], DeviceSlot], devices: list[int | None],
                 lookahead: int = 0) -> None:
        self.make_slot = make_slot
        self.devices = devices
        self.lookahead = lookahead

    def run(self, jobs: list[ProblemJob], work: Work, on_result: Callable[[ProblemResult], None],
            halt: threading.Event | None = None) -> None:
        """Evaluate ``jobs``; ``on_result`` is called in this thread for each result as it comes. An error that
        is not a problem's own (an unusable backend) stops every slot and is raised here. Once ``halt`` is set,
        the problems in hand finish and no other starts."""
        todo = _Queue(jobs, self.lookahead, halt or threading.Event())
        results: queue.Queue[ProblemResult | BaseException | None] = queue.Queue()
        stop = threading.Event()
        threads = [threading.Thread(target=self._serve, args=(index, todo, work, results, stop), daemon=True,
                                    name=f"kforge-bench-slot-{index}") for index in self.devices]
        for thread in threads:
            thread.start()
        running = len(threads)
        try:
            while running:
                item = _get(results)
                if item is None:
                    running -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    on_result(item)
        finally:
            stop.set()  # slots finish the problem they hold, then end; their workers end with this process

    def _serve(self, index: int | None, todo: _Queue, work: Work, results: queue.Queue, stop: threading.Event) -> None:
        slot: DeviceSlot | None = None
        ahead = ThreadPoolExecutor(1, thread_name_prefix=f"kforge-bench-ahead-{index}")
        try:
            slot = self.make_slot(index)
            slot.start()
            while not stop.is_set():
                taken = todo.take(slot.baselines_built)
                if taken is None:
                    break
                if taken.upcoming:
                    ahead.submit(slot.prebuild, list(taken.upcoming))
                slot.wait_for_builds = not taken.ready  # taken with no job's baselines built: it waits for its own
                slot.upcoming = taken.next  # its spare workers prepare for it meanwhile
                results.put(work(slot, taken.job))
        except BaseException as exc:  # noqa: BLE001 - the caller's thread raises it
            stop.set()
            results.put(exc)
        finally:
            ahead.shutdown(wait=True, cancel_futures=True)
            if slot is not None:
                slot.close()
            results.put(None)


@dataclass(frozen=True)
class Taken:
    """A job taken from the queue: whether it was ``ready`` (its baselines built), the later ``upcoming`` jobs to
    build ahead now, and the job that would be taken ``next`` as things stand (None: none is left)."""

    job: ProblemJob
    ready: bool
    upcoming: tuple[ProblemJob, ...]
    next: ProblemJob | None


class _Queue:
    """The jobs not taken yet, and which later ones were handed out for building ahead."""

    def __init__(self, jobs: list[ProblemJob], lookahead: int, halt: threading.Event) -> None:
        self._jobs = list(jobs)
        self._halt = halt
        self._lookahead = lookahead
        self._ahead: set[str] = set()
        self._lock = threading.Lock()

    def take(self, ready: Callable[[ProblemJob], bool] = lambda job: True) -> Taken | None:
        """The next job, the first that is ``ready`` (its baselines built: a suite's ``torch.compile`` builds go on
        side by side while the problems whose builds are done are evaluated) or else the first, with the later jobs
        to build ahead now (within the lookahead, each handed out once; from the first job on, their builds start
        once the slot's harness exists) and the one after it. None when no job is left."""
        with self._lock:
            if not self._jobs or self._halt.is_set():
                return None
            index, found = self._first(ready)
            job = self._jobs.pop(index)
            upcoming = tuple(j for j in self._jobs[:self._lookahead] if j.key not in self._ahead)
            self._ahead.update(j.key for j in upcoming)
            following = self._jobs[self._first(ready)[0]] if self._jobs else None
            return Taken(job, found, upcoming, following)

    def _first(self, ready: Callable[[ProblemJob], bool]) -> tuple[int, bool]:
        """The index of the first ``ready`` job and True, or 0 and False where none is."""
        return next(((index, True) for index, job in enumerate(self._jobs) if ready(job)), (0, False))


def _get(results: queue.Queue):  # noqa: ANN202
    """The next item, waking now and then so that a signal's handler runs in this (the main) thread."""
    while True:
        try:
            return results.get(timeout=0.5)
        except queue.Empty:
            continue
