"""load_inline extensions built ahead from a candidate's sources, into the cache the compile stage reads."""

from pathlib import Path

import pytest

from kforge_core.records import Candidate
from kforge_core.languages.cuda_cpp.inline_cache import content_addressed
from kforge_cuda.inline_prebuild import build_inline, find_inline_calls

SOURCE = '''
import torch
from torch.utils.cpp_extension import load_inline

CPP = "torch::Tensor twice(torch::Tensor x);"
CUDA = """__global__ void k() {}""" + "\\ntorch::Tensor twice(torch::Tensor x) { return x * 2; }"
ext = load_inline(name="twice_ext", cpp_sources=CPP, cuda_sources=CUDA, functions=["twice"], verbose=False)
again = load_inline("twice_ext", CPP, cuda_sources=CUDA, functions=["twice"])


def later(n):
    return load_inline(name=f"made_{n}", cpp_sources=CPP * n)  # made at run time: the compile stage builds it
'''


def test_static_load_inline_calls_are_found_with_their_arguments_and_run_time_ones_are_left_alone():
    calls = find_inline_calls(Candidate.from_source(SOURCE))
    assert [call.where for call in calls] == ["model_new.py:7", "model_new.py:8"]
    first = dict(calls[0].kwargs)
    assert first["cpp_sources"] == "torch::Tensor twice(torch::Tensor x);"
    assert first["cuda_sources"].startswith("__global__ void k() {}\ntorch::Tensor twice")
    assert first["functions"] == ["twice"] and calls[0].name == "twice_ext"
    assert calls[1].args[:2] == ("twice_ext", "torch::Tensor twice(torch::Tensor x);")


IN_INIT = '''
import os
import torch
import torch.nn as nn

CUDA = "module-level, hidden below"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            from torch.utils.cpp_extension import load_inline
            cuda_source = """__global__ void k() {}"""
            cpp_source = "torch::Tensor run(torch::Tensor x);"
            self.ext = load_inline(name="in_init", cpp_sources=[cpp_source], cuda_sources=[cuda_source],
                                   functions=["run"], build_directory=os.path.join(os.getcwd(), "ext"))
        except Exception:
            self.ext = None

    def twice_bound(self):
        source = "a"
        source += "b"
        return load_inline(name="twice", cpp_sources=source)

    def from_a_parameter(self, CUDA):
        return load_inline(name="parameter", cpp_sources="", cuda_sources=CUDA)


class KeepsItsSource(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel_code = "__global__ void kept() {}"
        self.changed = "a"
        self.changed = "b"

    def build(self):
        from torch.utils.cpp_extension import load_inline
        self.ext = load_inline(name="from_attribute", cpp_sources="", cuda_sources=self.kernel_code)
        self.other = load_inline(name="attribute_bound_twice", cpp_sources="", cuda_sources=self.changed)
'''


def test_calls_in_a_method_see_its_local_names_and_a_run_time_build_directory_is_left_to_the_cache():
    # KernelBench-style solutions build in ModelNew.__init__ from sources bound there; the cache names and places
    # the build itself, so a build directory made at run time does not keep it from being built ahead
    calls = find_inline_calls(Candidate.from_source(IN_INIT))
    # not one bound twice, nor a parameter hiding CUDA; a source kept as an attribute bound once, as KernelBench-style
    # solutions keep theirs
    assert [call.name for call in calls] == ["in_init", "from_attribute"]
    assert dict(calls[1].kwargs)["cuda_sources"] == "__global__ void kept() {}"
    kwargs = dict(calls[0].kwargs)
    assert kwargs["cuda_sources"] == ["__global__ void k() {}"] and "build_directory" not in kwargs
    assert kwargs["cpp_sources"] == ["torch::Tensor run(torch::Tensor x);"]


def test_a_build_ahead_is_found_by_the_compile_stages_load_inline(tmp_path):
    built: list[dict] = []

    def load_inline(name, cpp_sources, cuda_sources=None, functions=None, verbose=False, build_directory=None):
        built.append({"name": name, "directory": build_directory})
        (Path(build_directory) / f"{name}.so").write_text("")

    call = find_inline_calls(Candidate.from_source(SOURCE))[0]
    ahead = build_inline(call, tmp_path, "nvcc 13", load_inline)
    assert not ahead.cached and built[0]["name"].startswith("kforge_")
    recorded = []
    content_addressed(load_inline, tmp_path, "nvcc 13", recorded.append)(**dict(call.kwargs))
    assert recorded[0].cached and built[1]["directory"] == built[0]["directory"]  # the same key, the same build


def test_a_failed_build_ahead_is_cached_so_the_compile_stage_fails_at_once_as_pytorch_would(tmp_path):
    def load_inline(name, cpp_sources, cuda_sources=None, functions=None, verbose=False, build_directory=None):
        raise RuntimeError(f"Error building extension '{name}': error: boom")

    call = find_inline_calls(Candidate.from_source(SOURCE))[0]
    failed = build_inline(call, tmp_path, "nvcc 13", load_inline)
    assert "boom" in failed.log

    def never(name, cpp_sources, cuda_sources=None, functions=None, verbose=False, build_directory=None):
        raise AssertionError("built again")

    with pytest.raises(RuntimeError) as raised:
        content_addressed(never, tmp_path, "nvcc 13", lambda item: None)(**dict(call.kwargs))
    assert str(raised.value) == "Error building extension 'twice_ext': error: boom"



FALLBACK = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

try:
    ext = load_inline(name="no_bindings", cpp_sources="", functions=["twice"], verbose=False)
except RuntimeError as error:  # as under PyTorch: the bindings name a function that does not exist
    ext = None
    open(__file__[:-len("model_new.py")] + "caught.txt", "w").write(f"{type(error).__name__}: {error}")


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return x * 2 if ext is None else ext.twice(x)
'''


@pytest.mark.slow
def test_a_failed_load_inline_built_ahead_raises_pytorchs_error_from_the_cache_and_the_fallback_runs(
        tmp_path, cuda_problem):
    """PyTorch's extension builder runs for real (C++ only: this machine has no CUDA build of torch)."""
    from cuda_testing import TEST_ARCH

    from kforge_core.records import StageContext
    from kforge_cuda.backend import CUDA
    from kforge_cuda.stages import compile_candidate
    from kforge_cuda.options import CudaOptions
    from kforge_cuda.prebuild import prebuild_candidate

    options = CudaOptions(arch=TEST_ARCH, warmup_forward=False)
    candidate = Candidate.from_source(FALLBACK)
    contexts = []
    for label in ("ahead", "stage"):
        (tmp_path / label).mkdir()
        contexts.append(StageContext(cuda_problem, tmp_path / label, options, tmp_path / "cache"))
    ahead = prebuild_candidate(CUDA, candidate, contexts[0])
    assert not ahead.ok and "twice" in ahead.log, ahead.log
    result = compile_candidate(CUDA, candidate, contexts[1])
    assert result.ok, result.log
    caught = (tmp_path / "stage" / "caught.txt").read_text()
    assert caught.startswith("RuntimeError: Error building extension 'no_bindings'")
    (flag,) = result.flags
    assert flag.code == "build_error_caught" and not flag.blocking
    assert "from the build cache" in flag.message and "twice" in flag.message  # built ahead; the log, for the agent
