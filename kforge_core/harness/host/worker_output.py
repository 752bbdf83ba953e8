"""What a worker writes for the KForge process to read: its own output, a candidate's captured output and its stack
dumps, in files the KForge process made without a name and handed to the worker as file descriptors.

Those files used to lie in directories the worker writes (``worker.err`` in its home, ``stdout.txt`` in the
candidate's scratch directory, the stack dump), where a candidate could put a link in their place: the KForge
process then read a file of the candidate's choosing into the verdict (a credential; ``/proc/self/environ``, its own
environment) or, opening one to write, truncated any file it can write. A file with no name cannot be replaced: the
worker gets only descriptors (its 1 and 2, and three more it points at them while it serves a candidate, or gives
Python's fault handler), and the KForge process reads through its own, never through a path. Each file is opened
to append, so that when the KForge process empties one (a candidate's output as the next candidate begins, the
stack file before each dump) the worker's next write lands at its start.

A kept scratch root (``kforge eval --keep``) still gets each candidate's captured output as ``stdout.txt`` and
``stderr.txt`` in its scratch directory: written by the KForge process after the candidate, through
``safe_files`` (nothing followed, nothing written through a name the worker made).
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from pathlib import Path
from typing import BinaryIO, Callable

from ..captured import STDERR_FILE, STDOUT_FILE, read_truncated, tail_lines
from ..safe_files import create_beneath

_OWN_TAIL_BYTES = 16 * 1024


def _nameless() -> BinaryIO:
    """A file with no name, in the temporary directory, open to read and append."""
    handle = tempfile.TemporaryFile(buffering=0)
    flags = fcntl.fcntl(handle.fileno(), fcntl.F_GETFL)
    fcntl.fcntl(handle.fileno(), fcntl.F_SETFL, flags | os.O_APPEND)
    return handle  # type: ignore[return-value]


class WorkerOutput:
    """One worker's files: ``own`` (its descriptors 1 and 2 outside a candidate), a candidate's ``stdout`` and
    ``stderr``, and ``stacks`` (what its fault handler writes when asked, ``activity.py``)."""

    def __init__(self) -> None:
        self.own, self.stdout, self.stderr, self.stacks = (_nameless() for _ in range(4))

    @property
    def worker_fds(self) -> tuple[int, int, int]:
        """The descriptors the worker gets besides its 1 and 2: a candidate's stdout and stderr, the stack file."""
        return self.stdout.fileno(), self.stderr.fileno(), self.stacks.fileno()

    def begin_candidate(self) -> None:
        """Empty the candidate files: what is read after the candidate is this candidate's alone (the worker is
        idle now, between two requests)."""
        for handle in (self.stdout, self.stderr):
            os.ftruncate(handle.fileno(), 0)

    def candidate_output(self, limit_kb: int) -> tuple[str, str]:
        """What the candidate printed on stdout and stderr, each cut to ``limit_kb``."""
        limit = limit_kb * 1024
        return read_truncated(self.stdout.fileno(), limit), read_truncated(self.stderr.fileno(), limit)

    def own_tail(self) -> str:
        """The last lines the worker itself printed (why it could not start, its last error)."""
        return tail_lines(read_truncated(self.own.fileno(), _OWN_TAIL_BYTES))

    def stack_dump(self, ask: Callable[[], None], wait_s: float = 1.0) -> str:
        """Empty the stack file, call ``ask()`` (which signals the worker) and wait up to ``wait_s`` for the dump;
        empty when none came."""
        fd = self.stacks.fileno()
        os.ftruncate(fd, 0)
        ask()
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            time.sleep(0.05)
            if os.fstat(fd).st_size:
                time.sleep(0.05)  # the dump is written in one go by the signal handler; let it end
                return read_truncated(fd, 1 << 20)
        return ""

    def keep(self, anchor: Path, workdir: Path) -> None:
        """Copy the candidate's whole output into its scratch directory ``workdir`` (below ``anchor``, a directory no
        worker can replace) as ``stdout.txt`` and ``stderr.txt``, for a person to read."""
        if not workdir.is_relative_to(anchor):
            return
        relative = workdir.relative_to(anchor)
        for handle, name in ((self.stdout, STDOUT_FILE), (self.stderr, STDERR_FILE)):
            try:
                with create_beneath(anchor, relative / name) as kept:
                    _copy(handle.fileno(), kept)
            except OSError:  # the directory is gone, or a link stands on the way to it: nothing is kept there
                continue

    def close(self) -> None:
        for handle in (self.own, self.stdout, self.stderr, self.stacks):
            handle.close()


def _copy(fd: int, target: BinaryIO) -> None:
    """The whole file ``fd`` into ``target``, read where it lies (the offset it shares with the worker untouched)."""
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        target.write(chunk)
        offset += len(chunk)
