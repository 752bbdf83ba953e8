"""load_inline extensions built ahead from a candidate's sources, into the cache the compile stage reads."""

from pathlib import Path

import pytest

from kforge_core.records import Candidate
from kforge_cuda.inline_cache import content_addressed
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
