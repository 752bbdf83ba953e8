"""The lowering: programming model, machine facts (with measured, cached peaks) and the single-shot example."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from cpu_testing import EXAMPLE_PROBLEM, EXAMPLE_SOLUTION

from kforge_core.hookspecs import hookimpl
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_core.registry import BackendRegistry
from kforge_cpu import CPU_BACKEND, CpuOptions
from kforge_cpu.machine import SYSFS_CACHE, read_machine_facts, simd_from_flags
from kforge_cpu.peaks import machine_peaks, peaks_cache_file


@pytest.fixture
def lower(peaks_cache):
    loaded = build_plugin_manager(PluginSelection(only=("cpu",)))
    backend = BackendRegistry(loaded).get("cpu").backend
    problem = load_problem(EXAMPLE_PROBLEM)
    return lambda options=None: loaded.hook.kforge_lower(
        backend=backend, problem=problem, options=options, cache_dir=peaks_cache
    )


def test_the_lowering_explains_the_numba_model(lower):
    text = lower().programming_model
    for rule in ("@njit", "prange", ".numpy()", "torch.from_numpy", "np.float32(0.0)", "No allocation inside",
                 "`fastmath=True` is allowed", "Anything from `torch` inside an `@njit` function"):
        assert rule in text
    assert "$" not in text  # every placeholder was filled


def test_the_lowering_follows_the_fastmath_option(lower):
    text = lower(CpuOptions(fastmath=False)).programming_model
    assert "`fastmath` is disabled" in text and "is allowed" not in text


def test_the_hardware_facts_are_this_machines(lower):
    hardware = lower().hardware
    facts = read_machine_facts()
    assert f"{facts.cpus} CPUs available" in hardware
    assert f"{facts.simd.width_bits}-bit vectors" in hardware
    if SYSFS_CACHE.is_dir():
        assert "Caches: L1d" in hardware and "unknown" not in hardware.split("Caches:")[1].splitlines()[0]
    assert "GB/s measured (STREAM triad" in hardware and "GFLOP/s measured (torch.mm" in hardware
    assert "First touch of fresh memory" in hardware
    assert "once in 96.0 MiB" in hardware  # the example problem: three 4096 x 2048 float32 tensors


def test_the_example_is_the_shipped_problem_and_solution(lower):
    example = lower().example
    assert example.problem == EXAMPLE_PROBLEM.read_text()
    assert example.solution == EXAMPLE_SOLUTION.read_text()


def test_peaks_are_measured_once_and_then_read_from_the_cache(peaks_cache: Path):
    first = machine_peaks(peaks_cache)
    assert first.bandwidth_gbs > 0 and first.matmul_gflops > 0 and first.first_touch.page_fault_us >= 0
    path = peaks_cache_file(peaks_cache, read_machine_facts())
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "bandwidth_gbs": 12345.0}))
    assert machine_peaks(peaks_cache).bandwidth_gbs == 12345.0  # read back, not measured again
    path.write_text(json.dumps(dataclasses.asdict(first)))


def test_an_unreadable_peaks_file_is_measured_again(tmp_path: Path):
    path = peaks_cache_file(tmp_path, read_machine_facts())
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    peaks = machine_peaks(tmp_path)
    assert json.loads(path.read_text())["bandwidth_gbs"] == peaks.bandwidth_gbs > 0


def test_a_link_in_the_peaks_cache_is_not_followed(peaks_cache: Path, tmp_path: Path):
    """Workers write the cache directory; KForge's process reads the peaks (``kforge_lower``) and writes them."""
    path = peaks_cache_file(peaks_cache, read_machine_facts())
    real = json.loads(path.read_text()) if path.exists() else dataclasses.asdict(machine_peaks(peaks_cache))
    planted = tmp_path / "planted.json"  # figures a candidate chose, where KForge's process would read them
    planted.write_text(json.dumps({**real, "bandwidth_gbs": 12345.0}))
    path.unlink()
    path.symlink_to(planted)
    try:
        assert machine_peaks(peaks_cache).bandwidth_gbs != 12345.0  # measured again, and kept in a file of its own
        assert not path.is_symlink() and json.loads(planted.read_text())["bandwidth_gbs"] == 12345.0
    finally:
        path.unlink()
        path.write_text(json.dumps(real))


@pytest.mark.parametrize("flags, arch, name, bits", [
    ({"sse2", "avx", "avx2", "fma", "avx512f"}, "x86_64", "AVX-512", 512),
    ({"sse2", "avx", "avx2", "fma"}, "x86_64", "AVX2", 256),
    ({"sse2"}, "x86_64", "SSE2", 128),
    ({"fp", "asimd"}, "aarch64", "NEON", 128),
])
def test_simd_width_from_cpu_flags(flags, arch, name, bits):
    simd = simd_from_flags(flags, arch)
    assert (simd.name, simd.width_bits, simd.lanes(4)) == (name, bits, bits // 32)


def test_machine_facts_read_the_cpus_this_process_may_use():
    facts = read_machine_facts()
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert facts.cpus == expected
    if SYSFS_CACHE.is_dir():
        assert facts.last_level_cache_bytes >= 256 * 1024
        assert {c.level for c in facts.caches} >= {1, 2}


def test_kforge_lower_is_asked_only_for_cpu():
    other = dataclasses.replace(CPU_BACKEND, name="other")

    class Other:
        @hookimpl
        def kforge_register_backends(self, register):
            register(other)

    loaded = build_plugin_manager(PluginSelection(only=("cpu",)), extra_plugins=[("other", Other())])
    problem = load_problem(EXAMPLE_PROBLEM)
    lower = BackendRegistry(loaded).hooks("other").caller("lower")
    assert lower(backend=other, problem=problem, options=None, cache_dir=None) is None
