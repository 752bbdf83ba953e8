"""What a worker is doing when one of its waits runs past its limit: busy or idle, compiling or not. Runs in the
KForge process, reading ``/proc`` (Linux); elsewhere nothing can be seen and every limit applies as set.

Two facts decide (:mod:`kforge_core.harness.host.deadline` says what follows from them):

* the **CPU time** of the worker's process group over a short window: a build in progress keeps a core busy, an
  idle hang (``time.sleep`` in a loop, a wait on a lock nobody holds) does not;
* whether it is **compiling**: a compiler among its processes (``nvcc``, ``cc1plus``, ``ninja``, Inductor's
  compile workers), or compiler frames on its Python stacks (Dynamo, Inductor, TorchScript, Triton, Numba,
  ``cpp_extension``), read from the dump Python's fault handler writes when the worker gets :data:`STACK_SIGNAL`
  (into a file with no name the KForge process made, ``worker_output.py``: never a file in the worker's directory).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..protocol import STACK_SIGNAL, WORKER_NAME

if TYPE_CHECKING:
    from .worker_output import WorkerOutput

WINDOW_S = 1.0

# frames of code that compiles (paths as they appear in a stack dump); a candidate that fakes them gains at most the
# build budget, which is bounded like any build
COMPILER_FRAMES = (
    "/torch/_dynamo/", "/torch/_inductor/", "/torch/_functorch/", "/torch/fx/", "/torch/jit/", "/torch/_export/",
    "/torch/utils/cpp_extension.py", "/torch/utils/file_baton.py", "/triton/compiler/", "/triton/runtime/autotuner.py",
    "/triton/runtime/jit.py", "/triton/backends/", "/numba/core/", "/kforge_cuda/", "/filelock/",
)
COMPILER_PROGRAMS = frozenset({
    "nvcc", "cicc", "ptxas", "fatbinary", "nvlink", "cudafe++", "cc1", "cc1plus", "c++", "g++", "gcc", "clang",
    "clang++", "ld", "as", "collect2", "ninja", "hipcc", "icpx",
})


def group_cpu_seconds(pgid: int, proc: Path = Path("/proc")) -> float | None:
    """CPU seconds used so far by the processes of group ``pgid`` (with their reaped children); None where
    ``/proc`` cannot tell."""
    total, seen = 0, False
    ticks = os.sysconf("SC_CLK_TCK")
    for stat in _stats(proc):
        if stat[2] == str(pgid):  # fields after "pid (comm)": state, ppid, pgrp, ...
            seen = True
            total += sum(int(value) for value in stat[11:15])  # utime, stime, cutime, cstime
    return total / ticks if seen else None


def compiler_processes(pgid: int, proc: Path = Path("/proc")) -> list[str]:
    """The names of the compilers running in group ``pgid``."""
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
            comm = text[text.index("(") + 1:text.rindex(")")]
            fields = text[text.rindex(")") + 2:].split()
            if fields[2] != str(pgid):
                continue
            if comm in COMPILER_PROGRAMS or "compile_worker" in (entry / "cmdline").read_text(errors="replace"):
                found.append(comm)
        except (OSError, ValueError, IndexError):
            continue
    return found


def compiler_frames(stack_dump: str) -> list[str]:
    """The compiler frames in a fault handler dump (``File "...", line N in name``), innermost first."""
    return [line.strip() for line in stack_dump.splitlines()
            if line.strip().startswith("File ") and any(part in line for part in COMPILER_FRAMES)]


def _stats(proc: Path):
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            yield text[text.rindex(")") + 2:].split()


def worker_process(pid: int, proc: Path = Path("/proc"), depth: int = 4) -> int:
    """The process that runs the worker module: ``pid`` itself, or, where the worker was started through the
    sandbox's launcher (``pid`` is the launcher), its descendant that does (it leads its own process group)."""
    current = pid
    for _ in range(depth):
        try:
            if runs_worker(current, proc):
                return current
            children = (proc / str(current) / "task" / str(current) / "children").read_text().split()
        except OSError:
            break
        if not children:
            break
        current = int(children[0])
    return pid


class ActivityProbe:
    """Looks at one worker (its process ``pid``, or the launcher that started it; and the files it writes for the
    KForge process, ``output``)."""

    def __init__(self, pid: int, output: WorkerOutput, window_s: float = WINDOW_S) -> None:
        self.launched = pid
        self.output = output
        self.window_s = window_s
        self._worker: int | None = None

    @property
    def pid(self) -> int:
        """The worker's own process, leader of its group (found once it runs)."""
        if self._worker is None:
            found = worker_process(self.launched)
            if found == self.launched and not runs_worker(found):
                return found  # not started yet, or not on Linux: look again next time
            self._worker = found
        return self._worker

    def cpu_seconds(self) -> float | None:
        return group_cpu_seconds(self.pid)

    def sample(self) -> tuple[float, float | None]:
        """``(monotonic time, CPU seconds of the group)``, to measure activity from."""
        return time.monotonic(), self.cpu_seconds()

    def cores(self, since: tuple[float, float | None] | None = None) -> float | None:
        """How many cores the worker kept busy since the sample ``since`` (over a fresh window without one); None
        where it cannot be seen (then no limit is relaxed and none is tightened)."""
        if since is None:
            since = self.sample()
            time.sleep(self.window_s)
        start, first = since
        last = self.cpu_seconds()
        elapsed = time.monotonic() - start
        if first is None or last is None or elapsed <= 0:
            return None
        return (last - first) / elapsed

    def compiling(self) -> str:
        """What shows the worker compiling ("" when nothing does)."""
        programs = compiler_processes(self.pid)
        if programs:
            return f"{', '.join(sorted(set(programs)))} running"
        frames = compiler_frames(self.stacks())
        return f"compiler code on its stack: {frames[0]}" if frames else ""

    def stacks(self) -> str:
        """The worker's Python stacks, as its fault handler dumps them (empty when it does not answer)."""
        try:
            return self.output.stack_dump(lambda: os.kill(self.pid, STACK_SIGNAL))
        except OSError:
            return ""


def runs_worker(pid: int, proc: Path = Path("/proc")) -> bool:
    """Whether ``pid`` is ``python -m kforge_core.harness.worker`` (the sandbox's launcher carries that command
    among its own arguments, after its script's), or a worker forked from a template (named :data:`WORKER_NAME`)."""
    try:
        argv = (proc / str(pid) / "cmdline").read_bytes().split(b"\0")
        if argv[1:3] == [b"-m", b"kforge_core.harness.worker"]:
            return True
        return (proc / str(pid) / "comm").read_text().strip() == WORKER_NAME
    except OSError:
        return False
