"""compute-sanitizer reports: trimming (on output recorded on an H200) and the verify wrapper that adds them."""

import types

import pytest

from kforge_core.hookspecs import hookimpl
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.records import Candidate, Failure, StageContext, VerifyResult
from kforge_cuda.backend import CUDA
from kforge_cuda.options import CudaOptions
from kforge_nvidia.sanitize import trim_memcheck
from kforge_triton.backend import TRITON, TritonOptions

from nvidia_testing import FIXTURES


def test_trim_keeps_the_access_error_with_kernel_line_and_thread():
    report = trim_memcheck((FIXTURES / "memcheck_out_of_bounds.txt").read_text())
    lines = report.splitlines()
    assert lines[0] == "compute-sanitizer memcheck found 3 errors, 1 of them memory access errors:"
    assert "Invalid __global__ write of size 4 bytes" in report
    assert "in broken_softmax.cu:6" in report and "by thread (255,0,0)" in report
    assert "Program hit" not in report and "frame #" not in report and "=====" not in report


def test_repeated_errors_are_counted_once():
    block = ("========= Invalid __global__ read of size 4 bytes\n=========     at k(float *)+0x10 in k.cu:3\n"
             "=========     by thread ({t},0,0) in block (0,0,0)\n")
    output = "".join(block.format(t=t) for t in range(5)) + "========= ERROR SUMMARY: 5 errors\n"
    report = trim_memcheck(output)
    assert report.count("Invalid __global__ read") == 1 and "5 times" in report


def test_no_error():
    assert "no memory error" in trim_memcheck("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")


def _failing_verifier(raises: bool):
    module = types.ModuleType("failing_verifier")

    @hookimpl  # answers before the core's generic verification
    def kforge_verify(backend, candidate, context):
        if raises:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return VerifyResult(correct=False, failure=Failure.MISMATCH, message="trial 0: max abs error 3.2")

    module.kforge_verify = kforge_verify
    return module


def _verify(tmp_path, cuda_problem, raises, sanitize=True, backend=CUDA, options_type=CudaOptions):
    loaded = build_plugin_manager(PluginSelection(only=(backend.name,)),
                                  extra_plugins=[("failing", _failing_verifier(raises))])
    options = options_type(sanitize=sanitize, compute_sanitizer=str(tmp_path / "no-such-tool"))
    context = StageContext(cuda_problem, tmp_path, options, tmp_path / "cache")
    return loaded.hook.kforge_verify(backend=backend, candidate=Candidate.from_source("x = 1"), context=context)


@pytest.mark.parametrize("backend, options_type", [(CUDA, CudaOptions), (TRITON, TritonOptions)])
def test_wrapper_adds_the_report_to_a_failed_verification(tmp_path, cuda_problem, backend, options_type):
    result = _verify(tmp_path, cuda_problem, raises=False, backend=backend, options_type=options_type)
    assert result.failure is Failure.MISMATCH
    assert result.message.startswith("trial 0: max abs error 3.2")
    assert "compute-sanitizer not found" in result.message  # this machine has none: the report says so


def test_wrapper_is_silent_unless_asked(tmp_path, cuda_problem):
    result = _verify(tmp_path, cuda_problem, raises=False, sanitize=False)
    assert result.message == "trial 0: max abs error 3.2"


def test_wrapper_lets_a_raised_exception_through_unchanged(tmp_path, cuda_problem):
    with pytest.raises(RuntimeError, match="illegal memory access") as raised:
        _verify(tmp_path, cuda_problem, raises=True)
    assert not getattr(raised.value, "__notes__", None)


def test_a_load_inline_while_verifying_is_content_addressed_and_a_caught_failure_is_flagged(tmp_path, cuda_problem):
    # KernelBench-style solutions call load_inline in ModelNew.__init__, first run in verification: there it must
    # find what was built ahead (the same cache and key as the compile stage) and fail as PyTorch fails
    import torch.utils.cpp_extension

    from kforge_core.languages.cuda_cpp.inline_cache import inline_key
    from kforge_core.plugin_api import BUILD_ERROR_CAUGHT
    from kforge_nvidia.toolchain import find_tool, nvcc_version

    seen = []
    module = types.ModuleType("inline_in_init")

    @hookimpl
    def kforge_verify(backend, candidate, context):
        from torch.utils.cpp_extension import load_inline  # as the candidate's __init__ does

        seen.append(hasattr(load_inline, "__wrapped__"))
        try:
            load_inline(name="mine", cpp_sources="broken", functions=["f"])
        except RuntimeError as raised:
            seen.append(str(raised))
        return VerifyResult(correct=True, message="all 1 trials passed")

    module.kforge_verify = kforge_verify
    nvcc = find_tool("nvcc", CudaOptions().nvcc)
    key = inline_key({"name": "mine", "cpp_sources": "broken", "functions": ["f"]},
                     nvcc_version(nvcc) if nvcc else "no nvcc")
    built = tmp_path / "cache" / "nvidia" / "inline" / key
    built.mkdir(parents=True)
    (built / "error.log").write_text(f"Error building extension 'kforge_{key}': broken.cpp:1: error: boom")
    loaded = build_plugin_manager(PluginSelection(only=(CUDA.name,)), extra_plugins=[("inline", module)])
    context = StageContext(cuda_problem, tmp_path, CudaOptions(), tmp_path / "cache")
    result = loaded.hook.kforge_verify(backend=CUDA, candidate=Candidate.from_source("x = 1"), context=context)
    assert seen == [True, "Error building extension 'mine': broken.cpp:1: error: boom"]
    assert result.correct and [f.code for f in result.flags] == [BUILD_ERROR_CAUGHT]
    assert "boom" in result.flags[0].message and not result.flags[0].blocking
    assert not hasattr(torch.utils.cpp_extension.load_inline, "__wrapped__")  # put back after the stage
