"""Whether the cuda backend can run here, and if not, why: an NVIDIA GPU and nvcc. An answer, never an exception."""

from __future__ import annotations

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Availability, Backend
from kforge_nvidia.availability import device_detail, device_problem
from kforge_nvidia.toolchain import find_tool, nvcc_version

from .options import CudaOptions


def cuda_availability(options: CudaOptions | None) -> Availability:
    options = options or CudaOptions()
    problem = device_problem()
    if problem:
        return Availability.no(problem)
    nvcc = find_tool("nvcc", options.nvcc)
    if nvcc is None:
        where = f" at {options.nvcc}" if options.nvcc else " (set [backends.cuda] nvcc, PATH or CUDA_HOME)"
        return Availability.no(f"nvcc not found{where}")
    return Availability.yes(f"{device_detail()}, nvcc {nvcc_version(nvcc)}")


@hookimpl
def kforge_backend_availability(backend: Backend, options: CudaOptions | None) -> Availability:
    return cuda_availability(options)
