from kforge_core.problem import load_problem
from kforge_cuda.backend import CUDA
from kforge_cuda.lowering import lower
from kforge_cuda.options import CudaOptions

from cuda_testing import EXAMPLES


def test_cuda_lowering_states_the_model_target_and_example(cuda_problem):
    lowering = lower(CUDA, cuda_problem, CudaOptions(arch="sm_90a"))
    assert lowering.backend == "cuda"
    assert "for sm_90a" in lowering.programming_model
    assert "load_cuda" in lowering.programming_model and 'extern "C"' in lowering.programming_model
    assert "<torch/extension.h>" in lowering.programming_model  # as what not to include
    assert "class ModelNew" in lowering.example.solution and "load_cuda(CUDA_SOURCE" in lowering.example.solution
    assert "class Model(" in lowering.example.problem
    assert "```python" in lowering.reply_format
    assert lowering.hardware  # facts here, or why there are none


def test_the_example_problem_is_a_valid_problem():
    assert load_problem(EXAMPLES / "cuda_problem.py").outputs[0].dtype == "float32"
