"""The ``[backends.cute]`` options: frozen, validated, part of every compile-cache key."""

from __future__ import annotations

from dataclasses import dataclass

from kforge_core.records import options_hash


@dataclass(frozen=True)
class CuteOptions:
    """``[backends.cute]``.

    :param warmup_forward: call ``ModelNew`` once on the problem's inputs in the compile stage, so that the
        ``cute.compile`` calls a candidate makes in its first forward happen, and fail, as compilation.
    :param disk_cache: keep every compiled kernel as an object file under the cache directory, so that another
        process (a fresh worker, the profiler's child, a later ``kforge eval``) loads it instead of compiling.
    :param use_ncu: profile with Nsight Compute when ``ncu`` is found; otherwise the PyTorch profiler is used.
    :param ncu: path to ``ncu``; empty: found on PATH or under CUDA_HOME.
    :param tool_timeout_s: wall-clock limit for one ncu run.
    """

    warmup_forward: bool = True
    disk_cache: bool = True
    use_ncu: bool = True
    ncu: str = ""
    tool_timeout_s: float = 300.0

    def __post_init__(self) -> None:
        if self.tool_timeout_s <= 0:
            raise ValueError("tool_timeout_s must be > 0")

    def hash(self) -> str:
        """A stable digest of every option."""
        return options_hash(self)
