"""Content-addressed ``torch.utils.cpp_extension.load_inline`` for KernelBench-style candidates.

``load_inline`` compiles PyTorch's headers (about a minute) and keys its build on the extension's name, so the same
source under another name builds again. While a candidate is imported and warmed up, ``load_inline`` is replaced by
a wrapper that names the extension and its build directory after a hash of everything that changes the build (the
sources, functions, flags, torch and nvcc versions, target architecture): the same source is then a cached load,
whatever the candidate called it. A source that failed to build fails again at once, from the cache. The original
function is put back when the block ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from kforge_core.timing.stage_timer import StageTimer

from .build_cache import BuildOutcome, CudaBuildError
from .compile_log import trim_compile_log

# Arguments that do not change what is built.
NOT_IN_KEY = {"name", "build_directory", "verbose", "keep_intermediates"}


def inline_key(arguments: dict[str, Any], toolchain: str) -> str:
    """The content hash of one ``load_inline`` call's arguments (the name and build directory excluded)."""
    import torch

    relevant = sorted((k, repr(v)) for k, v in arguments.items() if k not in NOT_IN_KEY)
    parts = [repr(relevant), torch.__version__, toolchain, os.environ.get("TORCH_CUDA_ARCH_LIST", "")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def content_addressed(
    original: Callable[..., Any],
    cache_root: Path,
    toolchain: str,
    record: Callable[[BuildOutcome | CudaBuildError], None],
    timer: StageTimer | None = None,
) -> Callable[..., Any]:
    """Wrap ``original`` (``load_inline``) so its name and build directory come from the content hash; each call
    is a build on ``timer`` (it may come in the middle of a call of forward)."""
    timer = timer or StageTimer()
    signature = inspect.signature(original)

    def load_inline(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        key = inline_key(dict(bound.arguments), toolchain)
        directory = cache_root / key
        directory.mkdir(parents=True, exist_ok=True)
        given_name = bound.arguments["name"]
        bound.arguments["name"] = f"kforge_{key}"
        bound.arguments["build_directory"] = str(directory)
        error_log = directory / "error.log"
        if error_log.is_file():
            full = error_log.read_text()
            record(CudaBuildError(given_name, trim_compile_log(full, roots=(str(directory),)), full, cached=True))
            raise as_pytorch_raises(full, key, given_name)
        built_before = any(directory.glob("*.so"))
        start = time.perf_counter()
        try:
            with timer.building(f"load_inline of {given_name}"):
                module = original(*bound.args, **bound.kwargs)
        except RuntimeError as raised:
            if "Error building extension" not in str(raised):
                raise
            full = str(raised)
            error_log.write_text(full)
            record(CudaBuildError(given_name, trim_compile_log(full, roots=(str(directory),)), full))
            raise as_pytorch_raises(full, key, given_name) from None
        record(BuildOutcome(directory, key, built_before, time.perf_counter() - start))
        return module

    load_inline.__wrapped__ = original  # type: ignore[attr-defined]
    return load_inline


def as_pytorch_raises(message: str, key: str, given_name: str) -> RuntimeError:
    """The error PyTorch's own ``load_inline`` raises for this failed build: a RuntimeError with its message,
    naming the extension as the candidate named it, so a candidate's own ``except`` and fallback run as they
    would under PyTorch (the build log is recorded for the verdict)."""
    return RuntimeError(message.replace(f"kforge_{key}", given_name))


@contextlib.contextmanager
def cached_load_inline(
    cache_root: Path, toolchain: str, record: Callable[[BuildOutcome | CudaBuildError], None],
    timer: StageTimer | None = None,
) -> Iterator[None]:
    """Within the block, ``torch.utils.cpp_extension.load_inline`` is content-addressed (and a build on
    ``timer``)."""
    import torch.utils.cpp_extension as cpp_extension

    original = cpp_extension.load_inline
    cpp_extension.load_inline = content_addressed(original, cache_root, toolchain, record, timer)
    try:
        yield
    finally:
        cpp_extension.load_inline = original
