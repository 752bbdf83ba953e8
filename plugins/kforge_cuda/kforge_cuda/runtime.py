"""What a `cuda` candidate imports: build CUDA source once (cached) and call its ``extern "C"`` launchers.

A candidate's module does::

    from kforge_cuda.runtime import load_cuda

    lib = load_cuda(CUDA_SOURCE, name="softmax")        # nvcc, ~1-2 s the first time, a cached load after
    ...
    lib.launch_softmax(x, out, rows, cols)               # tensors pass as device pointers; the stream is filled in

Each exported function is called through ctypes with the types read from its C signature. Tensor arguments must
be contiguous CUDA tensors; a ``cudaStream_t`` parameter the caller leaves out gets PyTorch's current stream; a
launch error (bad configuration, too many resources) of a launcher (a function returning ``void`` or
``cudaError_t``) raises :class:`CudaLaunchError` at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from kforge_core.languages.cuda_cpp.build_cache import BuildConfig, BuildOutcome, CudaBuildError, build_library
from kforge_core.languages.cuda_cpp.c_signature import CFunction, parse_exports

from .build_config import default_config

__all__ = ["load_cuda", "CudaLibrary", "CudaBuildError", "CudaLaunchError"]


class CudaLaunchError(RuntimeError):
    """A launcher returned a CUDA error, or left one behind."""


@dataclass
class _State:
    config: BuildConfig | None = None
    record: Callable[[BuildOutcome | CudaBuildError], None] | None = None


_state = _State()
_lock = threading.Lock()


@contextlib.contextmanager
def build_session(
    config: BuildConfig, record: Callable[[BuildOutcome | CudaBuildError], None] | None = None
) -> Iterator[None]:
    """Within the block, ``load_cuda`` builds with ``config`` and reports each build or failure to ``record``."""
    previous = (_state.config, _state.record)
    _state.config, _state.record = config, record
    try:
        yield
    finally:
        _state.config, _state.record = previous


def load_cuda(source: str | os.PathLike[str], *, name: str = "kernels") -> CudaLibrary:
    """Build ``source`` (CUDA C++ text, or the path of a ``.cu`` file) and load it.

    :param source: the CUDA source text, or a ``pathlib.Path`` to a ``.cu`` file; it must define ``extern "C"``
        host functions that launch its kernels.
    :param name: a name for diagnostics (``softmax.cu(12): error: ...``); not part of the cache key.
    :raises CudaBuildError: with nvcc's trimmed log when the source does not build.
    """
    if isinstance(source, os.PathLike):
        path = Path(source)
        source, name = path.read_text(), path.stem
    with _lock:
        config = _state.config or default_config()
        try:
            outcome = build_library(source, name, config)
        except CudaBuildError as exc:
            if _state.record is not None:
                _state.record(exc)
            raise
        if _state.record is not None:
            _state.record(outcome)
    return CudaLibrary(outcome.library, parse_exports(source))


class CudaLibrary:
    """A built library; its ``extern "C"`` functions are attributes."""

    def __init__(self, path: Path, exports: dict[str, CFunction]) -> None:
        self.path = path
        self._dll = ctypes.CDLL(str(path))
        self._dll.kforge_cuda_last_error.restype = ctypes.c_int
        self._dll.kforge_cuda_error_string.restype = ctypes.c_char_p
        self._dll.kforge_cuda_error_string.argtypes = [ctypes.c_int]
        self.exports = exports
        self._launchers: dict[str, _Launcher] = {}

    def __getattr__(self, name: str) -> _Launcher:
        if name.startswith("_") or name not in self.exports:
            known = ", ".join(sorted(self.exports)) or "none"
            raise AttributeError(f'the CUDA source exports no extern "C" function {name!r} (exported: {known})')
        if name not in self._launchers:
            self._launchers[name] = _Launcher(self, self.exports[name])
        return self._launchers[name]

    def error_string(self, code: int) -> str:
        return self._dll.kforge_cuda_error_string(code).decode()

    def check_last_error(self, where: str) -> None:
        code = self._dll.kforge_cuda_last_error()
        if code != 0:
            raise CudaLaunchError(f"{where}: {self.error_string(code)} (CUDA error {code})")


class _Launcher:
    def __init__(self, library: CudaLibrary, signature: CFunction) -> None:
        self.library = library
        self.signature = signature
        self.function = getattr(library._dll, signature.name)
        self.function.argtypes = [p.ctype for p in signature.params]
        self.function.restype = signature.restype
        self._streams = [i for i, p in enumerate(signature.params) if p.is_stream]

    def __call__(self, *args: Any) -> Any:
        params = self.signature.params
        if len(args) == len(params) - len(self._streams):
            args = _insert_streams(list(args), self._streams)
        if len(args) != len(params):
            raise TypeError(f"{self.signature.declaration()} takes {len(params)} arguments, got {len(args)}")
        converted = [_convert(self.signature, p, a) for p, a in zip(params, args)]
        result = self.function(*converted)
        if self.signature.returns == "cudaError_t" and result != 0:
            raise CudaLaunchError(f"{self.signature.name}: {self.library.error_string(result)} (CUDA error {result})")
        if self.signature.returns in ("void", "cudaError_t"):  # a launcher; a function returning a number is not
            self.library.check_last_error(self.signature.name)
        return result


def _insert_streams(args: list[Any], positions: list[int]) -> list[Any]:
    for position in positions:
        args.insert(position, None)
    return args


def _convert(function: CFunction, param: Any, value: Any) -> Any:
    import torch

    if param.is_stream:
        if value is None:
            return torch.cuda.current_stream().cuda_stream
        return value.cuda_stream if isinstance(value, torch.cuda.Stream) else value
    if param.is_pointer:
        if isinstance(value, torch.Tensor):
            if value.device.type != "cuda":
                raise ValueError(f"{function.name}: {param.name} is a tensor on {value.device}; pass a CUDA tensor")
            if not value.is_contiguous():
                raise ValueError(f"{function.name}: {param.name} is not contiguous; call .contiguous() first")
            return value.data_ptr()
        return value  # an address (int) or None for NULL
    if isinstance(value, torch.Tensor):
        raise TypeError(f"{function.name}: {param.name} is a {param.c_type}; pass a Python number, not a tensor")
    return value
