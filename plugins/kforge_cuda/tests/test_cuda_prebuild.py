"""Building ``cuda`` candidates ahead from their sources alone: what is found, and that the compile stage then
finds the build in the cache (real nvcc; no GPU needed)."""

import pytest

from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.records import Candidate, Failure, SourceFile, StageContext
from kforge_cuda.backend import CUDA
from kforge_cuda.stages import compile_candidate
from kforge_cuda.options import CudaOptions
from kforge_cuda.prebuild import find_cuda_sources, prebuild_candidate

from cuda_testing import EXAMPLES, TEST_ARCH

SOLUTION = (EXAMPLES / "cuda_solution.py").read_text()
OPTIONS = CudaOptions(arch=TEST_ARCH, warmup_forward=False)
KERNEL = 'extern "C" int add(int a, int b) { return a + b; }\n'


def _sources(text: str, *more: SourceFile):
    return find_cuda_sources(Candidate(files=(SourceFile("model_new.py", text), *more), entry="model_new.py"))


def test_the_shipped_example_s_source_is_found_under_its_name():
    (source,) = _sources(SOLUTION)
    assert source.name == "scaled_softmax" and "__global__" in source.text and source.where.startswith("model_new.py:")


@pytest.mark.parametrize("code, name", [
    (f"from kforge_cuda.runtime import load_cuda\nlib = load_cuda({KERNEL!r})\n", "kernels"),
    (f"import kforge_cuda.runtime as rt\nSRC = {KERNEL!r}\nlib = rt.load_cuda(source=SRC, name='adder')\n", "adder"),
    (f"SRC: str = {KERNEL!r}\nNAME = 'n'\ndef build():\n    return load_cuda(SRC, name=NAME)\n", "n"),
])
def test_static_sources_are_found(code, name):
    (source,) = _sources(code)
    assert source.text == KERNEL and source.name == name


def test_a_cu_file_of_the_candidate_is_found():
    code = "from pathlib import Path\nlib = load_cuda(Path('kernels/add.cu'))\n"
    (source,) = _sources(code, SourceFile("kernels/add.cu", KERNEL))
    assert source.text == KERNEL and source.name == "add"


@pytest.mark.parametrize("code", [
    f"SRC = {KERNEL!r}\nSRC = SRC + '// more'\nlib = load_cuda(SRC)\n",  # bound twice: not static
    "def make(n):\n    return load_cuda(f'#define N {n}\\n')\n",  # made at run time
    "lib = load_cuda(Path('missing.cu'))\n",  # not one of the candidate's files
    "def broken(:\n",
])
def test_sources_made_at_run_time_are_left_to_the_compile_stage(code):
    assert _sources(code) == []


def test_the_same_source_twice_is_built_once():
    code = f"SRC = {KERNEL!r}\na = load_cuda(SRC)\nb = load_cuda({KERNEL!r}, name='again')\n"
    assert len(_sources(code)) == 1


def _context(problem, tmp_path, label):
    workdir = tmp_path / label
    workdir.mkdir()
    return StageContext(problem=problem, workdir=workdir, options=OPTIONS, cache_dir=tmp_path / "cache")


def test_built_ahead_then_the_compile_stage_finds_it_cached(nvcc, cuda_problem, tmp_path):
    candidate = Candidate.from_source(SOLUTION)
    ahead = prebuild_candidate(CUDA, candidate, _context(cuda_problem, tmp_path, "ahead"))
    assert ahead.ok and not ahead.cached and "built in" in ahead.log
    compiled = compile_candidate(CUDA, candidate, _context(cuda_problem, tmp_path, "compile"))
    assert compiled.ok and compiled.cached


def test_a_build_error_ahead_carries_nvcc_s_log(nvcc, cuda_problem, tmp_path):
    broken = SOLUTION.replace("const float inv = 1.f / block_reduce<THREADS>(s, Sum());",
                              "const float inv = 1.f / block_reduce<THREADS>(s, Sum())", 1)
    result = prebuild_candidate(CUDA, Candidate.from_source(broken), _context(cuda_problem, tmp_path, "x"))
    assert result.failure is Failure.COMPILE and "scaled_softmax.cu(" in result.log and "error" in result.log


def test_the_hook_answers_for_cuda(cuda_problem, tmp_path):
    loaded = build_plugin_manager(PluginSelection(entry_points=False, modules=("kforge_cuda",)))
    candidate = Candidate.from_source("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n")
    context = _context(cuda_problem, tmp_path, "hook")
    answer = loaded.hook.kforge_prebuild(backend=CUDA, candidate=candidate, context=context)
    assert answer.ok and "no load_cuda or load_inline source to build ahead" in answer.log


class _FakeDriver:
    """libcuda's three calls that ``driver_capability`` makes, answering for one device of capability 9.0."""

    def __init__(self, devices: int) -> None:
        self.devices = devices

    def cuInit(self, flags):
        return 0

    def cuDeviceGet(self, device, ordinal):
        return 0 if ordinal < self.devices else 101  # CUDA_ERROR_INVALID_DEVICE

    def cuDeviceGetAttribute(self, value, attribute, device):
        value._obj.value = {75: 9, 76: 0}.get(attribute, 0)
        return 0


@pytest.mark.parametrize("devices, expected", [(1, (9, 0)), (0, None)])
def test_the_arch_comes_from_the_driver_without_pytorch(monkeypatch, devices, expected):
    import ctypes

    from kforge_nvidia import driver

    monkeypatch.setattr(ctypes, "CDLL", lambda name: _FakeDriver(devices))
    assert driver.driver_capability() == expected


def test_without_a_driver_there_is_no_capability(monkeypatch):
    import ctypes

    from kforge_nvidia import driver

    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", missing)
    assert driver.driver_capability() is None
