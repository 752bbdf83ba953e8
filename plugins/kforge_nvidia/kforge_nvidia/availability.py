"""Whether the cuda and triton backends can run here, and if not, why. An answer, never an exception."""

from __future__ import annotations

from kforge_core.languages import triton as triton_language
from kforge_core.records import Availability

from .options import CudaOptions, NvidiaOptions
from .toolchain import find_tool, nvcc_version


def _device_problem() -> str | None:
    import torch

    if torch.version.cuda is None:
        return f"no CUDA device (this torch {torch.__version__} is built without CUDA)"
    if not torch.cuda.is_available():
        return "no CUDA device"
    return None


def _device_detail() -> str:
    import torch

    props = torch.cuda.get_device_properties(0)
    return f"{props.name}, sm_{props.major}{props.minor}, {props.multi_processor_count} SMs, CUDA {torch.version.cuda}"


def cuda_availability(options: CudaOptions | None) -> Availability:
    options = options or CudaOptions()
    problem = _device_problem()
    if problem:
        return Availability.no(problem)
    nvcc = find_tool("nvcc", options.nvcc)
    if nvcc is None:
        where = f" at {options.nvcc}" if options.nvcc else " (set [backends.cuda] nvcc, PATH or CUDA_HOME)"
        return Availability.no(f"nvcc not found{where}")
    return Availability.yes(f"{_device_detail()}, nvcc {nvcc_version(nvcc)}")


def triton_availability(options: NvidiaOptions | None) -> Availability:
    version = triton_language.installed_version()
    if version is None:
        return Availability.no("triton not installed (pip install triton)")
    problem = _device_problem()
    if problem:
        return Availability.no(problem)
    return Availability.yes(f"{_device_detail()}, triton {version}")
