"""Stopping a bench gracefully: the first Ctrl-C (or SIGTERM) lets the problems in hand finish and starts no
other; the bench then ends as ``interrupted`` with its summary, and ``--resume`` finishes the rest. A second Ctrl-C
aborts at once."""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Callable


class GracefulStop:
    """Within the block, SIGINT and SIGTERM ask the bench to stop (``requested``) instead of ending the process;
    the second one raises KeyboardInterrupt, as Ctrl-C does by default. Handlers can only be set in the main
    thread: elsewhere the block changes nothing."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self.requested = threading.Event()
        self._report = report
        self._previous: dict[int, object] = {}

    def __enter__(self) -> GracefulStop:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested.is_set():
            raise KeyboardInterrupt
        self.requested.set()
        self._report("stopping: the problems in hand finish, no other starts (Ctrl-C again aborts at once)")
