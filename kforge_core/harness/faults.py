"""Turning what went wrong in a worker into a :class:`~kforge_core.records.Failure`.

Two sources: an exception the worker caught (its type and text), and the way a worker process ended (its exit
status or the signal that killed it).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

from ..records import Failure
from ..tracebacks import candidate_lines, exception_line

if TYPE_CHECKING:
    from ..device import Device

# Python's and PyTorch's own words for running out of memory; a device adds its runtime's (Device.classify).
OUT_OF_MEMORY_PATTERNS = (
    "out of memory",
    "can't allocate memory",
    "cannot allocate memory",
    "unable to allocate",
)
_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT, signal.SIGSYS,
                  signal.SIGTRAP, signal.SIGXCPU, signal.SIGXFSZ}


def classify_exception(exc: BaseException, device: Device | None = None) -> Failure:
    """The failure class of an exception raised by candidate code (RUNTIME unless it says otherwise)."""
    if isinstance(exc, SystemExit):
        return Failure.EXIT
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return Failure.OUT_OF_MEMORY
    return classify_text(str(exc), device) or Failure.RUNTIME


def classify_text(text: str, device: Device | None = None) -> Failure | None:
    """DEVICE_FAULT or OUT_OF_MEMORY when ``text`` says so (the device's runtime first), else None."""
    found = device.classify(text) if device is not None else None
    if found is not None:
        return found
    lowered = text.lower()
    if any(pattern in lowered for pattern in OUT_OF_MEMORY_PATTERNS):
        return Failure.OUT_OF_MEMORY
    return None


def candidate_traceback(exc: BaseException, workdir: Path, limit: int = 6) -> str:
    """The frames of ``exc``'s traceback that are in the candidate's own files, then the exception line.

    The generation agent needs the line of its code that failed, not the harness's frames.
    """
    lines = [f'  File "{c.file}", line {c.line}, in {c.function}\n    {c.text}'.rstrip()
             for c in candidate_lines(exc, workdir)[-limit:]]
    return "\n".join([*lines, exception_line(exc)])


def classify_exit(returncode: int, *, killed_by_harness: bool, oom_evidence: str = "") -> tuple[Failure, str]:
    """The failure class of a worker that ended in the middle of a request, and a sentence saying how."""
    if returncode >= 0:
        return Failure.EXIT, (
            f"the worker process exited with status {returncode} in the middle of the stage "
            "(os._exit, sys.exit or exit() in the candidate's code end the process that evaluates it)"
        )
    signum = -returncode
    name = _signal_name(signum)
    if signum == signal.SIGKILL and not killed_by_harness:
        if oom_evidence:
            return Failure.OUT_OF_MEMORY, f"the worker was killed by {name}: {oom_evidence}"
        return Failure.CRASH, f"the worker was killed by {name} (from outside the harness)"
    if signum == signal.SIGXFSZ:
        return Failure.CRASH, f"the worker was killed by {name}: it wrote a file larger than the file size limit"
    if signum in _CRASH_SIGNALS:
        return Failure.CRASH, f"the worker crashed with {name}"
    return Failure.CRASH, f"the worker was ended by {name}"


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def oom_kill_count() -> int | None:
    """The kernel's count of out-of-memory kills in this process's memory cgroup (v2 or v1), if readable."""
    for path in _cgroup_oom_files():
        try:
            for line in path.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            continue
    return None


def _cgroup_oom_files() -> list[Path]:
    root = Path("/sys/fs/cgroup")
    files = []
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, where = line.split(":", 2)
            where = where.lstrip("/")
            if controllers == "":
                files.append(root / where / "memory.events")
            elif "memory" in controllers.split(","):
                files.append(root / "memory" / where / "memory.oom_control")
    except (OSError, ValueError):
        pass
    return files


def memory_total_kb() -> int | None:
    """This machine's physical memory in KiB."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1024
    except (ValueError, OSError):
        return None
