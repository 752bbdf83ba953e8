"""The Python threads a candidate starts during a call: found, and waited for. Runs inside workers only."""

from __future__ import annotations

import threading

from ...stage_timer import StageTimer


def new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Python threads alive now that were not alive at ``before``."""
    return [t for t in threading.enumerate() if t not in before and t is not threading.current_thread()]


def join_threads(threads: list[threading.Thread], timeout_s: float) -> list[threading.Thread]:
    """Join ``threads``; returns those still running after ``timeout_s``."""
    for thread in threads:
        thread.join(timeout_s)
    return [t for t in threads if t.is_alive()]


def wait_for_threads(before: set[threading.Thread], timeout_s: float, timer: StageTimer, what: str
                     ) -> list[threading.Thread]:
    """Join the threads started since ``before`` by the call ``what``, which has returned; returns those still
    running after ``timeout_s``. The wait is marked as one of its own, so a timeout while waiting names the thread
    the call left running, not the call."""
    started = new_threads(before)
    if not started:
        return []
    with timer.calling(f"{what} returned, but a thread it started"):  # "... did not return within 15 s"
        return join_threads(started, timeout_s)
