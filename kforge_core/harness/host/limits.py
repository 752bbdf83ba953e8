"""What a worker may take from the machine beyond its time, and where each bound comes from: its scratch space
(the sandbox's tmpfs mounts), its processes and threads, its cgroup's memory, what a candidate may add to the build
caches. ``kforge check --sandbox`` prints :func:`describe_limits`; docs/trust.md says what each covers.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import dataclass

from ...records import Problem
from ...settings import HarnessSettings
from .cgroups import cgroup_support, worker_memory_bytes
from ..sandbox_plan import SandboxPlan
from .namespaces import launcher_command
from .sandbox import user_tasks

# compilers' temporary files need this much: Inductor writes its C++ precompiled header (156 MB on x86-64 with
# torch 2.13) into the temporary directory, whatever its cache directory, and /tmp gets half of it
SCRATCH_FLOOR = 1024 << 20
SCRATCH_PER_CALL = 4  # a worker's tmpfs mounts hold up to 4 calls' inputs and outputs (tensors in shared memory)


def scratch_bytes(settings: HarnessSettings, problem: Problem | None) -> int:
    """The bytes a worker's tmpfs mounts may hold in all: :data:`SCRATCH_PER_CALL` times one call's inputs and
    outputs, at least :data:`SCRATCH_FLOOR`, at most ``harness.scratch_limit_mb`` (that, for a worker started
    before its problem is known)."""
    limit = settings.scratch_limit_mb << 20
    if problem is None:
        return limit
    from ..problem_size import call_bytes

    return min(limit, max(SCRATCH_FLOOR, SCRATCH_PER_CALL * call_bytes(problem)))


def limited_plan(plan: SandboxPlan, settings: HarnessSettings, problem: Problem | None) -> SandboxPlan:
    """``plan`` with the worker's tmpfs sizes and process limit."""
    from dataclasses import replace

    return replace(plan, tmpfs_bytes=scratch_bytes(settings, problem), max_processes=settings.max_processes)


@dataclass(frozen=True)
class LimitLine:
    """One limit as ``kforge check --sandbox`` shows it: what it bounds and how it applies here."""

    name: str
    applies: str


def describe_limits(settings: HarnessSettings, sandboxed: bool) -> list[LimitLine]:
    """What bounds a worker on this machine under ``settings``, with or without the sandbox."""
    cgroups = cgroup_support(settings.cgroups)
    tasks = settings.max_processes
    lines = [LimitLine("scratch space", (
        f"the sandbox's tmpfs mounts (/tmp, /dev/shm, the home and runs directories) hold at most "
        f"{settings.scratch_limit_mb} MiB in all per worker (harness.scratch_limit_mb), {SCRATCH_PER_CALL}x a "
        f"call's inputs and outputs, at least {SCRATCH_FLOOR >> 20} MiB")
        if sandboxed else "no tmpfs: /tmp is the machine's, bounded only by the disk and the file size limit")]
    by, not_by = [], []
    if sandboxed:
        probed = process_limit_probe()
        (by if probed.pid_max else not_by).append(
            f"pid_max of its PID namespace ({max(301, tasks + 1)})" if probed.pid_max
            else f"pid_max of its PID namespace ({probed.why})")
    if os.geteuid() != 0 and (sandboxed or user_tasks() is not None):
        by.append(f"RLIMIT_NPROC ({tasks}, counted in its user namespace)" if sandboxed
                  else f"RLIMIT_NPROC (this user's processes and threads now + {tasks})")
    else:
        not_by.append("RLIMIT_NPROC (the kernel does not apply it to root)" if os.geteuid() == 0
                      else "RLIMIT_NPROC (no /proc to count this user's processes by)")
    if cgroups.available and "pids" in cgroups.controllers:
        by.append(f"its cgroup's pids.max ({tasks})")
    else:
        not_by.append("a cgroup's pids.max (no cgroup, below)")
    applies = f"{tasks} per worker (harness.max_processes), " + (f"bound by {', '.join(by)}" if by
                                                                  else "NOT bound here")
    lines.append(LimitLine("processes and threads", applies + (f"; not by {', '.join(not_by)}" if not_by else "")))
    if cgroups.available:
        memory = worker_memory_bytes(settings.memory_limit_mb) >> 20
        limits = [f"memory {memory} MiB" + ("" if settings.memory_limit_mb else
                                            " (three quarters of the machine; harness.memory_limit_mb sets it)")
                  ] if "memory" in cgroups.controllers else []
        limits += [f"pids {tasks}"] if "pids" in cgroups.controllers else []
        lines.append(LimitLine("cgroup", f"one per worker: {', '.join(limits)}; {cgroups.why}"))
    else:
        lines.append(LimitLine("cgroup", f"none: {cgroups.why}"))
    lines.append(LimitLine("build caches", f"a candidate may add {settings.cache_quota_mb} MiB "
                           "(harness.cache_quota_mb); what no build cache recognises is removed after it"))
    address = (f"address space {settings.memory_limit_mb} MiB on the CPU device" if settings.memory_limit_mb
               else "address space not limited (harness.memory_limit_mb = 0)")
    lines.append(LimitLine("rlimits", f"no core files, files up to {settings.file_size_limit_mb} MiB "
                           f"(harness.file_size_limit_mb), {address}"))
    return lines


@dataclass(frozen=True)
class ProbedLimits:
    pid_max: bool
    why: str


@functools.cache
def process_limit_probe() -> ProbedLimits:
    """Whether the sandbox's launcher can give a PID namespace its own ``pid_max`` here (Linux 6.14 and later)."""
    plan = {"hide": [], "writable": [], "readable": [sys.prefix], "max_processes": 400}
    command = [sys.executable, "-I", "-S", "-c", "print(open('/proc/sys/kernel/pid_max').read())"]
    try:
        done = subprocess.run(launcher_command(plan, command), capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ProbedLimits(False, f"the probe could not run: {exc}")
    if done.stdout.strip() == "401":
        return ProbedLimits(True, "the kernel keeps a pid_max per PID namespace")
    return ProbedLimits(False, f"this kernel ({os.uname().release}) keeps one pid_max for the machine")
