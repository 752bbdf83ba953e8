"""A thread that forward leaves running is waited for as a wait of its own, so a timeout names the thread, not the
forward that returned; a thread left parked in a standard-library wait (a pool's idle worker, a monitor asleep) is
not waited for."""

from __future__ import annotations

import gc
import os
import queue
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

from kforge_core.harness.host.deadline import StageDeadline, WaitLimits
from kforge_core.harness.worker.threads import join_threads, wait_for_threads
from kforge_core.timing.stage_timer import StageTimer


class RecordingTimer(StageTimer):
    def __init__(self) -> None:
        self.marks: list[tuple[str, str, str]] = []

    def enter(self, kind: str, what: str) -> None:
        self.marks.append(("enter", kind, what))

    def leave(self, kind: str, what: str) -> None:
        self.marks.append(("leave", kind, what))


def test_the_wait_for_a_thread_left_running_is_marked_as_the_threads_own():
    timer, release = RecordingTimer(), threading.Event()
    before = set(threading.enumerate())
    threading.Thread(target=_work_until, args=(release,), daemon=True).start()
    still_running = wait_for_threads(before, 0.01, timer, "forward (trial seed 42)")
    release.set()
    what = "forward (trial seed 42) returned, but a thread it started"
    assert len(still_running) == 1 and timer.marks == [("enter", "call", what), ("leave", "call", what)]
    deadline = StageDeadline("verify", 60, WaitLimits(call_s=15, build_s=100), start=0.0)
    deadline.enter("call", "forward (trial seed 42)", now=0)
    deadline.enter("call", what, now=1)
    assert deadline.expires()[1].startswith(f"{what} did not return within 15 s")


def test_a_call_that_started_no_thread_sends_no_mark():
    timer = RecordingTimer()
    assert wait_for_threads(set(threading.enumerate()), 1.0, timer, "timed run 3") == [] and timer.marks == []


def _work_until(release: threading.Event) -> None:
    while not release.is_set():
        time.sleep(0.001)


def test_a_pools_idle_worker_left_by_the_call_is_not_waited_for():
    """Inductor's first compile leaves a thread pool whose workers wait for their next task as long as the process
    lives: waiting for them made a compiling solution's first forward a timeout."""
    before = set(threading.enumerate())
    pool = ThreadPoolExecutor(2)
    assert pool.submit(sum, [1, 2]).result() == 3
    try:
        assert wait_for_threads(before, 5.0, RecordingTimer(), "forward (trial seed 42)") == []
    finally:
        pool.shutdown()


def test_a_monitor_asleep_between_checks_is_not_waited_for():
    before, stop = set(threading.enumerate()), threading.Event()

    def monitor() -> None:  # tqdm's monitor thread, which autotuning's progress bars start
        while not stop.wait(10.0):
            pass

    threading.Thread(target=monitor, daemon=True).start()
    try:
        assert wait_for_threads(before, 5.0, RecordingTimer(), "forward (trial seed 42)") == []
    finally:
        stop.set()


def test_a_thread_waiting_for_another_threads_work_is_waited_for_until_it_has_done_its_own():
    before, handed, done = set(threading.enumerate()), queue.Queue(), []

    def producer() -> None:
        time.sleep(0.2)
        handed.put(21)

    def consumer() -> None:
        done.append(handed.get() * 2)

    threading.Thread(target=consumer, daemon=True).start()
    threading.Thread(target=producer, daemon=True).start()
    assert wait_for_threads(before, 5.0, RecordingTimer(), "forward (trial seed 42)") == [] and done == [42]


def test_a_timer_is_waited_for_although_it_waits_as_a_parked_thread_does():
    before, fired = set(threading.enumerate()), []
    timer = threading.Timer(0.2, fired.append, args=(1,))
    timer.start()
    assert wait_for_threads(before, 5.0, RecordingTimer(), "timed run 3") == [] and fired == [1]


class _Output:
    """Stands in for a timed run's output (2 GB on a GPU, where nothing makes the garbage collector run)."""


def test_looking_at_the_threads_keeps_nothing_of_the_callers_alive():
    """The table of every thread's frames holds the looking frame itself; bound to a name it made a cycle that kept
    each timed run's output alive until a collection: a 2.1 GB-output problem ran out of device memory in timing."""
    stop = threading.Event()

    def monitor() -> None:
        while not stop.wait(10.0):
            pass

    def timed_run(before: set[threading.Thread]) -> weakref.ref:
        output = _Output()
        join_threads([], 1.0)
        wait_for_threads(before, 1.0, RecordingTimer(), "timed run 3")
        return weakref.ref(output)

    before = set(threading.enumerate())
    threading.Thread(target=monitor, daemon=True).start()  # a parked thread: its frame is looked at
    gc.disable()
    try:
        assert timed_run(before)() is None
    finally:
        gc.enable()
        stop.set()


def _reader(pipe_end: int) -> None:  # Inductor's compile-worker pool reads its workers' pipe in a thread like this
    os.read(pipe_end, 1)


def test_a_thread_a_build_started_is_the_compilers_and_is_not_waited_for():
    from kforge_core.harness.worker.worker import ChannelTimer

    read_end, write_end = os.pipe()
    timer = ChannelTimer(channel=None)  # no request served: no mark is sent, the threads are still noted
    before = set(threading.enumerate())
    try:
        with timer.building("Dynamo compiling (torch.compile)"):
            with timer.building("Triton compiling a kernel"):  # builds nest
                pass
            threading.Thread(target=_reader, args=(read_end,), daemon=True).start()
        assert wait_for_threads(before, 5.0, RecordingTimer(), "forward (trial seed 42)") == []
        threading.Thread(target=_reader, args=(read_end,), daemon=True).start()  # the same, started by the call
        assert len(wait_for_threads(before, 0.1, RecordingTimer(), "forward (trial seed 42)")) == 1
    finally:
        os.write(write_end, b"xx")
        os.close(write_end)
