"""The GPU's facts without a GPU: peak rates from the driver's clocks and the architecture's table, and what the
generation agent reads of them."""

from kforge_nvidia.device_facts import GpuFacts, derive_rates


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
