"""The triton backend without a GPU: registered by its own distribution on the NVIDIA device, lowered through
Triton's shared language text, and built ahead by no one (Triton compiles on the first call)."""

from __future__ import annotations

import importlib.util

import torch

from kforge_core.languages import triton as triton_language
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_core.registry import BackendRegistry
from kforge_cuda.backend import CUDA
from kforge_cuda.lowering import lower as lower_cuda
from kforge_nvidia.device import CudaDevice
from kforge_triton.backend import TRITON, TritonOptions
from kforge_triton.lowering import lower

TRITON_EXAMPLE = __import__("pathlib").Path(triton_language.__file__).parent / "example"
NO_GPU = torch.version.cuda is None or not torch.cuda.is_available()


def _registry():
    return BackendRegistry(build_plugin_manager(PluginSelection(only=("triton",))))


def test_its_own_distribution_registers_it_on_the_nvidia_device():
    triton = _registry().get("triton")
    assert triton.distribution == "kforge-triton"
    assert triton.backend.programming_model == "Triton" and triton.backend.device == "cuda"
    assert triton.backend.device_class is CudaDevice


def test_availability_says_why_not_here():
    triton = _registry().availability("triton")
    if NO_GPU:
        expected = "triton not installed" if importlib.util.find_spec("triton") is None else "no CUDA device"
        assert not triton.available and triton.reason.startswith(expected)
    else:
        assert triton.available


def test_lowering_is_tritons_own_model_and_example():
    problem = load_problem(TRITON_EXAMPLE / "problem.py")
    lowering = lower(TRITON)
    assert "@triton.jit" in lowering.programming_model and "input_precision" in lowering.programming_model
    assert "@triton.jit" in lowering.example.solution
    assert lowering.example.solution != lower_cuda(CUDA, problem, None).example.solution
    assert problem.outputs[0].dtype == "float32"


def test_nothing_is_built_ahead_and_the_first_call_warms_up():
    assert not _registry().hooks("triton").builds_ahead
    assert TritonOptions().warmup_forward is True and TritonOptions().sanitize is False
