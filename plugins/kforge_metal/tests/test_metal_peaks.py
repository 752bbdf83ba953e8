"""Apple's published figures by the chip the device names: the unified memory's bandwidth of each M1-M4 chip (by
GPU variant where it differs), and the GPU's fp32 rate where Apple stated one, scaled to a binned chip's cores."""

import pytest

from kforge_core.devices.harness_device import named_units
from kforge_metal.apple_specs import apple_peaks
from kforge_metal.device import MetalDevice


@pytest.mark.parametrize("name, bandwidth, fp32", [
    ("Apple M1 Max, 32-core GPU", 400e9, 10.4e12),
    ("Apple M1 Pro, 14-core GPU", 200e9, 5.2e12 * 14 / 16),
    ("Apple M2", 100e9, 3.6e12),
    ("Apple M3 Max, 30-core GPU", 300e9, None),
    ("Apple M3 Max, 40-core GPU", 400e9, None),
    ("Apple M4 Max, 40-core GPU", 546e9, None),
])
def test_apple_figures_by_chip_and_gpu_cores(name, bandwidth, fp32):
    peaks = apple_peaks(name)
    assert peaks.bandwidth.value == bandwidth and "Apple's published specifications" in peaks.bandwidth.source
    rate = peaks.rate("fp32")
    assert (rate.value if rate else None) == (pytest.approx(fp32) if fp32 else None)


def test_an_unknown_chip_has_none_and_the_device_names_its_units():
    assert apple_peaks("an Apple GPU") is None
    assert MetalDevice.stated_peaks("Apple M5") is None
    assert named_units(MetalDevice, apple_peaks("Apple M2")).vector_units == "GPU cores"
    assert "Apple M4 Max" in MetalDevice.stated_devices()
