"""The conditions a worker process starts in: an environment without secrets, and resource limits.

This is containment for generated code that goes wrong (runs away, crashes, floods, reads credentials from the
environment by accident), not a security sandbox against deliberate attack: the worker runs as the same user.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ...secrets import is_secret
from ..process_limits import WorkerLimits

def worker_environment(environ: Mapping[str, str], cache_dir: Path,
                       extra: Iterable[tuple[str, str]] = (), *, compile_threads: int = 0) -> dict[str, str]:
    """``environ`` without secrets, with Python unbuffered, the JIT build caches under ``cache_dir``, the
    ``extra`` variables (the device unit a harness is bound to) and, with ``compile_threads``, Inductor's compile
    threads (``harness.compile_threads``: every worker importing Inductor started a pool of a compiling process per
    core, each importing torch, beside the others' work; compiling in the worker's own process made a bench's
    first problem faster).

    Build caches and compile threads the user set explicitly are kept; the Inductor cache PyTorch wrote into this
    process's environment itself is not (:func:`written_by_torch`).
    """
    env = {name: value for name, value in environ.items()
           if not is_secret(name) and not written_by_torch(name, value)}
    env.update(extra)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"  # a crash prints the Python stack into the captured stderr
    env.setdefault("TORCH_EXTENSIONS_DIR", str(cache_dir / "torch_extensions"))
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache_dir / "inductor"))
    env.setdefault("TRITON_CACHE_DIR", str(cache_dir / "triton"))
    if compile_threads:
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(compile_threads))
    return env


def written_by_torch(name: str, value: str) -> bool:
    """Whether ``name=value`` is the default Inductor cache PyTorch writes into its own process's environment the
    first time Inductor asks for its cache (``cache_dir_utils.cache_dir``): describing a problem in the KForge
    process does, and every worker started after that would have inherited torch's directory under /tmp instead of
    KForge's cache (``TORCHINDUCTOR_CACHE_DIR``)."""
    if name != "TORCHINDUCTOR_CACHE_DIR":
        return False
    default = getattr(sys.modules.get("torch._inductor.runtime.cache_dir_utils"), "default_cache_dir", None)
    return default is not None and value == default()


def worker_limits(*, memory_limit_mb: int, file_size_limit_mb: int, host_cpu: bool,
                  max_processes: int = 0) -> WorkerLimits:
    """A worker's limits: no core files, files up to ``file_size_limit_mb``.

    The address space is limited only on a host-CPU device (``Device.host_cpu``): CUDA and other GPU runtimes
    reserve far more virtual address space than they use, so a limit there would break them, not contain them.
    With ``max_processes`` (a worker outside the sandbox; inside, the launcher sets its own), the user's processes
    and threads may grow by that many from now: ``RLIMIT_NPROC`` counts all of the user's, so a limit of
    ``max_processes`` alone could stop a worker of a user who runs more already. Root is exempt from it.
    """
    running = user_tasks() if max_processes and os.geteuid() != 0 else None
    return WorkerLimits(file_size_bytes=file_size_limit_mb * 1024 * 1024,
                        address_space_bytes=memory_limit_mb * 1024 * 1024 if memory_limit_mb > 0 and host_cpu else 0,
                        processes=max_processes + running if running is not None else 0)


def limits_setter(*, memory_limit_mb: int, file_size_limit_mb: int, host_cpu: bool, max_processes: int = 0,
                  then: Callable[[], None] | None = None) -> Callable[[], None]:
    """A ``preexec_fn`` that sets the worker's resource limits (:func:`worker_limits`; it runs in the child, before
    exec), then calls ``then`` (joining the worker's cgroup)."""
    limits = worker_limits(memory_limit_mb=memory_limit_mb, file_size_limit_mb=file_size_limit_mb,
                           host_cpu=host_cpu, max_processes=max_processes)

    def set_limits() -> None:
        limits.apply()
        if then is not None:
            then()

    return set_limits


def user_tasks() -> int | None:
    """The processes and threads this user runs now (what ``RLIMIT_NPROC`` counts on Linux), from /proc; None
    without it (macOS): no limit is set then, which could stop a worker of a user who runs many processes."""
    uid, count = os.getuid(), 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError):
            continue
    return count
