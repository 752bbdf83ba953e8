"""``kforge eval --backend cpu`` end to end: the shipped example is correct and gets speedups; a broken Numba
candidate is a compile failure whose log a model can act on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cpu_testing import EXAMPLE_PROBLEM, EXAMPLE_SOLUTION

pytestmark = pytest.mark.slow  # `kforge eval` processes, Numba's JIT

KFORGE = Path(sys.executable).with_name("kforge")
QUICK = ["--trials", "2", "--warmup", "1", "--repetitions", "5"]

BROKEN = """
    import numpy as np
    import torch
    import torch.nn as nn
    from numba import njit, prange


    @njit(parallel=True, fastmath=True)
    def add_rmsnorm_kernel(x, residual, weight, eps, out):
        for r in prange(x.shape[0]):
            sum_sq = 0
            for c in range(x.shape[1]):
                h = x[r, c] + residual[r, c]
                sum_sq += h * h
            out[r] = sum_sq.sqrt()


    class ModelNew(nn.Module):
        def __init__(self, hidden, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x, residual):
            out = np.empty(x.shape, np.float32)
            add_rmsnorm_kernel(x.numpy(), residual.numpy(), self.weight.detach().numpy(), np.float32(self.eps), out)
            return torch.from_numpy(out)
"""


def kforge_eval(*args: str, cwd: Path, cache: Path) -> tuple[int, list[dict]]:
    env = {**os.environ, "KFORGE_CACHE_DIR": str(cache), "KFORGE_HARNESS__SPARE_WORKERS": "0"}  # no idle spare
    done = subprocess.run([str(KFORGE), "eval", *args, "--backend", "cpu", "--json"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.stdout.strip(), done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, peaks_cache) -> tuple[int, dict, dict]:
    """One ``kforge eval`` of the shipped example's solution and of a broken Numba candidate for its problem (the
    process, the reference of two 4096 x 2048 inputs and the workers serve both): its exit status and the two
    verdicts."""
    work = tmp_path_factory.mktemp("cpu-eval")
    broken = work / "broken.py"
    broken.write_text(textwrap.dedent(BROKEN))
    code, verdicts = kforge_eval(str(EXAMPLE_PROBLEM), str(EXAMPLE_SOLUTION), str(broken), *QUICK, "--baselines",
                                 "eager", "--profile", cwd=work, cache=peaks_cache)
    return code, *verdicts


def test_the_shipped_example_is_correct_and_gets_speedups(evaluated):
    _, verdict, _ = evaluated
    assert verdict["correct"] is True and verdict["failure"] is None, verdict["message"]
    assert verdict["backend"] == "cpu" and verdict["flags"] == []
    assert all(trial["passed"] for trial in verdict["trials"]) and len(verdict["trials"]) == 2
    assert verdict["compile"]["ok"] and "add_rmsnorm_kernel(array(float32, 2d, C)" in verdict["compile"]["log"]
    assert verdict["speedups"]["eager"] > 0 and verdict["runtime"]["count"] == 5
    assert verdict["profile"]["tool"] == "numba"
    assert verdict["profile_summary"].startswith("Numba profile of ModelNew.forward")


def test_a_broken_numba_candidate_is_a_compile_error_with_a_readable_log(evaluated):
    code, _, verdict = evaluated
    assert code == 3 and verdict["correct"] is False and verdict["failure"] == "compile_error"
    log = verdict["compile"]["log"]
    assert log.startswith("Numba TypingError (nopython frontend) while compiling add_rmsnorm_kernel(")
    assert "Unknown attribute 'sqrt' of type float64" in log  # the error and the types
    assert "out[r] = sum_sq.sqrt()" in log and "called from broken.py:" in log  # the candidate's lines
    assert len(log.splitlines()) <= 45 and "\x1b[" not in log
    assert verdict["verify"] is None and verdict["runtime"] is None and verdict["profile"] is None
    assert log in verdict["message"]  # what the generation agent reads
