"""kforge_compile for the cpu backend, run in a real child process: JIT forced on the first inputs, Numba errors
as readable compile failures, the candidate's own errors classified as runtime errors."""

from __future__ import annotations

import textwrap

import pytest
from cpu_testing import EXAMPLE_PROBLEM, EXAMPLE_SOLUTION, candidate, run_stages

from kforge_core.problem import load_problem
from kforge_core.records import Candidate, CompileResult, Failure
from kforge_cpu import CpuOptions

RELU_SCALE = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, alpha: float):
            super().__init__()
            self.alpha = alpha

        def forward(self, x):
            return torch.relu(x) * self.alpha

    def get_inputs():
        return [torch.randn(64, 256)]

    def get_init_inputs():
        return [0.5]
"""

HEADER = """
    import numpy as np
    import torch
    import torch.nn as nn
    from numba import njit, prange
"""

MODEL_NEW = """
    class ModelNew(nn.Module):
        def __init__(self, alpha):
            super().__init__()
            self.alpha = alpha

        def forward(self, x):
            out = np.empty(x.shape, np.float32)
            relu_scale(x.contiguous().numpy(), np.float32(self.alpha), out)
            return torch.from_numpy(out)
"""


def kernel_candidate(kernel: str, model_new: str = MODEL_NEW) -> Candidate:
    return candidate(HEADER + kernel + model_new)


GOOD = kernel_candidate("""
    @njit(parallel=True, fastmath=True)
    def relu_scale(x, alpha, out):
        for i in prange(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = max(x[i, j], np.float32(0.0)) * alpha
""")

TYPING_ERROR = kernel_candidate("""
    @njit(parallel=True)
    def relu_scale(x, alpha, out):
        for i in prange(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = x[i, j] + "one"
""")

TORCH_IN_KERNEL = kernel_candidate("""
    @njit
    def relu_scale(x, alpha, out):
        out[:] = torch.relu(x) * alpha
""")

UNSUPPORTED_KEYWORD = kernel_candidate("""
    @njit
    def relu_scale(x, alpha, out):
        for i in range(x.shape[0]):
            out[i] = np.exp(x[i], dtype=np.float32)
""")

EAGER_SIGNATURE = kernel_candidate("""
    @njit("float32(float32, unicode_type)")
    def add_text(a, b):
        return a + b

    @njit
    def relu_scale(x, alpha, out):
        out[:] = x
""")

RUNTIME_IN_KERNEL = kernel_candidate("""
    @njit
    def relu_scale(x, alpha, out):
        if x.shape[1] > 8:
            raise ValueError("rows longer than 8 are not supported")
        out[:] = x
""")

RAISES_IN_INIT = kernel_candidate("""
    @njit
    def relu_scale(x, alpha, out):
        out[:] = x
""", MODEL_NEW.replace("self.alpha = alpha", "self.alpha = alpha / 0"))

FAILURE_CASES = {
    "syntax": (candidate("def broken(:\n    pass\n"), Failure.SYNTAX, ["model_new.py:1", "SyntaxError"]),
    "import": (candidate("import numpy\nimport not_a_module_anywhere\n"), Failure.IMPORT,
               ["ModuleNotFoundError", "not_a_module_anywhere", "model_new.py:2"]),
    "no_model_new": (candidate("import torch\nclass Kernel(torch.nn.Module):\n    pass\n"), Failure.NO_MODEL_NEW,
                     ["defines no class ModelNew (nor a class Model)"]),
    "torch_in_kernel": (TORCH_IN_KERNEL, Failure.COMPILE, ["Unknown attribute 'relu'", "torch.relu(x) * alpha"]),
    "unsupported_keyword": (UNSUPPORTED_KEYWORD, Failure.COMPILE,
                            ["NotImplementedError", "unsupported keyword arguments", "relu_scale(array(float32"]),
    "eager_signature": (EAGER_SIGNATURE, Failure.COMPILE, ["TypingError", "add(float32, unicode_type)",
                                                            "while compiling add_text(float32, unicode_type)",
                                                            "return a + b"]),
    "runtime_in_kernel": (RUNTIME_IN_KERNEL, Failure.RUNTIME,
                          ["the first forward raised", "ValueError: rows longer than 8", "model_new.py:"]),
    "raises_in_init": (RAISES_IN_INIT, Failure.RUNTIME, ["ModelNew(*get_init_inputs()) raised", "ZeroDivisionError",
                                                         "self.alpha = alpha / 0"]),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, peaks_cache) -> dict[str, CompileResult]:
    """Every candidate of this module compiled once, in order, by one warm worker, as the harness keeps them: every
    candidate's file is model_new.py, and each log must quote its own candidate's lines, not those of one compiled
    before it. Each job's results by name: the good candidate first (nothing cached before it), the failures, the
    good one again under other options (the thread count last), and the shipped example for its own problem."""
    root = tmp_path_factory.mktemp("cpu-compile")
    (root / "relu_scale.py").write_text(textwrap.dedent(RELU_SCALE))
    relu_problem = load_problem(root / "relu_scale.py")
    jobs = {
        "good": (GOOD, relu_problem, CpuOptions()),
        "typing_error": (TYPING_ERROR, relu_problem, CpuOptions()),
        **{name: (cand, relu_problem, CpuOptions()) for name, (cand, _, _) in FAILURE_CASES.items()},
        "fastmath_refused": (GOOD, relu_problem, CpuOptions(fastmath=False)),
        "fastmath_allowed": (GOOD, relu_problem, CpuOptions(fastmath=True)),
        "shipped_example": (Candidate.from_path(EXAMPLE_SOLUTION), load_problem(EXAMPLE_PROBLEM), CpuOptions()),
        "one_thread": (GOOD, relu_problem, CpuOptions(threads=1)),
    }
    done = run_stages([(cand, problem, ("compile",), options) for cand, problem, options in jobs.values()],
                      root / "work", peaks_cache)
    return {name: results["compile"] for name, results in zip(jobs, done)}


def test_a_good_candidate_compiles_and_its_log_names_the_compiled_signature(compiled):
    result = compiled["good"]
    assert result.ok and result.failure is None, result.log
    assert "relu_scale(array(float32, 2d, C), float32, array(float32, 2d, C))" in result.log
    assert result.seconds > 0 and not result.cached


def test_a_typing_error_is_a_compile_failure_with_a_short_readable_log(compiled):
    result = compiled["typing_error"]
    assert not result.ok and result.failure == Failure.COMPILE
    log = result.log
    assert log.startswith("Numba TypingError (nopython frontend) while compiling relu_scale(array(float32, 2d, C)")
    assert "called from model_new.py:" in log and "relu_scale(x.contiguous().numpy()" in log  # the call site
    assert 'File "model_new.py", line' in log and 'out[i, j] = x[i, j] + "one"' in log  # the offending line
    assert "add(float32, Literal[str](one))" in log  # the types
    assert "\x1b[" not in log and "candidate implementations" not in log
    assert len(log.splitlines()) <= 45


def test_each_fault_gets_its_class_and_a_log_that_points_at_it(compiled):
    # compiled one after another in one warm worker, after the good candidate (the fixture above)
    assert compiled["good"].ok
    for name, (_, failure, expected) in FAILURE_CASES.items():
        result = compiled[name]
        assert result.failure == failure, f"{name}: {result.failure}\n{result.log}"
        for text in expected:
            assert text in result.log, f"{name}: {text!r} not in\n{result.log}"


def test_fastmath_is_refused_when_the_options_disable_it(compiled):
    refused, allowed = compiled["fastmath_refused"], compiled["fastmath_allowed"]
    assert refused.failure == Failure.COMPILE
    assert "fastmath is disabled" in refused.log and "relu_scale" in refused.log
    assert allowed.ok


def test_the_threads_option_sets_numbas_thread_count(compiled):
    assert "1 Numba threads" in compiled["one_thread"].log


def test_the_shipped_example_compiles(compiled):
    result = compiled["shipped_example"]
    assert result.ok, result.log
    assert "add_rmsnorm_kernel(array(float32, 2d, C)" in result.log
