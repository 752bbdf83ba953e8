"""How a worker process ended (its exit status or the signal that killed it) as a
:class:`~kforge_core.records.Failure`, with the kernel's evidence of an out-of-memory kill. Runs in the KForge process.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from ...records import Failure

_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT, signal.SIGSYS,
                  signal.SIGTRAP, signal.SIGXCPU, signal.SIGXFSZ}


def classify_exit(returncode: int, *, killed_by_harness: bool, oom_evidence: str = "",
                  stderr_tail: str = "") -> tuple[Failure, str]:
    """The failure class of a worker that ended in the middle of a request, and a sentence saying how. An exit with
    Python's status for an uncaught exception whose last error was a ``MemoryError`` (the interpreter could not
    allocate, under an address-space limit, say, while it was still importing) ran out of memory."""
    if returncode == 1 and ran_out_of_memory(stderr_tail):
        return Failure.OUT_OF_MEMORY, (
            "the worker process ran out of memory and ended (its last error was a MemoryError)")
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


def ran_out_of_memory(stderr_tail: str) -> bool:
    """Whether the last error a process printed was Python's ``MemoryError``."""
    errors = [line.strip() for line in stderr_tail.splitlines()
              if line and not line[0].isspace() and line.rstrip().split(":", 1)[0].endswith(("Error", "Exception"))]
    return bool(errors) and errors[-1].split(":", 1)[0] == "MemoryError"


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
