"""The Python threads a candidate starts during a call: found, and waited for. Runs inside workers only.

A thread the call started is waited for until it ends or is *parked*: waiting, in the standard library's own wait,
for something no thread still working will give it. A thread pool's worker waiting for its next task, a library's
monitor asleep between checks (tqdm's, which Inductor's autotuning starts) never end while their process lives; the
first call of a solution that compiles leaves such threads behind, and waiting for them turned a correct call into
a timeout. A thread doing the call's work is not parked; one waiting for another thread's work is parked only
once that thread has ended or parked too, so the check is made again until nothing but parked threads is left.
What a thread could still do after it is let go is what a thread started before the call could: the verdict's
checks on the output (taken when forward returned, compared after the wait) see a write that comes late.

A thread started while a build was under way (a stage timer's ``build`` mark: Dynamo and Inductor compiling, a
Triton JIT, a ``load_inline``) is the compiler's, not the call's work, and is not waited for either: Inductor's pool
of compile workers leaves a thread reading their pipe and a timer that ends the pool when idle, neither parked in the
standard library's waits (a solution that calls ``torch.compile`` at import timed out on them in its first forward).
"""

from __future__ import annotations

import concurrent.futures.thread
import sys
import threading
import time
import weakref
from types import CodeType

from ...timing.stage_timer import StageTimer

POLL_S = 0.05  # how often the threads still working are looked at again

# Bound at import, before any candidate is imported: where a parked thread's innermost Python frame stands.
_PARKED_IN: frozenset[CodeType] = frozenset({
    threading.Condition.wait.__code__,  # Event.wait, Queue.get and Semaphore.acquire wait here
    concurrent.futures.thread._worker.__code__,  # a pool's worker taking its next task (a C queue: no frame below)
})
_current_frames = sys._current_frames
_monotonic = time.monotonic
_sleep = time.sleep


class _BuildThreads:
    """The threads started while a build was under way in this process (builds nest, and come from any thread).
    One instance, changed in place: the worker's integrity check sees any rebinding of this module's names."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = 0
        self.alive_when_began: set[threading.Thread] = set()
        self.started: weakref.WeakSet[threading.Thread] = weakref.WeakSet()

    def began(self) -> None:
        with self.lock:
            if self.open == 0:
                self.alive_when_began = set(threading.enumerate())
            self.open += 1

    def ended(self) -> None:
        with self.lock:
            if self.open == 0:
                return
            self.open -= 1
            if self.open == 0:
                self.started.update(t for t in threading.enumerate() if t not in self.alive_when_began)
                self.alive_when_began = set()

    def all(self) -> set[threading.Thread]:
        with self.lock:
            return set(self.started)


_builds = _BuildThreads()
build_began = _builds.began  # a build began in this process
build_ended = _builds.ended  # a build ended: once none is under way, the threads started since the first are its


def new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Python threads alive now that were not alive at ``before``, other than those a build started."""
    by_builds = _builds.all()
    return [t for t in threading.enumerate()
            if t not in before and t not in by_builds and t is not threading.current_thread()]


def parked(thread: threading.Thread) -> bool:
    """Whether ``thread`` stands in one of the standard library's waits (its innermost Python frame), doing
    nothing until another thread gives it something to do. A ``threading.Timer`` waits to act, so it never is."""
    if isinstance(thread, threading.Timer) or thread.ident is None:
        return False
    # The table of frames is never bound to a name here: it holds this frame, and a cycle through it would keep the
    # callers' frames, and the outputs in them, alive until a collection (a timed run's 2 GB, at every run).
    return getattr(_current_frames().get(thread.ident), "f_code", None) in _PARKED_IN


def join_threads(threads: list[threading.Thread], timeout_s: float) -> list[threading.Thread]:
    """Wait until each of ``threads`` has ended or is parked, all of them at once and still a poll later; returns
    those still working after ``timeout_s``."""
    deadline, settled = _monotonic() + timeout_s, False
    while True:
        alive = [t for t in threads if t.is_alive()]
        if not alive:
            return []
        working = [t for t in alive if not parked(t)]
        left = deadline - _monotonic()
        if not working and settled:
            return []
        if left <= 0:
            return working
        if working:
            settled = False
            working[0].join(min(POLL_S, left))
        else:  # all parked: looked at once more, a poll later, in case one was woken and has not run yet
            settled = True
            _sleep(min(POLL_S, left))


def wait_for_threads(before: set[threading.Thread], timeout_s: float, timer: StageTimer, what: str
                     ) -> list[threading.Thread]:
    """Join the threads started since ``before`` by the call ``what``, which has returned; returns those still
    working after ``timeout_s``. The wait is marked as one of its own, so a timeout while waiting names the thread
    the call left running, not the call."""
    started = new_threads(before)
    if not started:
        return []
    with timer.calling(f"{what} returned, but a thread it started"):  # "... did not return within 15 s"
        return join_threads(started, timeout_s)
