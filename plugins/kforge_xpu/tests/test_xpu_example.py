"""The single-shot example is real Triton: run by Triton's interpreter on the CPU (TRITON_INTERPRET=1), its
ModelNew computes what the problem's Model computes, for fp32 (the problem's dtype) and fp16 inputs, with tiles
that do and do not divide the shapes. (The interpreter of Triton 3.9 gets bf16 tl.dot wrong for any kernel, so
bf16 is not checked here.) The same example runs through NVIDIA's Triton in test_xpu_gpu.py."""

import importlib.util
import os
import subprocess
import sys

import pytest

from kforge_core.problem import load_problem

from xpu_testing import EXAMPLE

needs_triton = pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                                  reason="triton not installed (pip install 'kforge-xpu[test]')")

SCRIPT = f"""
import sys, torch
sys.path.insert(0, {str(EXAMPLE)!r})
import gemm_epilogue as problem, gemm_epilogue_triton as solution
torch.manual_seed(0)
cases = [((64, 96, 80), torch.float32, 1e-5), ((37, 52, 72), torch.float32, 1e-5),  # 37 rows: partial tiles
         ((40, 64, 48), torch.float16, 2e-2)]
for (batch, k, n), dtype, tolerance in cases:
    reference = problem.Model(k, n, 2.0).to(dtype)
    model = solution.ModelNew(k, n, 2.0).to(dtype)
    model.load_state_dict(reference.state_dict())
    x = torch.randn(batch, k).to(dtype)
    out, expected = model(x), reference(x)
    assert out.dtype == expected.dtype and out.shape == expected.shape, (out.dtype, out.shape)
    error = (out.float() - expected.float()).abs().max().item()
    assert error < tolerance * max(1.0, expected.float().abs().max().item()), (batch, k, n, dtype, error)
print("ok")
"""


@needs_triton
def test_example_matches_its_reference_in_the_interpreter():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")


def test_example_problem_is_a_valid_problem():
    problem = load_problem(EXAMPLE / "gemm_epilogue.py")
    assert [spec.shape for spec in problem.inputs] == [(2048, 2048)]
    assert problem.outputs[0].dtype == "float32"
