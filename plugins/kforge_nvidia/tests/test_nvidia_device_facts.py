"""The GPU's facts and peaks without a GPU: the datasheet's figures by the driver's name (scaled to a MIG instance's
SMs), figures derived from the driver's clocks and the architecture's table for other parts, and what the
generation agent reads of them."""

import pytest

from kforge_nvidia.device_facts import GpuFacts
from kforge_nvidia.peaks import datasheet_peaks, derived_peaks, gpu_peaks


@pytest.mark.parametrize("name, bandwidth, fp16, fp32", [
    ("NVIDIA H100 80GB HBM3", 3.35e12, 989.4e12, 67e12),
    ("NVIDIA H100 PCIe", 2.0e12, 756.5e12, 51.2e12),
    ("NVIDIA H200", 4.8e12, 989.4e12, 67e12),
    ("NVIDIA H200 NVL", 4.8e12, 835.5e12, 60e12),
    ("NVIDIA B200", 8.0e12, 2250e12, 75e12),
    ("NVIDIA A100-SXM4-80GB", 2.039e12, 312e12, 19.5e12),
])
def test_datasheet_peaks_by_the_drivers_name(name, bandwidth, fp16, fp32):
    peaks = datasheet_peaks(name, 0)
    assert peaks.bandwidth.value == bandwidth and "datasheet" in peaks.bandwidth.source
    assert peaks.rate("fp16 matrix").value == pytest.approx(fp16)
    assert peaks.rate("fp32").value == pytest.approx(fp32)


def test_a_name_that_only_contains_a_listed_part_is_not_that_part():
    assert datasheet_peaks("NVIDIA GH200 480GB") is None
    assert datasheet_peaks("NVIDIA GB200") is None


def test_a_mig_instance_gets_its_share_of_the_sms():
    whole, slice_ = datasheet_peaks("NVIDIA H100 80GB HBM3", 132), datasheet_peaks("NVIDIA H100 80GB HBM3", 16)
    assert whole.rate("bf16 matrix").value == pytest.approx(989.4e12)
    assert slice_.rate("bf16 matrix").value == pytest.approx(989.4e12 * 16 / 132)
    assert "scaled to 16 of its 132 SMs" in slice_.rate("bf16 matrix").source and slice_.notes


def test_an_unlisted_part_is_derived_from_clock_sm_count_and_table():
    # an H100 SXM as its driver reports it, were it not listed: 132 SMs, 1980 MHz, HBM3 at 2619 MHz, 5120-bit bus
    peaks = derived_peaks("Some Hopper", (9, 0), 132, 1_980_000, 2_619_000, 5120)
    assert round(peaks.bandwidth.value / 1e12, 2) == 3.35
    assert round(peaks.rate("fp32").value / 1e12, 1) == 66.9
    assert round(peaks.rate("fp16 matrix").value / 1e12) == 1071
    assert "derived from the device's facts" in peaks.rate("fp32").source
    # an architecture whose tensor rate differs by product: CUDA cores only (its tensor cores are measured)
    ada = gpu_peaks("NVIDIA L4", (8, 9), 58, 2_040_000, 6_251_000, 192)
    assert ada.rate("fp32") is not None and ada.rate("fp16 matrix") is None
    assert derived_peaks("Some Old GPU", (6, 1), 28, 1_500_000, 0, 0) is None


def test_facts_describe_limits_and_ridge():
    facts = GpuFacts(name="NVIDIA H200", capability=(9, 0), sm_count=132, memory_bytes=141 * 2**30,
                     l2_bytes=60 * 2**20, shared_per_block=48 * 1024, shared_per_block_optin=227 * 1024,
                     shared_per_sm=228 * 1024, registers_per_sm=65536, max_threads_per_sm=2048,
                     memory_bandwidth=4.8e12, peak_flops={"fp32": 66.9e12})
    text = facts.describe()
    assert "sm_90" in text and "132 SMs" in text and "227 KiB" in text and "65536" in text
    assert "4.80 TB/s" in text and "ridge point" in text
