from kforge_core.problem import load_problem
from kforge_cuda.backends import CUDA, TRITON
from kforge_cuda.device_facts import GpuFacts, derive_rates
from kforge_cuda.lowering import lower
from kforge_cuda.options import CudaOptions

from cuda_testing import EXAMPLES, TRITON_EXAMPLE


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


def test_triton_lowering_has_its_own_model_and_example():
    problem = load_problem(TRITON_EXAMPLE / "problem.py")
    lowering = lower(TRITON, problem, None)
    assert "@triton.jit" in lowering.programming_model and "input_precision" in lowering.programming_model
    assert "@triton.jit" in lowering.example.solution
    assert lowering.example.solution != lower(CUDA, problem, None).example.solution


def test_example_problems_are_valid_problems():
    for path in (EXAMPLES / "cuda_problem.py", TRITON_EXAMPLE / "problem.py"):
        problem = load_problem(path)
        assert problem.outputs[0].dtype == "float32"


def test_peak_rates_from_clock_sm_count_and_table():
    # An H100 SXM as its driver reports it: 132 SMs, 1980 MHz, HBM3 at 2619 MHz on a 5120-bit bus.
    clock, bandwidth, peaks, sources = derive_rates((9, 0), 132, "NVIDIA H100 80GB HBM3", 1_980_000, 2_619_000, 5120)
    assert clock == 1.98
    assert round(bandwidth / 1e12, 2) == 3.35
    assert round(peaks["fp32"] / 1e12, 1) == 66.9
    assert round(peaks["fp16/bf16 tensor"] / 1e12) == 1071
    assert any("from a table" in s for s in sources)


def test_rates_fall_back_to_known_parts_and_say_so():
    clock, bandwidth, peaks, sources = derive_rates((9, 0), 132, "NVIDIA H200", 0, 0, 0)
    assert (clock, bandwidth) == (1.98, 4.8e12)
    assert sum("did not report" in s for s in sources) == 2
    _, _, peaks, sources = derive_rates((6, 1), 28, "Some Old GPU", 1_500_000, 0, 0)
    assert peaks == {} and any("unknown" in s for s in sources)


def test_facts_describe_limits_and_ridge():
    facts = GpuFacts(name="NVIDIA H200", capability=(9, 0), sm_count=132, memory_bytes=141 * 2**30,
                     l2_bytes=60 * 2**20, shared_per_block=48 * 1024, shared_per_block_optin=227 * 1024,
                     shared_per_sm=228 * 1024, registers_per_sm=65536, max_threads_per_sm=2048,
                     memory_bandwidth=4.8e12, peak_flops={"fp32": 66.9e12})
    text = facts.describe()
    assert "sm_90" in text and "132 SMs" in text and "227 KiB" in text and "65536" in text
    assert "4.80 TB/s" in text and "ridge point" in text
