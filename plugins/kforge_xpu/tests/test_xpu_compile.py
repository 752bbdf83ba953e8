"""The compile stage on the host CPU, Triton's interpreter standing in for Intel's compiler (TRITON_INTERPRET=1):
the example's first call runs; a syntax error, an import error and a module without ModelNew are told apart; an
error of Intel's Triton at the first launch is a compile error with ocloc's log; Intel's device-lost text is a
device fault; any other error of the first call is left to verification. The candidates that raise Intel's errors
raise them themselves (their texts as Intel's Triton writes them): no Intel compiler runs here."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from xpu_testing import EXAMPLE, HERE

PROBLEM = (EXAMPLE / "gemm_epilogue.py").read_text().replace("2048, 2048, 2048", "64, 64, 80")
RAISES = '''
import torch.nn as nn

{prelude}

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        raise {error}
'''
INTEL_GPU_ERROR = ('type("IntelGPUError", (RuntimeError,), {"__module__": "triton.runtime.errors"})',
                   '"`ocloc` failed with error code 1\\n`ocloc` stderr:\\nerror: total scratch space exceeds HW '
                   'supported limit\\nRepro command: [\\"ocloc\\", \\"compile\\"]"')
CANDIDATES = {
    "syntax.py": "class ModelNew(:\n",
    "import_error.py": "import a_module_that_is_not_there\n",
    "no_model.py": "class Kernel: ...\n",  # neither ModelNew nor Model
    "intel_build.py": RAISES.format(prelude=f"IntelGPUError = {INTEL_GPU_ERROR[0]}",
                                    error=f"IntelGPUError({INTEL_GPU_ERROR[1]})"),
    "device_lost.py": RAISES.format(prelude="", error='RuntimeError("UR backend failed. UR backend returns:20 '
                                                     '(UR_RESULT_ERROR_DEVICE_LOST)")'),
    "value_error.py": RAISES.format(prelude="", error='ValueError("shapes do not match")'),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict:
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton not installed (pip install 'kforge-xpu[test]')")
    where = tmp_path_factory.mktemp("compile")
    (where / "problem.py").write_text(PROBLEM)
    files = [EXAMPLE / "gemm_epilogue_triton.py"]
    for name, source in CANDIDATES.items():
        (where / name).write_text(source)
        files.append(where / name)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    env.pop("TRITON_CACHE_DIR", None)
    done = subprocess.run([sys.executable, str(HERE / "compile_check.py"), str(where / "problem.py"),
                           str(where / "cache"), *map(str, files)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_example_compiles(compiled):
    assert compiled["gemm_epilogue_triton.py"]["ok"], compiled["gemm_epilogue_triton.py"]["log"]


@pytest.mark.parametrize("name, failure", [("syntax.py", "syntax_error"), ("import_error.py", "import_error"),
                                           ("no_model.py", "no_model_new")])
def test_what_is_not_a_kernel_is_told_apart(compiled, name, failure):
    assert compiled[name]["failure"] == failure


def test_an_intel_build_failure_at_the_first_launch_is_a_compile_error(compiled):
    result = compiled["intel_build.py"]
    assert result["failure"] == "compile_error"
    assert "IntelGPUError: `ocloc` failed with error code 1" in result["log"]
    assert "total scratch space" in result["log"] and "Repro command" not in result["log"]


def test_intels_device_lost_at_the_first_call_is_a_device_fault(compiled):
    result = compiled["device_lost.py"]
    assert result["failure"] == "device_fault"
    assert result["log"].startswith("the first call of ModelNew on the problem's inputs faulted")
    assert "device_lost.py" in result["log"] and "UR_RESULT_ERROR_DEVICE_LOST" in result["log"]


def test_any_other_error_of_the_first_call_is_left_to_verification(compiled):
    result = compiled["value_error.py"]
    assert result["ok"] and "ValueError: shapes do not match; verification reports it" in result["log"]
