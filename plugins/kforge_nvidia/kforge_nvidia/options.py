"""The options every language on NVIDIA GPUs shares: profiling, sanitizing, the first call, nvcc."""

from __future__ import annotations

from dataclasses import dataclass

from kforge_core.records import options_hash


@dataclass(frozen=True)
class NvidiaOptions:
    """What every NVIDIA backend's options hold (``[backends.cuda]``, ``[backends.triton]``).

    :param use_ncu: profile with Nsight Compute when ``ncu`` is found; otherwise the PyTorch profiler is used.
    :param ncu: path to ``ncu``; empty: found on PATH or under CUDA_HOME.
    :param sanitize: rerun a candidate that fails verification under compute-sanitizer memcheck and add its
        trimmed report to the verdict's message.
    :param compute_sanitizer: path to ``compute-sanitizer``; empty: found on PATH or under CUDA_HOME.
    :param tool_timeout_s: wall-clock limit for one ncu or compute-sanitizer run.
    :param warmup_forward: run ``ModelNew`` once on the problem's inputs in the compile stage, so that JIT builds
        (Triton kernels, ``load_inline`` in ``__init__``) happen, and fail, as compilation.
    :param nvcc: path to ``nvcc`` (``load_cuda``, and ``load_inline`` in any language); empty: found on PATH or
        under CUDA_HOME.
    """

    use_ncu: bool = True
    ncu: str = ""
    sanitize: bool = False
    compute_sanitizer: str = ""
    tool_timeout_s: float = 300.0
    warmup_forward: bool = True
    nvcc: str = ""

    def __post_init__(self) -> None:
        if self.tool_timeout_s <= 0:
            raise ValueError("tool_timeout_s must be > 0")

    def hash(self) -> str:
        """A stable digest of every option; build caches key on it."""
        return options_hash(self)
