"""The triton example's kernel computes what its problem computes: run on the CPU by Triton's interpreter."""

import importlib.util
import os
import subprocess
import sys

import pytest

from cuda_testing import EXAMPLES

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                                reason="triton not installed (pip install 'kforge-cuda[triton]')")

SCRIPT = f"""
import sys, torch
sys.path.insert(0, {str(EXAMPLES)!r})
import triton_problem as problem, triton_solution as solution
torch.manual_seed(0)
reference = problem.Model(96, 1e-6)
model = solution.ModelNew(96, 1e-6)
model.load_state_dict(reference.state_dict())
for rows, cols in ((5, 96), (3, 80)):
    reference = problem.Model(cols, 1e-6); model = solution.ModelNew(cols, 1e-6)
    model.load_state_dict(reference.state_dict())
    x, r = torch.randn(rows, cols), torch.randn(rows, cols)
    error = (model(x, r) - reference(x, r)).abs().max().item()
    assert error < 1e-5, (rows, cols, error)
print("ok")
"""


def test_triton_example_matches_its_reference_in_the_interpreter():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")
