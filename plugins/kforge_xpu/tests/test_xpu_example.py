"""The single-shot example and the test candidates are real Triton: run by Triton's interpreter on the CPU
(TRITON_INTERPRET=1) against the problem's Model, for fp32 (the problem's dtype) and fp16 inputs, with shapes that
the tiles do and do not divide. The wrong candidate must be found wrong. (The interpreter of Triton 3.9 gets bf16
tl.dot wrong for any kernel, so bf16 is not checked here.) test_xpu_gpu.py runs the same on NVIDIA's Triton."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from kforge_core.problem import load_problem

from xpu_testing import CANDIDATES, EXAMPLE, HERE

TOLERANCE = {0: 1e-5, 1: 1e-5, 2: 2e-3}  # per case of candidate_check.SMALL_CASES: fp32, fp32, fp16


@pytest.fixture(scope="module")
def interpreted() -> dict[str, list[float]]:
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton not installed (pip install 'kforge-xpu[test]')")
    files = [EXAMPLE / "gemm_epilogue_triton.py", CANDIDATES / "gemm_then_epilogue.py",
             CANDIDATES / "epilogue_without_residual.py"]
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, str(HERE / "candidate_check.py"), "cpu", *map(str, files)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["gemm_epilogue_triton.py", "gemm_then_epilogue.py"])
def test_correct_kernels_match_the_reference_in_the_interpreter(interpreted, name):
    for case, error in enumerate(interpreted[name]):
        assert error < TOLERANCE[case], (name, case, error)


def test_the_wrong_candidate_is_wrong_in_the_interpreter(interpreted):
    assert all(error > 0.1 for error in interpreted["epilogue_without_residual.py"])


def test_example_problem_is_a_valid_problem():
    problem = load_problem(EXAMPLE / "gemm_epilogue.py")
    assert [spec.shape for spec in problem.inputs] == [(2048, 2048)]
    assert problem.outputs[0].dtype == "float32"
