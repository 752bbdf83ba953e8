"""A device's peaks: the record checks itself, fills what the vendor left out from a measurement, and a measurement
is made once per device and read back (one process measures while the others wait); the host CPU measures its own."""

from __future__ import annotations

import threading
import time

import pytest

from kforge_core.devices import make_device
from kforge_core.devices.cpu import cache_levels, cpu_model, last_level_cache_bytes
from kforge_core.measured_peaks import cached_peaks
from kforge_core.peaks import DevicePeaks, Peak, peaks_of
from kforge_core.records import Backend

STATED = Peak(1e12, "a datasheet")


def test_a_record_refuses_an_unknown_or_repeated_unit_and_a_peak_without_a_source():
    with pytest.raises(ValueError, match="unknown unit"):
        DevicePeaks("d", STATED, (("fp17", STATED),))
    with pytest.raises(ValueError, match="given twice"):
        DevicePeaks("d", STATED, (("fp32", STATED), ("fp32", STATED)))
    with pytest.raises(ValueError, match="source is empty"):
        Peak(1.0, "")
    with pytest.raises(ValueError, match="must be > 0"):
        Peak(0.0, "x")


def test_what_the_vendor_lacks_is_filled_from_a_measurement_and_round_trips_through_json():
    stated = peaks_of("d", None, {"fp16 matrix": STATED})
    assert stated.missing(("fp32", "fp16 matrix")) == ("memory", "fp32")
    measured = peaks_of("d", Peak(5e11, "measured", measured=True), {"fp32": Peak(2e12, "measured", True),
                                                                     "fp16 matrix": Peak(1.0, "measured", True)})
    both = stated.filled_from(measured)
    assert both.bandwidth.measured and both.rate("fp32").value == 2e12
    assert both.rate("fp16 matrix") is STATED  # the vendor's figure stays
    assert both.units == ("fp32", "fp16 matrix")
    assert DevicePeaks.from_json(both.to_json()) == both


def test_a_measurement_is_made_once_and_read_back_while_others_wait(tmp_path):
    calls = []

    def measure():
        calls.append(1)
        time.sleep(0.2)  # the others reach the lock meanwhile
        return peaks_of("dev", Peak(1e9, "measured", True), {})

    found = []
    threads = [threading.Thread(target=lambda: found.append(cached_peaks(tmp_path, "key", measure)))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(set(found)) == 1
    assert cached_peaks(tmp_path, "key", measure) == found[0] and len(calls) == 1
    cached_peaks(tmp_path, "another device", measure)  # another key: measured anew
    assert len(calls) == 2
    cached_peaks(tmp_path, "key", measure, refresh=True)  # measured again on demand, and kept
    assert len(calls) == 3 and cached_peaks(tmp_path, "key", measure) and len(calls) == 3


def test_the_host_cpu_measures_its_own_peaks_once(tmp_path, monkeypatch):
    device = make_device(Backend(name="host", programming_model="x", device="cpu"))
    peaks = device.peaks(tmp_path)
    # the fastest of the streaming kernels, the others' rates beside it
    assert peaks.bandwidth.measured and "streaming kernels" in peaks.bandwidth.source
    assert sum(kind in peaks.bandwidth.source for kind in ("copy", "scale in place", "add", "sum")) == 4
    assert peaks.rate("fp32").measured and "GEMM" in peaks.rate("fp32").source
    assert peaks.vector_units == "the CPU's SIMD lanes"
    if device.cache_levels():  # its caches are never flushed: copies within each level are measured too
        assert [size for size, _ in peaks.cache_bandwidths] == list(device.cache_levels())
        assert all("cache level" in peak.source for _, peak in peaks.cache_bandwidths)
    assert list((tmp_path / "peaks").glob("*.json"))
    def measured_again(*args, **kwargs):
        raise AssertionError("measured again")

    monkeypatch.setattr("kforge_core.measured_peaks.measure_peaks", measured_again)
    assert device.peaks(tmp_path) == peaks  # read back, not measured
    assert device.peaks(None) is None  # nothing stated, nothing to keep a measurement in


def test_the_host_cpus_model_and_last_level_cache_come_from_linux(tmp_path):
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n")
    assert cpu_model(tmp_path / "cpuinfo") == "Intel(R) Xeon(R) Platinum 8480+"
    for index, (level, kind, size) in enumerate(((1, "Data", "48K"), (1, "Instruction", "32K"),
                                                 (2, "Unified", "2048K"), (3, "Unified", "266240K"))):
        folder = tmp_path / "cache" / f"index{index}"
        folder.mkdir(parents=True)
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(kind + "\n")
        (folder / "size").write_text(size + "\n")
    assert last_level_cache_bytes(tmp_path / "cache") == 266240 * 1024
    assert cache_levels(tmp_path / "cache") == (2048 * 1024, 266240 * 1024)
    assert last_level_cache_bytes(tmp_path / "none") == 0
