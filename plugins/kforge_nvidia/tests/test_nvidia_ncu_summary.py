"""Parsing and summarising Nsight Compute CSV recorded on an NVIDIA H200 (see record_fixtures.py)."""

import pytest

from kforge_core.records import KernelMetrics, ProfileResult
from kforge_nvidia.ncu import METRICS, ncu_command
from kforge_nvidia.ncu_csv import parse_ncu_csv
from kforge_nvidia.ncu_summary import assess, merge_launches, summarize_kernels
from kforge_nvidia.profile_stage import DROPPED_PREFIX, dropped_metrics

from nvidia_testing import FIXTURES


def _kernels(name):
    return parse_ncu_csv((FIXTURES / f"{name}.csv").read_text())


def test_parse_real_csv_into_typed_metrics():
    (kernel,) = _kernels("ncu_triton_rmsnorm")
    assert kernel.name == "add_rmsnorm_kernel"
    assert kernel.duration_us == pytest.approx(90.8, abs=0.1)
    assert kernel.metric("launch__registers_per_thread") == 31.0
    assert kernel.metric("device__attribute_display_name") == "NVIDIA H200"
    asked = {m for m in METRICS if kernel.metric(m) is not None}
    assert len(asked) >= len(METRICS) - 3  # ncu reported (almost) every metric we asked for


@pytest.mark.parametrize("fixture, bound", [
    ("ncu_triton_rmsnorm", "memory-bound"),
    ("ncu_cuda_softmax", "compute-bound"),
    ("ncu_cublas_gemm_fp16", "compute-bound"),
])
def test_bound_classification(fixture, bound):
    (kernel,) = _kernels(fixture)
    assert assess(kernel).bound == bound


def test_summary_gives_the_numbers_that_justify_it():
    text = summarize_kernels(_kernels("ncu_triton_rmsnorm"))
    assert text.startswith("Nsight Compute on NVIDIA H200 (sm_90)")
    assert "memory-bound" in text and "DRAM 88% of peak" in text and "under the memory roof" in text
    assert "occupancy 91% achieved" in text and "long_scoreboard 61%" in text


def test_tensor_core_kernel_reports_the_tensor_pipe():
    text = summarize_kernels(_kernels("ncu_cublas_gemm_fp16"))
    assert "tensor pipes active 95%" in text and "limited by" in text


def test_busy_sms_at_low_intensity_get_a_hint():
    text = summarize_kernels(_kernels("ncu_cuda_softmax"))
    assert "instructions that are not FLOPs" in text


def test_latency_bound_when_nothing_is_busy():
    kernel = KernelMetrics("tiny", 3.0, (("sm__throughput.avg.pct_of_peak_sustained_elapsed", 4.0),
                                         ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 7.0),
                                         ("launch__grid_size", 1.0)))
    assert assess(kernel).bound == "latency-bound"


def test_launches_of_one_kernel_are_merged_and_ranked():
    (soft,) = _kernels("ncu_cuda_softmax")
    (norm,) = _kernels("ncu_triton_rmsnorm")
    merged = merge_launches((soft, norm, soft, soft))  # 3 x 45.2 us, then 90.8 us
    assert [(k.name, n) for k, n, _ in merged] == [("scaled_softmax_kernel", 3), ("add_rmsnorm_kernel", 1)]
    assert "scaled_softmax_kernel x3" in summarize_kernels((soft, norm, soft, soft))


def test_empty_profile_and_garbage():
    assert "launched no GPU work" in summarize_kernels(())
    assert parse_ncu_csv("==PROF== Disconnected\n") == ()


def test_dropped_metrics_travel_in_the_raw_text():
    profile = ProfileResult(tool="ncu", raw=DROPPED_PREFIX + "a__b, c__d\n\"ID\",...")
    assert dropped_metrics(profile) == ("a__b", "c__d")


def test_ncu_command_profiles_only_the_forward_without_touching_clocks(tmp_path):
    command = ncu_command("ncu", tmp_path / "r.ncu-rep", METRICS, ["python", "child.py"])
    assert command[command.index("--clock-control") + 1] == "none"
    assert command[command.index("--profile-from-start") + 1] == "off"
    assert command[-2:] == ["python", "child.py"]


GEMM_PROBLEM = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return torch.relu(a @ b)

def get_inputs():
    return [torch.randn(256, 512, dtype=torch.float16), torch.randn(512, 128, dtype=torch.float16)]

def get_init_inputs():
    return []
"""


def test_problem_floor_counts_bytes_and_matrix_flops(tmp_path, cuda_problem):
    from kforge_core.problem import load_problem
    from kforge_core.workload import problem_floor

    softmax = problem_floor(cuda_problem)
    assert (softmax.bytes, softmax.flops, softmax.dtype) == (2 * 8192 * 2048 * 4, 0, "float32")
    path = tmp_path / "gemm_relu.py"
    path.write_text(GEMM_PROBLEM)
    gemm = problem_floor(load_problem(path))
    assert gemm.flops == 2 * 256 * 512 * 128
    assert gemm.bytes == (256 * 512 + 512 * 128 + 256 * 128) * 2


@pytest.mark.parametrize("name", ["cuda", "triton", "cute"])
def test_summary_compares_the_kernels_with_the_problem_floor(tmp_path, cuda_problem, name):
    from kforge_core.plugins import PluginSelection, build_plugin_manager
    from kforge_core.registry import BackendRegistry

    registry = BackendRegistry(build_plugin_manager(PluginSelection(only=(name,))))
    profile = ProfileResult(tool="ncu", kernels=_kernels("ncu_cuda_softmax"))
    summarize = registry.hooks(name).caller("summarize_profile")
    text = summarize(backend=registry.get(name).backend, problem=cuda_problem, profile=profile).text
    assert "Problem floor: 134.2 MB must move at least once (27.9 us at peak DRAM bandwidth)" in text
    assert "1.6x that floor" in text
