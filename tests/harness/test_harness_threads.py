"""A thread that forward leaves running is waited for as a wait of its own, so a timeout names the thread, not the
forward that returned."""

from __future__ import annotations

import threading

from kforge_core.harness.host.deadline import StageDeadline, WaitLimits
from kforge_core.harness.worker.threads import wait_for_threads
from kforge_core.stage_timer import StageTimer


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
    threading.Thread(target=release.wait, daemon=True).start()
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
