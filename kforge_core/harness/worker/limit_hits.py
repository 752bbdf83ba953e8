"""In the worker: whether what the candidate's code raised is one of the worker's limits reached (its scratch space
full, no process or thread to be had), named with its size, and what the candidate left in the scratch space at
the end. The KForge process adds what only it sees (its cgroup's counts, the cache quota).
"""

from __future__ import annotations

import dataclasses
import errno
import os
import resource
from pathlib import Path

from ..protocol import FinishReport

_FULL = (errno.ENOSPC, errno.EDQUOT)
_NO_THREAD = ("can't start new thread", "pthread_create")  # CPython's words; a C++ pool's (torch, OpenMP)
LEFT_BYTES = 16 << 20  # a candidate that leaves more in the scratch tmpfs gets a fresh worker (its memory freed)
FULL_BYTES = 1 << 20  # a scratch tmpfs with less free than this at the end was filled


@dataclasses.dataclass
class _Known:
    max_processes: int = 0
    tmpfs: dict[str, int] = dataclasses.field(default_factory=dict)  # mount point -> bytes (the sandbox's)


_known = _Known()


def know_limits(max_processes: int, tmpfs: dict[str, int]) -> None:
    """The limits this worker was started under (``harness.max_processes``, its tmpfs mounts' sizes)."""
    _known.max_processes, _known.tmpfs = max_processes, dict(tmpfs)


def limit_reached(exc: BaseException) -> str:
    """A sentence naming the limit ``exc`` (or what caused it) met, or "" when it met none."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text = str(exc).lower()
        if isinstance(exc, OSError) and exc.errno in _FULL or "no space left on device" in text:
            return _full(getattr(exc, "filename", None))
        if (isinstance(exc, BlockingIOError) and exc.errno == errno.EAGAIN and exc.filename is None) or (
                any(words in text for words in _NO_THREAD) and "resource temporarily unavailable" in text) or (
                "can't start new thread" in text):
            return no_process_left()
        exc = exc.__cause__ or exc.__context__
    return ""


def _full(filename: object) -> str:
    """Which file system is full: the tmpfs the file is in, or (a buffered write's error names no file) the one
    of the worker's tmpfs mounts that is full now."""
    path = os.path.abspath(os.fsdecode(filename)) if isinstance(filename, (str, bytes)) else ""
    for mount, size in sorted(_known.tmpfs.items(), key=lambda item: -len(item[0])):
        if path == mount or path.startswith(mount.rstrip("/") + "/") or (not path and _free(mount) < FULL_BYTES):
            return (f"the worker's scratch space {mount} is full: a tmpfs of {size / (1 << 20):.0f} MiB, its share "
                    "of harness.scratch_limit_mb")
    where = f"the file system of {path}" if path else "a file system the candidate wrote to"
    return f"{where} is full (no space left on the device)"


def _free(mount: str) -> int:
    try:
        st = os.statvfs(mount)
    except OSError:
        return FULL_BYTES
    return st.f_bavail * st.f_frsize


def no_process_left() -> str:
    """The worker's limit on processes and threads, as this process sees it."""
    bounds = []
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft == _known.max_processes:  # set by the sandbox's launcher (it binds a user who is not root outside)
        bounds.append(f"RLIMIT_NPROC {soft}")
    if _known.tmpfs:  # in the sandbox: its PID namespace has its own pid_max where the kernel allows
        try:
            bounds.append(f"pid_max {Path('/proc/sys/kernel/pid_max').read_text().strip()} in its PID namespace")
        except OSError:
            pass
    named = f" (harness.max_processes = {_known.max_processes})" if _known.max_processes else ""
    return ("no process or thread could be started: the worker reached its limit on processes and threads"
            + named + (f"; {', '.join(bounds)}" if bounds else ""))


def scratch_checked(report: FinishReport) -> FinishReport:
    """``report`` with the sandbox's scratch tmpfs mounts looked at: one left full names its limit; one left
    holding more than :data:`LEFT_BYTES` makes the worker unclean (replaced, which frees that memory)."""
    limits, notes = [], []
    for mount, size in _known.tmpfs.items():
        try:
            st = os.statvfs(mount)
        except OSError:
            continue
        used, free = (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_bavail * st.f_frsize
        if free < FULL_BYTES:
            limits.append(_full(mount))
        elif used > LEFT_BYTES:
            notes.append(f"left {used / (1 << 20):.0f} MiB in {mount}: the worker is replaced")
    if not (limits or notes):
        return report
    return dataclasses.replace(report, clean=False, notes=(*report.notes, *notes),
                               limit="; ".join([report.limit, *limits] if report.limit else limits))
