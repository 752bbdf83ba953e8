"""The content-hash build cache, with real nvcc builds and real concurrent processes."""

import json
import subprocess
import sys

import pytest

from kforge_core.languages.cuda_cpp.build_cache import CudaBuildError, build_key, build_library
from kforge_cuda import runtime
from kforge_cuda.build_config import nvcc_config

from cuda_testing import TEST_ARCH

SOURCE = r'''
#include <cuda_runtime.h>
#include <stdint.h>
__global__ void scale_kernel(float* y, const float* x, int64_t n, float s) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s;
}
extern "C" cudaError_t scale(float* y, const float* x, int64_t n, float s, cudaStream_t stream) {
    scale_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(y, x, n, s);
    return cudaGetLastError();
}
extern "C" int add(int a, int b) { return a + b; }
extern "C" double mix(double a, float b, int64_t c) { return a * b + c; }
'''


@pytest.fixture
def config(nvcc, tmp_path):
    return nvcc_config(nvcc, TEST_ARCH, tmp_path / "cache")


def test_same_source_under_another_name_is_a_cache_hit(config):
    first = build_library(SOURCE, "scale", config)
    again = build_library(SOURCE, "renamed", config)
    assert not first.cached and again.cached
    assert again.library == first.library and first.library.is_file()


def test_key_covers_source_flags_arch_and_options(config):
    keys = {
        build_key(SOURCE, config),
        build_key(SOURCE + "\n// changed", config),
        build_key(SOURCE, nvcc_config(config.compiler, "sm_80", config.cache_dir)),
        build_key(SOURCE, nvcc_config(config.compiler, TEST_ARCH, config.cache_dir, extra_flags=("--use_fast_math",))),
        build_key(SOURCE, nvcc_config(config.compiler, TEST_ARCH, config.cache_dir, options_hash="other")),
    }
    assert len(keys) == 5


def test_failed_build_is_reported_trimmed_and_cached(config):
    broken = SOURCE.replace("y[i] = x[i] * s;", "y[i] = x[i] * s")
    with pytest.raises(CudaBuildError) as first:
        build_library(broken, "scale", config)
    assert first.value.log.startswith("scale.cu(7): error") and not first.value.cached
    with pytest.raises(CudaBuildError) as again:
        build_library(broken, "other_name", config)
    assert again.value.cached and "error" in again.value.log


def test_load_cuda_binds_exports_with_their_c_types(config):
    recorded = []
    with runtime.build_session(config, recorded.append):
        library = runtime.load_cuda(SOURCE, name="scale")
    assert library.add(2, 3) == 5
    assert library.mix(1.5, 2.0, 4) == 7.0
    assert library.exports["scale"].declaration() == "cudaError_t scale(float* y, float* x, int64_t n, float s, cudaStream_t stream)"
    with pytest.raises(TypeError, match="takes 2 arguments"):
        library.add(1)
    with pytest.raises(AttributeError, match="exported: add, mix, scale"):
        library.missing
    assert [outcome.cached for outcome in recorded] == [False]


def test_load_cuda_from_a_file(config, tmp_path):
    path = tmp_path / "my_kernels.cu"
    path.write_text(SOURCE.replace("y[i] = x[i] * s;", "y[i] = x[i] * s"))
    with runtime.build_session(config), pytest.raises(CudaBuildError, match=r"my_kernels\.cu\(7\)"):
        runtime.load_cuda(path)


CHILD = """
import json, sys
from pathlib import Path
from kforge_core.languages.cuda_cpp.build_cache import build_library
from kforge_cuda.build_config import nvcc_config
nvcc, arch, cache, source = json.loads(sys.argv[1])
outcome = build_library(source, "scale", nvcc_config(nvcc, arch, Path(cache)))
print(json.dumps(outcome.cached))
"""


def test_parallel_builders_of_one_source_build_it_once(config):
    argument = json.dumps([config.compiler, TEST_ARCH, str(config.cache_dir), SOURCE])
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, argument], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    cached = [json.loads(p.communicate()[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(cached) == [False, True, True]


def test_nvcc_builds_for_the_arch_with_line_info_and_cudas_error_helpers(tmp_path):
    config = nvcc_config(str(tmp_path / "bin" / "nvcc"), "sm_90a", tmp_path, opt_level=2,
                         extra_flags=("--use_fast_math",))
    assert config.command("k.cu", "lib.so") == [
        str(tmp_path / "bin" / "nvcc"), "-shared", "-Xcompiler", "-fPIC", "-O2", "-std=c++17", "-lineinfo",
        "-gencode=arch=compute_90a,code=sm_90a", "--use_fast_math", "-o", "lib.so", "k.cu"]
    assert "kforge_cuda_last_error" in config.helpers and config.tool == "nvcc"
