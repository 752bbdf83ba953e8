"""How ``load_cuda`` builds on this machine: nvcc, its flags for the target and the backend's options, and the
helpers every library exports (the CUDA runtime's error readers, which :mod:`.runtime` calls)."""

from __future__ import annotations

import os
from pathlib import Path

from kforge_core.languages.cuda_cpp.build_cache import BuildConfig, CudaBuildError
from kforge_nvidia.driver import driver_capability
from kforge_nvidia.toolchain import find_tool, nvcc_version

from .options import CudaOptions

# Exported into every library so that launch errors are checked through the same runtime that launched.
HELPERS = """
extern "C" int kforge_cuda_last_error(void) { return (int)cudaGetLastError(); }
extern "C" const char* kforge_cuda_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }
"""


def nvcc_config(nvcc: str, arch: str, cache_dir: Path, *, opt_level: int = 3, extra_flags: tuple[str, ...] = (),
                options_hash: str = "", timeout_s: float = 180.0) -> BuildConfig:
    """A shared library for ``arch`` (``sm_90``), with line info for the profiler and the sanitizer."""
    number = arch.removeprefix("sm_")
    flags = ("-shared", "-Xcompiler", "-fPIC", f"-O{opt_level}", "-std=c++17", "-lineinfo",
             f"-gencode=arch=compute_{number},code=sm_{number}", *extra_flags)
    return BuildConfig(compiler=nvcc, flags=flags, cache_dir=cache_dir, version=nvcc_version(nvcc), helpers=HELPERS,
                       options_hash=options_hash, timeout_s=timeout_s)


def build_config(options: CudaOptions, root: Path) -> BuildConfig:
    """How ``load_cuda`` builds in KForge's stages: the options' flags, for the options' arch or else the device's
    (read from the driver, so the process that builds ahead does not import PyTorch)."""
    nvcc = find_tool("nvcc", options.nvcc) or "nvcc"
    arch = options.arch
    if not arch:
        capability = driver_capability()
        if capability is None:
            import torch

            capability = torch.cuda.get_device_capability()
        arch = f"sm_{capability[0]}{capability[1]}"
    return nvcc_config(nvcc, arch, root / "nvcc", opt_level=options.opt_level, extra_flags=options.extra_nvcc_flags,
                       options_hash=options.hash(), timeout_s=options.build_timeout_s)


def default_config() -> BuildConfig:
    """Builds outside KForge's stages (a candidate run by hand): nvcc from PATH, the device's arch."""
    import torch

    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise CudaBuildError("kforge_cuda", "nvcc not found: put it on PATH or set CUDA_HOME")
    major, minor = torch.cuda.get_device_capability()
    cache = Path(os.environ.get("KFORGE_CUDA_CACHE", Path.home() / ".cache" / "kforge" / "cuda"))
    return nvcc_config(nvcc, f"sm_{major}{minor}", cache)
