"""The conditions a worker process starts in: an environment without secrets, and resource limits.

This is containment for generated code that goes wrong (runs away, crashes, floods, reads credentials from the
environment by accident), not a security sandbox against deliberate attack: the worker runs as the same user.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ...secrets import is_secret

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


def limits_setter(*, memory_limit_mb: int, file_size_limit_mb: int, host_cpu: bool) -> Callable[[], None]:
    """A ``preexec_fn`` that sets the worker's resource limits (it runs in the child, before exec).

    No core files. The address space is limited only on a host-CPU device (``Device.host_cpu``): CUDA and other
    GPU runtimes reserve far more virtual address space than they use, so a limit there would break them, not
    contain them.
    """
    limit_address_space = memory_limit_mb > 0 and host_cpu

    def set_limits() -> None:
        _lower(resource.RLIMIT_CORE, 0)
        _lower(resource.RLIMIT_FSIZE, file_size_limit_mb * 1024 * 1024)
        if limit_address_space:
            _lower(resource.RLIMIT_AS, memory_limit_mb * 1024 * 1024)

    return set_limits


def _lower(which: int, value: int) -> None:
    """Set both limits to ``value``, or to the hard limit where that is already lower."""
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))
