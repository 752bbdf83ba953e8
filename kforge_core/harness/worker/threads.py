"""The Python threads a candidate starts during a call: found, and waited for. Runs inside workers only."""

from __future__ import annotations

import threading


def new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Python threads alive now that were not alive at ``before``."""
    return [t for t in threading.enumerate() if t not in before and t is not threading.current_thread()]


def join_threads(threads: list[threading.Thread], timeout_s: float) -> list[threading.Thread]:
    """Join ``threads``; returns those still running after ``timeout_s``."""
    for thread in threads:
        thread.join(timeout_s)
    return [t for t in threads if t.is_alive()]
