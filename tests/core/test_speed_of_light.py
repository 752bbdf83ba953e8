"""The speed of light: the work a reference does, counted per operator on meta tensors; the bound on a device of
known peaks, each kind of work on the unit the precision contract allows; the physical floor; fractions and the
SOL score; and ``kforge check --device``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.peaks import Peak, peaks_of
from kforge_core.precision_contract import contract_named
from kforge_core.problem import load_problem
from kforge_core.speed_of_light import (FLOOR_SLACK_MEASURED, FLOOR_SLACK_STATED, place, problem_bound, sol_bound,
                                        sol_score)
from kforge_core.work_count import WorkCount
from kforge_core.workload import problem_floor

from .helpers import write_problem

SHEET = "the T1 datasheet"
# a device of round peaks: 1 TB/s, 10 TFLOP/s on its vector units, 100 on its 16-bit matrix units, 50 in TF32
TOY = peaks_of("Toy T1", Peak(1e12, SHEET), {"fp32": Peak(10e12, SHEET), "tf32 matrix": Peak(50e12, SHEET),
                                             "fp16 matrix": Peak(100e12, SHEET), "bf16 matrix": Peak(100e12, SHEET)},
               cache_bytes=1 << 20, vector_units="toy cores", matrix_units="toy tensor units")

GEMM = '''
import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return torch.relu(a @ b).softmax(dim=-1)


def get_inputs():
    return [torch.randn({m}, {k}, dtype=torch.{dtype}), torch.randn({k}, {n}, dtype=torch.{dtype})]


def get_init_inputs():
    return []
'''
# its forward reads a value: it cannot run on meta tensors
DATA_DEPENDENT = '''
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * int(x.sum().item() > 0)


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
'''
M, K, N = 512, 1024, 2048


def gemm_source(dtype: str, m: int = M, k: int = K, n: int = N) -> str:
    return GEMM.format(dtype=dtype, m=m, k=k, n=n)


def gemm(tmp_path, dtype="float32"):
    return load_problem(write_problem(tmp_path, gemm_source(dtype), f"gemm_{dtype}.py"))


def test_matrix_elementwise_and_reduction_work_are_counted_by_dtype(tmp_path):
    floor = problem_floor(gemm(tmp_path))
    work = {(w.kind, w.dtype): w.flops for w in floor.work.work}
    assert work == {("matrix", "float32"): 2 * M * K * N, ("elementwise", "float32"): M * N,
                    ("reduction", "float32"): 5 * M * N}  # softmax: max, subtract, exp, sum, divide
    assert floor.flops == 2 * M * K * N
    assert (floor.input_bytes, floor.output_bytes) == ((M * K + K * N) * 4, M * N * 4)
    no_count = problem_floor(load_problem(write_problem(tmp_path, DATA_DEPENDENT, "reads.py")))
    assert no_count.flops is None and "does not run on meta tensors" in no_count.work.reason


def test_the_bound_takes_the_unit_the_contract_allows(tmp_path):
    problem = gemm(tmp_path)
    fp32 = problem_bound(problem, TOY, contract_named("fp32"), flushes_caches=True)
    matmul = fp32.roofs[0]
    assert (matmul.unit, matmul.words) == ("fp32", "fp32 on toy cores")
    # the matmul and the elementwise and reduction work all run on the fp32 vector units: their times add
    assert matmul.flops == 2 * M * K * N + 6 * M * N
    assert fp32.compute_ms == pytest.approx((2 * M * K * N + 6 * M * N) / 10e12 * 1e3)
    assert fp32.memory_ms == pytest.approx((M * K + K * N + M * N) * 4 / 1e12 * 1e3)
    assert (fp32.sol_ms, fp32.binds) == (fp32.compute_ms, "compute")
    tf32 = problem_bound(problem, TOY, contract_named("tf32"), flushes_caches=True)
    assert [r.unit for r in tf32.roofs] == ["tf32 matrix", "fp32"]
    bf16 = problem_bound(problem, TOY, contract_named("bf16"), flushes_caches=True)
    assert bf16.roofs[0].unit in ("fp16 matrix", "bf16 matrix") and bf16.roofs[0].ms == pytest.approx(
        2 * M * K * N / 100e12 * 1e3)
    assert bf16.compute_ms == pytest.approx(2 * M * K * N / 100e12 * 1e3 + 6 * M * N / 10e12 * 1e3)
    assert bf16.compute_ms < fp32.compute_ms / 9
    half = problem_bound(gemm(tmp_path, "float16"), TOY, contract_named("fp32"), flushes_caches=True)
    assert half.roofs[0].unit == "fp16 matrix"  # fp16 data multiplies on the 16-bit units under any contract


def test_work_without_a_peak_is_left_out_and_said(tmp_path):
    vector_only = peaks_of("V1", Peak(1e12, SHEET), {"fp16 matrix": Peak(1e14, SHEET)})
    bound = problem_bound(gemm(tmp_path), vector_only, contract_named("fp32"), flushes_caches=True)
    assert bound.roofs == () and bound.binds == "memory"
    assert any("left out: the device states no peak for fp32" in note for note in bound.notes)
    assert problem_bound(gemm(tmp_path), None, contract_named("fp32"), flushes_caches=True).sol_ms is None
    uncounted = sol_bound(100, 60, 40, WorkCount(reason="the reference does not run on meta tensors"), TOY,
                          contract_named("fp32"), flushes_caches=True)
    assert uncounted.sol_ms is None and uncounted.binds == ""  # no bound, and why; its memory roof and floor stay
    assert uncounted.reason == "its FLOPs could not be counted (the reference does not run on meta tensors)"
    assert uncounted.memory_ms is not None and uncounted.floor_ms is not None
    assert "no bound (its FLOPs could not be counted" in "\n".join(uncounted.describe())


def test_the_physical_floor_counts_what_every_call_moves_beyond_the_cache():
    work, fp32 = WorkCount(), contract_named("fp32")
    mib = 1 << 20
    flushed = sol_bound(40 * mib, 16 * mib, 16 * mib, work, TOY, fp32, flushes_caches=True)
    # parameters are left out; the inputs are read from memory after the flush; the last MiB written may stay
    assert flushed.floor_bytes == 16 * mib + 15 * mib
    assert flushed.floor_ms == pytest.approx(31 * mib / 1e12 * 1e3)
    assert flushed.floor_slack == FLOOR_SLACK_STATED
    assert flushed.flag_threshold_ms == pytest.approx(flushed.floor_ms * 0.9 - 0.002)
    not_flushed = sol_bound(40 * mib, 16 * mib, 16 * mib, work, TOY, fp32, flushes_caches=False)
    assert not_flushed.floor_bytes == 31 * mib  # inputs may stay in the cache too
    small = sol_bound(mib, mib // 2, mib // 4, work, TOY, fp32, flushes_caches=False)
    assert small.floor_bytes == 0 and small.flag_threshold_ms == 0  # it all fits the cache: nothing is impossible
    measured = peaks_of("host", Peak(1e10, "measured here", measured=True), {})
    assert sol_bound(40 * mib, 16 * mib, 16 * mib, work, measured, fp32,
                     flushes_caches=True).floor_slack == FLOOR_SLACK_MEASURED


def test_a_problem_that_fits_an_unflushed_cache_is_bound_by_the_caches_bandwidth():
    host = peaks_of("host", Peak(1e10, "measured", measured=True), {}, cache_bytes=64 << 20,
                    cache_bandwidths=((2 << 20, Peak(3e11, "measured within L2", measured=True)),
                                      (64 << 20, Peak(1e11, "measured within L3", measured=True))))
    fits = sol_bound(32 << 20, 16 << 20, 16 << 20, WorkCount(), host, contract_named("fp32"), flushes_caches=False)
    assert fits.memory_ms == pytest.approx((32 << 20) / 1e11 * 1e3) and "fit a 64 MiB cache level" in fits.notes[0]
    assert fits.floor_bytes == 0  # and nothing it does is impossible
    small = sol_bound(1 << 20, 1 << 19, 1 << 19, WorkCount(), host, contract_named("fp32"), flushes_caches=False)
    assert small.memory_ms == pytest.approx((1 << 20) / 3e11 * 1e3)  # the smallest level it fits
    larger = sol_bound(128 << 20, 64 << 20, 64 << 20, WorkCount(), host, contract_named("fp32"), flushes_caches=False)
    assert larger.memory_ms == pytest.approx((128 << 20) / 1e10 * 1e3)
    flushed = sol_bound(32 << 20, 16 << 20, 16 << 20, WorkCount(), host, contract_named("fp32"), flushes_caches=True)
    assert flushed.memory_ms == pytest.approx((32 << 20) / 1e10 * 1e3)  # flushed before each run: from memory


def test_fractions_and_the_sol_score_never_pass_the_limit():
    bound = sol_bound(10**9, 5 * 10**8, 5 * 10**8, WorkCount(), TOY, contract_named("fp32"), flushes_caches=True)
    assert bound.sol_ms == pytest.approx(1.0)  # 1 GB at 1 TB/s
    assert sol_score(1.0, 3.0, 3.0) == pytest.approx(0.5)  # at the baseline
    assert sol_score(1.0, 1.0, 3.0) == pytest.approx(1.0)  # at the limit
    assert sol_score(1.0, 2.0, 3.0) == pytest.approx(2 / 3)
    assert sol_score(1.0, 0.8, 3.0) == 1.0 and sol_score(1.0, 2.0, 0.9) is None
    placed = place(bound, "events", 2.0, (("eager", 4.0), ("compile", 3.0)))
    assert placed.fraction == pytest.approx(0.5)
    assert dict(placed.baseline_fractions) == pytest.approx({"eager": 0.25, "compile": 1 / 3})
    assert (placed.baseline, placed.score) == ("compile", pytest.approx(2 / 3))
    assert "at most 2.00x faster" in placed.headroom()
    beyond = place(bound, "events", 0.95, (("eager", 0.9),))
    assert beyond.fraction == 1.0 and beyond.score is None
    assert "below the bound" in beyond.note and "is at or below the bound" in beyond.note


def test_check_prints_the_bound_on_a_named_gpu(tmp_path):
    # small: the check times the reference's forward, and a float16 matmul is slow on the CPU
    path = write_problem(tmp_path, gemm_source("float16", 64, 128, 256), "gemm_half.py")
    app = App(plugin_modules=("kforge_nvidia", "kforge_cuda"), load_plugins=False)
    result = CliRunner().invoke(cli, ["check", str(path), "--device", "cuda", "--gpu", "H100 SXM", "--json"],
                                obj=app)
    assert result.exit_code == 0, result.output
    bound = json.loads(result.output)["speed_of_light"]
    assert bound["device"] == "NVIDIA H100 SXM5"
    matmul = bound["roofs"][0]
    assert (matmul["unit"], matmul["peak"], matmul["source"]) == ("fp16 matrix", 989.4e12,
                                                                  "NVIDIA H100 datasheet (SXM5)")
    assert bound["bandwidth"] == 3.35e12 and bound["binds"] in ("memory", "compute")
    text = CliRunner().invoke(cli, ["check", str(path), "--device", "cuda", "--gpu", "H100 SXM"], obj=app).output
    assert "fp16 on tensor cores" in text and "speed of light:" in text and "physical floor" in text
    unknown = CliRunner().invoke(cli, ["check", str(path), "--device", "cuda", "--gpu", "X9"], obj=app)
    assert unknown.exit_code == 1 and "H200 SXM" in unknown.output
