"""What is known about the installed CuTe DSL without importing it (``import cutlass`` takes seconds)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

DISTRIBUTION = "nvidia-cutlass-dsl"
INSTALL_HINT = "pip install 'kforge-cute[dsl]'"
# The CuTe DSL backend targets Hopper (sm_90) and Blackwell (sm_100 and later): compute capability 9.0 and up.
MIN_CAPABILITY = (9, 0)


def dsl_version() -> str | None:
    """The installed DSL's version, or None when ``import cutlass`` would not find it.

    The distribution's metadata answers when it was installed by pip; a DSL put on ``sys.path`` by hand (wheels
    unpacked into a directory) is read from its package's ``__version__`` line instead.
    """
    spec = importlib.util.find_spec("cutlass")
    if spec is None or spec.origin is None:
        return None
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pass
    match = re.search(r'^__version__\s*=\s*["\']([^"\']+)', Path(spec.origin).read_text(), re.M)
    return match.group(1) if match else "unknown"


def tvm_ffi_version() -> str | None:
    """The installed TVM-FFI (``apache-tvm-ffi``), through which compiled kernels take PyTorch tensors directly."""
    if importlib.util.find_spec("tvm_ffi") is None:
        return None
    try:
        return importlib.metadata.version("apache-tvm-ffi")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def supports(capability: tuple[int, int]) -> bool:
    return capability >= MIN_CAPABILITY
