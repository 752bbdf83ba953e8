"""The compile stage on real candidates with real nvcc (no GPU needed: the warm-up call is switched off, or its
failure on this machine is left for verification)."""

import json
import subprocess
import sys

import pytest

from kforge_core.records import Candidate, Failure, StageContext
from kforge_cuda.backend import CUDA
from kforge_cuda.stages import compile_candidate
from kforge_cuda.options import CudaOptions

from cuda_testing import EXAMPLES, TEST_ARCH

SOLUTION = (EXAMPLES / "cuda_solution.py").read_text()
NO_WARMUP = CudaOptions(arch=TEST_ARCH, warmup_forward=False)


def _compile(source, problem, tmp_path, options=NO_WARMUP, label="c"):
    workdir = tmp_path / label
    workdir.mkdir()
    context = StageContext(problem=problem, workdir=workdir, options=options, cache_dir=tmp_path / "cache")
    return compile_candidate(CUDA, Candidate.from_source(source, label=label), context)


def test_example_builds_then_is_cached(nvcc, cuda_problem, tmp_path):
    first = _compile(SOLUTION, cuda_problem, tmp_path, label="a")
    second = _compile(SOLUTION, cuda_problem, tmp_path, label="b")
    assert first.ok and not first.cached
    assert second.ok and second.cached


def test_nvcc_error_is_a_compile_failure_with_the_line(nvcc, cuda_problem, tmp_path):
    broken = SOLUTION.replace("const float inv = 1.f / block_reduce<THREADS>(s, Sum());",
                              "const float inv = 1.f / block_reduce<THREADS>(s, Sum())", 1)
    result = _compile(broken, cuda_problem, tmp_path)
    assert result.failure is Failure.COMPILE
    assert result.log.startswith("scaled_softmax.cu(") and "error" in result.log


def test_swallowed_build_error_still_fails(nvcc, cuda_problem, tmp_path):
    source = SOLUTION.replace('_lib = load_cuda(CUDA_SOURCE, name="scaled_softmax")',
                              'try:\n    _lib = load_cuda(CUDA_SOURCE + "oops", name="scaled_softmax")\n'
                              'except Exception:\n    _lib = None')
    result = _compile(source, cuda_problem, tmp_path)
    assert result.failure is Failure.COMPILE and "error" in result.log


@pytest.mark.parametrize("source, failure, text", [
    ("def broken(:\n", Failure.SYNTAX, "model_new.py:1: SyntaxError"),
    ("import torch\nx = 1\nraise ValueError('bad constant')\n", Failure.IMPORT, "model_new.py:3"),
    ("import torch\nclass Kernel: pass\n", Failure.NO_MODEL_NEW, "no class ModelNew (nor a class Model)"),
])
def test_python_mistakes_are_classified(cuda_problem, tmp_path, source, failure, text):
    result = _compile(source, cuda_problem, tmp_path)
    assert result.failure is failure and text in result.log


def test_warmup_failure_other_than_a_build_is_left_to_verification(nvcc, cuda_problem, tmp_path):
    result = _compile(SOLUTION, cuda_problem, tmp_path, options=CudaOptions(arch=TEST_ARCH, warmup_forward=True))
    try:
        import torch
        has_gpu = torch.cuda.is_available()
    except Exception:
        has_gpu = False
    assert result.ok
    if not has_gpu:
        assert "the first forward raised" in result.log


CHILD = """
import json, sys
from pathlib import Path
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, StageContext
from kforge_cuda.options import CudaOptions
from kforge_core.registry import BackendRegistry
problem_path, source, workdir, cache, arch = json.loads(sys.argv[1])
loaded = build_plugin_manager(PluginSelection(only=("cuda",)))
backend = BackendRegistry(loaded).get("cuda").backend
context = StageContext(load_problem(problem_path), Path(workdir), CudaOptions(arch=arch, warmup_forward=False),
                       Path(cache))
result = loaded.hook.kforge_compile(backend=backend, candidate=Candidate.from_source(source), context=context)
print(json.dumps([result.ok, result.cached, result.failure and result.failure.value]))
"""


def test_compile_hook_in_a_worker_like_child_process(nvcc, tmp_path):
    outcomes = []
    for label in ("one", "two"):
        (tmp_path / label).mkdir()
        argument = json.dumps([str(EXAMPLES / "cuda_problem.py"), SOLUTION, str(tmp_path / label),
                               str(tmp_path / "cache"), TEST_ARCH])
        done = subprocess.run([sys.executable, "-c", CHILD, argument], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        outcomes.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outcomes == [[True, False, None], [True, True, None]]


def test_warmup_imports_the_problem_once_per_process(nvcc, cuda_problem, tmp_path):
    # A second import would replace objects the harness watches while a candidate runs (seen as tampering).
    def problem_modules():
        return {name: module for name, module in sys.modules.items() if name.startswith("kforge_problem_warmup_")}

    _compile(SOLUTION, cuda_problem, tmp_path, options=CudaOptions(arch=TEST_ARCH, warmup_forward=True), label="a")
    first = problem_modules()
    _compile(SOLUTION, cuda_problem, tmp_path, options=CudaOptions(arch=TEST_ARCH, warmup_forward=True), label="b")
    assert len(first) == 1 and problem_modules() == first
    assert all(problem_modules()[name] is module for name, module in first.items())
