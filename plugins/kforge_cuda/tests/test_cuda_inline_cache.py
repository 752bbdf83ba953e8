"""KernelBench-style load_inline candidates get the content-addressed cache. PyTorch's extension builder runs for
real here, on a C++-only extension (this machine has no CUDA build of torch): about half a minute per build."""

import pytest
import torch.utils.cpp_extension

from kforge_core.records import Candidate, Failure, StageContext
from kforge_cuda.backends import CUDA
from kforge_cuda.inline_cache import inline_key
from kforge_cuda.options import CudaOptions
from kforge_cuda.compile_stage import compile_candidate

from cuda_testing import TEST_ARCH

CANDIDATE = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = """
torch::Tensor twice(torch::Tensor x) { return x * BODY; }
"""
ext = load_inline(name=NAME, cpp_sources=cpp_source, functions=["twice"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        return ext.twice(x)
'''


def test_key_ignores_the_name_and_build_directory():
    base = {"name": "a", "cpp_sources": "int f();", "functions": ["f"], "build_directory": "/x", "verbose": True}
    renamed = {**base, "name": "b", "build_directory": "/y", "verbose": False}
    changed = {**base, "cpp_sources": "int g();"}
    flags = {**base, "extra_cflags": ["-O3"]}
    assert inline_key(base, "nvcc 13") == inline_key(renamed, "nvcc 13")
    assert len({inline_key(base, "nvcc 13"), inline_key(changed, "nvcc 13"), inline_key(flags, "nvcc 13"),
                inline_key(base, "nvcc 12")}) == 4


def _compile(tmp_path, cuda_problem, label, name, body):
    source = CANDIDATE.replace("NAME", repr(name)).replace("BODY", body)
    workdir = tmp_path / label
    workdir.mkdir()
    context = StageContext(cuda_problem, workdir, CudaOptions(arch=TEST_ARCH, warmup_forward=False),
                           tmp_path / "cache")
    return compile_candidate(CUDA, Candidate.from_source(source, label=label), context)


@pytest.mark.slow
def test_same_source_under_another_name_is_a_cached_load(tmp_path, cuda_problem):
    original = torch.utils.cpp_extension.load_inline
    first = _compile(tmp_path, cuda_problem, "one", "twice_v1", "2")
    second = _compile(tmp_path, cuda_problem, "two", "a_different_name", "2")
    assert first.ok and not first.cached, first.log
    assert second.ok and second.cached
    assert torch.utils.cpp_extension.load_inline is original  # put back after the import


@pytest.mark.slow
def test_build_error_is_trimmed_and_remembered(tmp_path, cuda_problem):
    first = _compile(tmp_path, cuda_problem, "one", "broken_v1", "undefined_symbol")
    assert first.failure is Failure.COMPILE
    assert first.log.startswith("main.cpp:") and "undefined_symbol" in first.log
    assert "/" not in first.log.splitlines()[0]  # the build directory's path is cut
    second = _compile(tmp_path, cuda_problem, "two", "broken_again", "undefined_symbol")
    assert second.failure is Failure.COMPILE and second.log == first.log


def test_a_failed_build_raises_into_the_candidate_what_pytorchs_load_inline_raises(tmp_path):
    from kforge_cuda.inline_cache import content_addressed

    def load_inline(name, cpp_sources, functions=None, build_directory=None, verbose=False):
        raise RuntimeError(f"Error building extension '{name}': error: 'twice' was not declared in this scope")

    recorded = []
    wrapped = content_addressed(load_inline, tmp_path, "nvcc 13", recorded.append)
    for attempt in ("built", "from the cache of failures"):
        with pytest.raises(RuntimeError) as raised:
            wrapped(name="my_ext", cpp_sources="", functions=["twice"])
        assert type(raised.value) is RuntimeError, attempt  # exactly PyTorch's type, not a subclass
        assert str(raised.value) == ("Error building extension 'my_ext': error: 'twice' was not declared in this "
                                     "scope"), attempt
    assert [failure.name for failure in recorded] == ["my_ext", "my_ext"]  # the log is kept for the verdict

