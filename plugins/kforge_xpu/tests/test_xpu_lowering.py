"""What the generation agent is told: the Xe programming model with the device's limits, the device's facts read
from its properties, the one peak a vendor states, the grf option's spelling, and the example."""

from kforge_core.problem import load_problem
from kforge_xpu.device_facts import read_xpu_facts
from kforge_xpu.grf_option import LEGACY, MODERN, grf_option
from kforge_xpu.lowering import lower
from kforge_xpu.vendor_specs import stated_bandwidth, stated_peaks

from xpu_testing import EXAMPLE, StandInXpu, b580_properties


def test_facts_are_read_from_the_device_properties():
    facts = read_xpu_facts(StandInXpu(), 0)
    assert (facts.xe_cores, facts.eu_count, facts.eus_per_xe_core) == (20, 160, 8)
    assert facts.sub_group_sizes == (16, 32) and facts.max_sub_groups == 64
    assert facts.has_dpas and not facts.has_dpas_tf32 and facts.has_2d_block_io
    text = facts.describe()
    assert "20 Xe-cores (160 EUs)" in text and "Sub-group sizes 16/32" in text and "128 KiB" in text
    assert "456 GB/s peak, stated by Intel" in text and "241598" in text  # cited
    assert "tf32 DPAS: no" in text


def test_a_property_an_older_pytorch_lacks_reads_as_unknown():
    props = b580_properties()
    del props.last_level_cache_size
    facts = read_xpu_facts(StandInXpu(props), 0)
    assert facts.cache_bytes == 0 and "unknown to this PyTorch" in facts.describe()


def test_only_a_stated_bandwidth_is_quoted_and_one_stack_gets_its_share():
    assert stated_bandwidth("Intel(R) Arc(TM) A770 Graphics", 16 * 2**30) is None
    whole = stated_bandwidth("Intel(R) Data Center GPU Max 1550", 128 * 10**9)
    stack = stated_bandwidth("Intel(R) Data Center GPU Max 1550", 64 * 2**30)
    assert whole.bytes_per_s == 3.2768e12
    assert stack.bytes_per_s == 3.2768e12 / 2 and "one of its 2 stacks" in stack.source
    facts = read_xpu_facts(StandInXpu(b580_properties(name="Intel(R) Arc(TM) A770 Graphics")), 0)
    assert "not stated for this device" in facts.describe()


def test_the_stated_peaks_come_with_their_sources_and_one_stack_gets_its_share():
    assert stated_peaks("Intel(R) Arc(TM) A770 Graphics") is None  # unlisted: its peaks are measured instead
    card = stated_peaks("Intel(R) Data Center GPU Max 1550", 128 * 10**9)
    stack = stated_peaks("Intel(R) Data Center GPU Max 1550", 64 * 2**30)
    assert card.rate("bf16 matrix").value == 838.9e12 and "stated by Intel" in card.rate("bf16 matrix").source
    assert stack.rate("bf16 matrix").value == 838.9e12 / 2 and "one of its 2 stacks" in stack.rate("fp32").source
    b580 = stated_peaks("Intel(R) Arc(TM) B580 Graphics", 12 * 10**9)
    assert b580.bandwidth.value == 456e9 and b580.rate("fp32") is None
    assert "half the stated 233 INT8 TOPS" in b580.rate("fp16 matrix").source


def test_the_grf_option_follows_the_installed_intel_backend():
    assert grf_option(None) == MODERN
    assert grf_option("elif options.grf_mode == 'large':\n") == LEGACY
    assert grf_option("elif options.grf_mode == '256':\n") == MODERN


def test_lowering_with_a_device_states_its_limits():
    problem = load_problem(EXAMPLE / "gemm_epilogue.py")
    facts = read_xpu_facts(StandInXpu(b580_properties(**{
        "max_num_sub_groups": 32, "has_subgroup_matrix_multiply_accumulate_tensor_float32": True})), 0)
    lowering = lower(problem, facts, "grf_mode == 'large'")
    model = lowering.programming_model
    assert "num_warps x 32 <= 1024" in model and "num_warps <= 32" in model
    assert "128 KiB per\n  work-group" in model and "(18 MiB)" in model
    assert "and tf32 on this device" in model
    assert '`grf_mode="large"`' in model
    assert "make_tensor_descriptor" in model and 'input_precision="ieee"' in model
    assert lowering.hardware == facts.describe()


def test_lowering_without_a_device_says_so_and_keeps_the_model_whole():
    problem = load_problem(EXAMPLE / "gemm_epilogue.py")
    lowering = lower(problem, None, None)
    assert "$" not in lowering.programming_model  # every placeholder filled
    assert '`grf_mode="256"`' in lowering.programming_model
    assert lowering.hardware.startswith("No Intel GPU is visible here")
    assert "class ModelNew" in lowering.example.solution and "make_tensor_descriptor" in lowering.example.solution
    assert "class Model(" in lowering.example.problem
    assert "```python" in lowering.reply_format
