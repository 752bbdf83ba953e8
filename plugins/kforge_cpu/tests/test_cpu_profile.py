"""kforge_profile on real Numba kernels (run in a child process) and kforge_summarize_profile on its result."""

from __future__ import annotations

import textwrap

import numba
import pytest
from cpu_testing import candidate, run_stages

from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_core.registry import BackendRegistry
from kforge_cpu import CpuOptions
from kforge_cpu.vectorization import supported

PROFILE_OPTIONS = CpuOptions(profile_repetitions=3)


def one_input_problem(expression: str, shape: str) -> str:
    return f"""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return {expression}

    def get_inputs():
        return [torch.randn({shape})]

    def get_init_inputs():
        return []
"""


SCALE_SHIFT = one_input_problem("x * 1.5 + 0.25", "128, 512")
# large enough that the scan's kernel, not the forward's Python around it, takes most of the forward on a busy machine
CUMSUM = one_input_problem("torch.cumsum(x, dim=1)", "1024, 4096")


MATMUL = """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(128, 64))

        def forward(self, x):
            return x @ self.weight

    def get_inputs():
        return [torch.randn(96, 128)]

    def get_init_inputs():
        return []
"""

HEADER = """
    import numpy as np
    import torch
    import torch.nn as nn
    from numba import njit, prange
"""


def model_new(call: str) -> str:
    return f"""
    class ModelNew(nn.Module):
        def forward(self, x):
            x = x.contiguous().numpy()
            out = np.empty(x.shape, np.float32)
            {call}
            return torch.from_numpy(out)
"""


VECTORISED = candidate(HEADER + """
    @njit(parallel=True, fastmath=True)
    def scale_shift(x, out):
        for i in prange(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = x[i, j] * np.float32(1.5) + np.float32(0.25)
""" + model_new("scale_shift(x, out)"))

SCAN = candidate(HEADER + """
    @njit(parallel=True, fastmath=True)
    def running_sum(x, out):
        for i in prange(x.shape[0]):
            acc = np.float32(0.0)
            for j in range(x.shape[1]):
                acc += x[i, j]
                out[i, j] = acc
""" + model_new("running_sum(x, out)"))

FLOAT64_CONSTANTS = candidate(HEADER + """
    @njit(parallel=True)
    def scale_shift(x, out):
        for i in prange(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = x[i, j] * 1.5 + 0.25
""" + model_new("scale_shift(x, out)"))

SERIAL = candidate(HEADER + """
    @njit(fastmath=True)
    def scale_shift(x, out):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = x[i, j] * np.float32(1.5) + np.float32(0.25)
""" + model_new("scale_shift(x, out)"))

FUSED_AND_HOISTED = candidate(HEADER + """
    @njit(parallel=True, fastmath=True)
    def scale_shift(x, out):
        scaled = x * np.float32(1.5)
        shifted = scaled + x
        for i in prange(x.shape[0]):
            scratch = np.zeros(4, np.float32)
            for j in range(x.shape[1]):
                out[i, j] = shifted[i, j]
            scratch[0] = out[i, 0]
            out[i, 0] = scratch[0]
""" + model_new("scale_shift(x, out)"))


EXP_PER_ELEMENT = candidate(HEADER + """
    @njit(parallel=True, fastmath=True)
    def exp_scale(x, out):
        for i in prange(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = np.exp(x[i, j]) * np.float32(1.5)
""" + model_new("exp_scale(x, out)"))


NAIVE_MATMUL = candidate(HEADER + """
    @njit(parallel=True, fastmath=True)
    def matmul(x, w, out):
        for i in prange(x.shape[0]):
            for j in range(w.shape[1]):
                acc = np.float32(0.0)
                for k in range(x.shape[1]):
                    acc += x[i, k] * w[k, j]
                out[i, j] = acc

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(128, 64))

        def forward(self, x):
            out = np.empty((x.shape[0], self.weight.shape[1]), np.float32)
            matmul(x.contiguous().numpy(), self.weight.detach().numpy(), out)
            return torch.from_numpy(out)
""")


def metrics(profile, name: str):
    record = next(k for k in profile.kernels if k.name == name)
    return record, dict(record.metrics)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory, peaks_cache):
    """Every candidate compiled and profiled once, in one child process."""
    root = tmp_path_factory.mktemp("profile")
    problems = {}
    for name, source in (("scale_shift", SCALE_SHIFT), ("cumsum", CUMSUM), ("matmul", MATMUL)):
        (root / f"{name}.py").write_text(textwrap.dedent(source))
        problems[name] = load_problem(root / f"{name}.py")
    jobs = {
        "vectorised": (VECTORISED, problems["scale_shift"]),
        "scan": (SCAN, problems["cumsum"]),
        "float64": (FLOAT64_CONSTANTS, problems["scale_shift"]),
        "serial": (SERIAL, problems["scale_shift"]),
        "fused": (FUSED_AND_HOISTED, problems["scale_shift"]),
        "exp": (EXP_PER_ELEMENT, problems["scale_shift"]),
        "matmul": (NAIVE_MATMUL, problems["matmul"]),
    }
    # the scan's findings are ranked in a test; without a thread-scaling measurement, which a busy machine makes
    # erratic for a kernel of microseconds, only the kernel's own findings compete
    options = {name: PROFILE_OPTIONS for name in jobs} | {"scan": CpuOptions(profile_repetitions=3,
                                                                             thread_scaling=False)}
    results = run_stages([(cand, problem, ("compile", "profile"), options[name]) for name, (cand, problem) in
                          jobs.items()], root / "work", peaks_cache)
    for name, done in zip(jobs, results):
        assert done["compile"].ok, f"{name}: {done['compile'].log}"
    return {name: done["profile"] for name, done in zip(jobs, results)}, problems


def summarize(profile, problem) -> str:
    loaded = build_plugin_manager(PluginSelection(only=("cpu",)))
    backend = BackendRegistry(loaded).get("cpu").backend
    return loaded.hook.kforge_summarize_profile(backend=backend, problem=problem, profile=profile).text


def test_forward_metrics_count_bytes_and_compare_with_the_peaks(profiled):
    profiles, _ = profiled
    profile = profiles["vectorised"]
    assert profile.tool == "numba"
    forward, m = metrics(profile, "ModelNew.forward")
    assert m["bytes"] == 2 * 128 * 512 * 4  # one input read, one output written
    assert forward.duration_us > 0 and m["achieved_gbs"] > 0 and m["peak_gbs"] > 0
    assert m["bandwidth_pct_of_peak"] == pytest.approx(100 * m["achieved_gbs"] / m["peak_gbs"])
    assert m["flops"] == 0  # no matmul or convolution in the reference
    threads = numba.config.NUMBA_NUM_THREADS
    if threads > 1:
        assert "time_us_1_threads" in m and f"time_us_{threads}_threads" in m
    assert 0 < m["numba_share_pct"] <= 100.5


def test_a_prange_kernel_shows_its_parallel_loop_and_vectorised_inner_loops(profiled):
    profiles, _ = profiled
    kernel, m = metrics(profiles["vectorised"], "scale_shift")
    assert m["calls_per_forward"] == 1 and kernel.duration_us > 0
    assert m["parallel"] == "yes" and m["parallel_loops"] == 1 and m["serialized_loops"] == 0
    if supported():
        assert m["vectorization"] == "vectorised" and m["simd_bits"] >= 128
    assert "Parallel loop listing for  Function scale_shift" in profiles["vectorised"].raw


@pytest.mark.skipif(not supported(), reason="vectorisation is read from x86-64 assembly")
def test_a_scan_does_not_vectorise_and_the_summary_says_so_first(profiled):
    profiles, problems = profiled
    _, m = metrics(profiles["scan"], "running_sum")
    assert m["vectorization"] == "not vectorised" and m["scalar_loops"] >= 1
    assert "vaddss" in m["scalar_loop_ops"]
    text = summarize(profiles["scan"], problems["cumsum"])
    findings = text.split("Findings, most important first:")[1]
    assert findings.strip().startswith("1. running_sum: its hot loops are scalar (")
    assert "its hot loops are scalar" not in summarize(profiles["vectorised"], problems["scale_shift"])


@pytest.mark.skipif(not supported(), reason="read from x86-64 assembly")
def test_float64_constants_on_float32_data_are_caught(profiled):
    profiles, problems = profiled
    _, m = metrics(profiles["float64"], "scale_shift")
    assert m["f32_f64_conversions"] > 0 and m["float64_ops"] > 0
    assert "float32 data is computed in float64" in summarize(profiles["float64"], problems["scale_shift"])


def test_a_serial_kernel_is_reported_as_not_parallel(profiled):
    profiles, problems = profiled
    _, m = metrics(profiles["serial"], "scale_shift")
    assert m["parallel"] == "no" and "parallel_loops" not in m
    text = summarize(profiles["serial"], problems["scale_shift"])
    assert "not parallel (parallel=False)" in text
    if numba.config.NUMBA_NUM_THREADS > 1:
        assert "scale_shift is not parallel: it runs on 1 of" in text


def test_fused_array_expressions_and_hoisted_allocations_are_parsed(profiled):
    profiles, problems = profiled
    _, m = metrics(profiles["fused"], "scale_shift")
    assert m["fused_loops"] >= 1 and m["parallel_loops"] >= 1
    assert "scratch = np.zeros(4, np.float32)" in m["hoisted_allocations"]
    assert "allocations inside parallel loops" in summarize(profiles["fused"], problems["scale_shift"])


def test_the_summary_is_short_and_ranked(profiled):
    profiles, problems = profiled
    text = summarize(profiles["scan"], problems["cumsum"])
    lines = text.splitlines()
    assert lines[0].startswith("Numba profile of ModelNew.forward: ")
    assert any(line.startswith("Memory: ") and "of the measured" in line for line in lines)
    assert "Kernels by time" in text and "1. running_sum(array(float32, 2d, C), array(float32, 2d, C))" in text
    assert len(lines) <= 20


@pytest.mark.skipif(not supported() or numba.config.USING_SVML, reason="with SVML, exp is vectorised")
def test_math_calls_per_element_are_caught(profiled):
    profiles, problems = profiled
    _, m = metrics(profiles["exp"], "exp_scale")
    assert m["loops_with_calls"] >= 1
    assert "hot loop(s) call a function per element" in summarize(profiles["exp"], problems["scale_shift"])


def test_matmul_flops_are_counted_and_compared_with_the_measured_rate(profiled):
    profiles, problems = profiled
    _, m = metrics(profiles["matmul"], "ModelNew.forward")
    assert m["flops"] == 2 * 96 * 128 * 64  # counted by PyTorch's flop counter on the reference
    assert m["bytes"] == (96 * 128 + 128 * 64 + 96 * 64) * 4  # input, weight, output
    assert m["achieved_gflops"] > 0 and m["flops_pct_of_peak"] == pytest.approx(
        100 * m["achieved_gflops"] / m["peak_gflops"])
    text = summarize(profiles["matmul"], problems["matmul"])
    assert "Compute: 1.6 MFLOP of matmul/convolution per forward" in text and "(torch.mm)" in text


def test_the_summary_reads_a_profile_without_peaks(profiled):
    """When the peaks could not be measured (a tight memory limit in the worker), the profile still summarizes."""
    from kforge_core.records import KernelMetrics, ProfileResult

    profiles, problems = profiled
    forward, m = metrics(profiles["vectorised"], "ModelNew.forward")
    without = {key: value for key, value in m.items() if "peak" not in key and key != "page_fault_us"}
    stripped = KernelMetrics(forward.name, forward.duration_us, tuple(without.items()))
    profile = ProfileResult(tool="numba", kernels=(stripped, *profiles["vectorised"].kernels[1:]))
    text = summarize(profile, problems["scale_shift"])
    assert "(the machine's peak could not be measured)" in text and "Kernels by time" in text
