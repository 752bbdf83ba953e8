"""The example and the test candidates through NVIDIA's Triton, on an NVIDIA GPU: ``pytest -m gpu
plugins/kforge_xpu`` (``make gpu-test``). Their kernels are real Triton, written for Xe; on an NVIDIA GPU they must
compute what the reference computes too (the example passes its Xe-only launch options only on xpu). A kernel
that does not compile raises Triton's CompilationError, which the plugin reads as a build failure."""

from __future__ import annotations

import pytest
import torch

from kforge_xpu.intel_errors import build_failure, build_log

from candidate_check import load, max_relative_errors
from xpu_testing import CANDIDATES, EXAMPLE

pytestmark = pytest.mark.gpu
EXAMPLE_FILE = EXAMPLE / "gemm_epilogue_triton.py"


@pytest.fixture(autouse=True)
def cuda_device():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference in true fp32


@pytest.mark.parametrize("path", [EXAMPLE_FILE, CANDIDATES / "gemm_then_epilogue.py"], ids=lambda p: p.stem)
def test_correct_kernels_match_the_reference_on_nvidia_triton(path):
    errors = max_relative_errors(path, "cuda")
    assert errors[0] < 1e-5 and errors[1] < 1e-5 and errors[2] < 2e-3, errors


def test_the_wrong_candidate_is_wrong_on_nvidia_triton():
    assert all(error > 0.1 for error in max_relative_errors(CANDIDATES / "epilogue_without_residual.py", "cuda"))


def test_example_at_the_problems_size_passes_the_harness_tolerance():
    import gemm_epilogue as problem  # on sys.path through candidate_check
    import triton.testing

    torch.manual_seed(0)
    reference = problem.Model(*problem.get_init_inputs()).cuda()
    model = load(EXAMPLE_FILE).ModelNew(*problem.get_init_inputs()).cuda()
    model.load_state_dict(reference.state_dict())
    (x,) = [t.cuda() for t in problem.get_inputs()]
    with torch.no_grad():
        out, expected = model(x), reference(x)
        assert bool(((out - expected).abs() <= 1e-4 + 1e-4 * expected.abs()).all()), \
            (out - expected).abs().max().item()
        ours = triton.testing.do_bench(lambda: model(x))
        eager = triton.testing.do_bench(lambda: reference(x))
    # For the record only: these tiles are Xe's choice, and fp32 here runs on CUDA cores without TF32.
    print(f"example on {torch.cuda.get_device_name()}: {ours:.4f} ms, eager {eager:.4f} ms, {eager / ours:.2f}x")


BROKEN = '''
import triton
import triton.language as tl

@triton.jit
def broken(x_ptr, n):
    offsets = tl.arange(0, n)  # arange needs constexpr bounds
    tl.store(x_ptr + offsets, 0.0)
'''


def test_a_triton_compile_error_is_read_as_a_build_failure(tmp_path):
    path = tmp_path / "broken_kernel.py"
    path.write_text(BROKEN)
    module = load(path)
    x = torch.empty(16, device="cuda")
    with pytest.raises(Exception) as caught:
        module.broken[(1,)](x, 16)
    assert build_failure(caught.value) is not None
    log = build_log(build_failure(caught.value))
    assert log.startswith("CompilationError") and "tl.arange(0, n)" in log, log
