"""The ``[backends.cuda]`` options: frozen, validated, hashed for the build cache.

As in Triton's backends, an options object is a frozen dataclass with defaults; ``__post_init__`` rejects what
cannot work, and :meth:`hash` is part of every build-cache key, so changing an option never loads a stale build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kforge_nvidia.options import NvidiaOptions

_ARCH = re.compile(r"^sm_\d{2,3}[af]?$")
# Flags that would change what the build step produces or where: the build step owns them.
_OWNED_FLAGS = ("-o", "--output-file", "-shared", "--shared", "-c", "--compile", "-E", "--preprocess")


@dataclass(frozen=True)
class CudaOptions(NvidiaOptions):
    """``[backends.cuda]``: :class:`~kforge_nvidia.options.NvidiaOptions` (profiling, sanitizing, ``nvcc``) and
    how ``load_cuda`` builds.

    :param arch: the target, ``sm_90`` or ``sm_90a`` (wgmma, setmaxnreg); empty: the device's own.
    :param opt_level: device and host optimisation level (``-O``).
    :param extra_nvcc_flags: appended to every build (``["--use_fast_math"]``).
    :param build_timeout_s: wall-clock limit for one ``nvcc`` run.
    :param warmup_forward: off by default here: ``load_cuda`` builds when the candidate is imported, and
        verification's first call does the rest, so a source built before compiles in milliseconds. Turn it on
        for candidates that build in ``__init__`` (``load_inline`` there) to build them through the cache.
    """

    warmup_forward: bool = False
    arch: str = ""
    opt_level: int = 3
    extra_nvcc_flags: tuple[str, ...] = ()
    build_timeout_s: float = 180.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.arch and not _ARCH.match(self.arch):
            raise ValueError(f"arch {self.arch!r} must look like sm_90 or sm_90a (or be empty for the device's)")
        if self.opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {self.opt_level}")
        for flag in self.extra_nvcc_flags:
            if flag.split("=")[0] in _OWNED_FLAGS:
                raise ValueError(f"extra_nvcc_flags: {flag!r} is set by the build step itself")
        if self.build_timeout_s <= 0:
            raise ValueError("build_timeout_s must be > 0")
