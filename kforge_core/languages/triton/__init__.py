"""Triton as a language: what any backend whose candidates are ``@triton.jit`` kernels can use as it is.

* :func:`programming_model`: the text the generation agent reads (how Triton code is built, called, made fast),
  for the target the backend names;
* :func:`example`: the single-shot example (a fused residual add + RMSNorm problem and its Triton kernel);
* :func:`is_build_error` and :func:`trim_error`: Triton's compile errors, told apart from runtime errors and
  trimmed for the agent;
* :func:`run_forward` (in :mod:`.warmup`): the first call that makes Triton's JIT compile in the compile stage,
  through the backend's :class:`~kforge_core.device.Device`;
* :func:`use_cache_dir` and :func:`cache_entries` (in :mod:`.cache`): where Triton keeps its built kernels, and
  whether a stage built any;
* :func:`installed_version`: whether Triton can be imported here.

Importing this package imports neither Triton nor torch.
"""

from __future__ import annotations

import importlib.util
from importlib import resources
from string import Template

from ...records import Example
from .cache import cache_entries, use_cache_dir
from .errors import is_build_error, trim_error
from .warmup import build_model_and_inputs, run_forward

REPLY_FORMAT = ("Answer with one fenced ```python block holding the complete module that defines ModelNew and its "
                "@triton.jit kernels.")
# PyTorch's wheels bring Triton under distribution names of their own (the package is always ``triton``).
DISTRIBUTIONS = ("triton", "pytorch-triton-xpu", "pytorch-triton-rocm", "pytorch-triton")
EXAMPLE_NOTE = "One program per row; the residual add, the reduction and the scaling fused into a single kernel."

__all__ = ["EXAMPLE_NOTE", "REPLY_FORMAT", "build_model_and_inputs", "cache_entries", "example",
           "installed_version", "is_build_error", "programming_model", "run_forward", "trim_error", "use_cache_dir"]


def _text(*parts: str) -> str:
    return resources.files(__name__).joinpath(*parts).read_text()


def programming_model(target: str) -> str:
    """How to write a Triton candidate, for ``target`` (what Triton compiles for: "sm_90", "the Intel GPU")."""
    return Template(_text("programming_model.md")).substitute(arch=target)


def example(note: str = EXAMPLE_NOTE) -> Example:
    """The single-shot example: a fused problem and a Triton kernel for it."""
    return Example(problem=_text("example", "problem.py"), solution=_text("example", "solution.py"), note=note)


def installed_version() -> str | None:
    """Triton's version, or None when it cannot be imported here."""
    if importlib.util.find_spec("triton") is None:
        return None
    from importlib.metadata import PackageNotFoundError, version

    for distribution in DISTRIBUTIONS:
        try:
            return version(distribution)
        except PackageNotFoundError:
            continue
    return "unknown version"  # a build of Triton without metadata
