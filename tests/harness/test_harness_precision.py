"""Precision contracts in the harness: the precision-downgrade check blocks only what goes below the contract.

Unit tests first (the floor of bits, the switches, the static check); then candidates in workers: one computing
in bfloat16, one below it, a TF32 switch and a bfloat16 switch, each under the contracts that allow or forbid it.
"""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.harness import flags as F
from kforge_core.harness.host.static_check import check_source
from kforge_core.harness.precision_switches import switch_computes_in
from kforge_core.harness.worker.precision import floor_bits, precision_report
from kforge_core.precision_contract import CONTRACTS
from kforge_core.records import Candidate, Failure
from kforge_core.settings import HarnessSettings

from .helpers import CANDIDATES, PLUGIN_MODULE, PROBLEMS, candidate, problem

# ------------------------------------------------------------------------------------------------ units


def test_the_floor_of_bits_is_todays_under_fp32_and_only_ever_lower_under_a_narrower_contract():
    assert floor_bits(22.0, "float32", CONTRACTS["fp32"]) == 16.0  # 6 bits under the reference, as always
    assert floor_bits(22.0, "float32", CONTRACTS["tf32"]) == 9.0  # 2 under TF32's 11-bit mantissa
    assert floor_bits(22.0, "float32", CONTRACTS["bf16"]) == 6.0  # 2 under bfloat16's 8
    assert floor_bits(10.0, "float32", CONTRACTS["tf32"]) == 4.0  # an ill-conditioned problem: today's floor
    assert floor_bits(11.0, "float16", CONTRACTS["tf32"]) == 5.0  # tf32 does not narrow a float16 output


def _report(output: torch.Tensor, contract: str):
    """The precision report on ``output`` against a float64 reference of a GEMM, under ``contract``."""
    torch.manual_seed(0)
    x, w = torch.randn(256, 512, dtype=torch.float64), torch.randn(512, 128, dtype=torch.float64) / 512 ** 0.5
    exact = x @ w
    return precision_report([output(x, w)], [x.float() @ w.float()], [exact], "", (None,),
                            HarnessSettings(precision=contract))


def _in(dtype: torch.dtype):
    return lambda x, w: (x.to(dtype).float() @ w.to(dtype).float())


def _e4m3(x, w):
    return x.to(torch.float8_e4m3fn).float() @ w.to(torch.float8_e4m3fn).float()


@pytest.mark.parametrize("compute, contract, flagged", [
    (_in(torch.float32), "fp32", False), (_in(torch.bfloat16), "fp32", True), (_in(torch.float16), "fp32", True),
    (_in(torch.float16), "tf32", False), (_in(torch.bfloat16), "tf32", True), (_in(torch.bfloat16), "fp16", True),
    (_in(torch.bfloat16), "bf16", False), (_in(torch.float16), "bf16", False), (_e4m3, "bf16", True),
], ids=["fp32-fp32", "bf16-fp32", "fp16-fp32", "fp16-tf32", "bf16-tf32", "bf16-fp16", "bf16-bf16", "fp16-bf16",
        "e4m3-bf16"])
def test_computing_below_the_contract_is_flagged_and_within_it_is_not(compute, contract, flagged):
    report = _report(compute, contract)
    assert ({f.code for f in report.flags} == {F.PRECISION_DOWNGRADE}) is flagged, report.notes
    assert report.bits is not None and f"the {contract} contract's floor" in report.notes[0]
    if flagged:
        assert f"computed below the {contract} contract" in report.flags[0].message


def test_each_precision_switch_names_what_it_enables():
    assert switch_computes_in("torch.backends.cuda.matmul.allow_tf32", True) == "tf32"
    assert switch_computes_in("torch.backends.cuda.matmul.allow_tf32", False) == "float32"
    assert switch_computes_in("torch.get_float32_matmul_precision()", "high") == "tf32"
    assert switch_computes_in("torch.get_float32_matmul_precision()", "medium") == "bfloat16"
    assert switch_computes_in("torch.backends.mkldnn.matmul.fp32_precision", "bf16") == "bfloat16"
    assert switch_computes_in("torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction", True) == "float16"
    assert switch_computes_in("torch.get_default_dtype()", torch.bfloat16) == "bfloat16"
    assert switch_computes_in("torch.get_default_dtype()", torch.float64) == "float32"
    assert switch_computes_in("torch.backends.cuda.matmul.fp32_precision", "something new") is None


def test_the_static_check_reports_only_precision_evidence_beyond_the_contract():
    source = ("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\ntorch.set_float32_matmul_precision('high')\n"
              "y = torch.ones(2).half()\nz = torch.ones(2).to(torch.bfloat16)\n")

    def evidence(contract: str) -> str:
        found = {f.code: f.message for f in check_source(Candidate.from_source(source), problem("relu_scale"),
                                                         CONTRACTS[contract])}
        return found.get(F.PRECISION_DOWNGRADE, "")

    assert all(what in evidence("fp32") for what in ("allow_tf32", "set_float32_matmul_precision", ".half()",
                                                     "torch.bfloat16"))
    assert "allow_tf32" not in evidence("tf32") and "set_float32_matmul_precision" not in evidence("tf32")
    assert ".half()" in evidence("tf32") and "torch.bfloat16" in evidence("fp16")
    assert ".half()" not in evidence("fp16") and evidence("bf16") == ""


# ------------------------------------------------------------------------------------------------ in workers


def test_a_bfloat16_candidate_is_blocked_under_fp32_even_within_loosened_tolerances(make_harness):
    harness = make_harness("linear_relu", tolerances={"float32": (5e-2, 5e-2)})
    verdict = harness.evaluate(candidate("linear_relu_bf16"), measure=False)
    assert all(t.passed for t in verdict.verify.trials)  # within 5e-2 ...
    assert verdict.failure is Failure.CHEAT  # ... but computed below the fp32 contract
    flag = next(f for f in verdict.flags if f.code == F.PRECISION_DOWNGRADE)
    assert flag.blocking and "below the fp32 contract" in flag.message
    assert verdict.precision.contract == "fp32" and 7 < verdict.precision.bits < 10
    assert verdict.precision.tolerances == (("float32", 5e-2, 5e-2),)  # the user's, over the contract's


def test_a_tf32_switch_is_caught_under_fp32(relu_harness):
    verdict = relu_harness.evaluate(candidate("tf32_switch"), measure=False)
    assert verdict.failure is Failure.CHEAT
    flag = next(f for f in verdict.flags if f.code == F.PRECISION_DOWNGRADE)
    assert "below the fp32 contract" in flag.message
    assert "torch.backends.cuda.matmul.allow_tf32: False -> True" in flag.message
    assert verdict.precision.switches == () and verdict.worker_replaced



def test_a_switch_below_the_contract_is_rejected_before_the_candidate_is_timed(relu_harness, make_harness):
    # a switch turned at import is judged once the candidate is built, one turned in its constructor before its
    # first trial, one turned in forward when verification ends: a candidate the policy rejects costs nothing past
    # the point it is known (a CUDA-L1 solution turning TF32 on in __init__ spent 5.4 s of an H100's time being
    # timed, then 9 s being verified, most of it its own torch.compile in its first forward)
    harness = relu_harness  # the strict policy, as by default
    blocked = harness.evaluate(candidate("tf32_switch"))
    assert blocked.failure is Failure.CHEAT and blocked.runtime is None
    assert blocked.verify is None and "verify" not in dict(blocked.phases) and "timing" not in dict(blocked.phases)
    flag = next(f for f in blocked.flags if f.code == F.PRECISION_DOWNGRADE)
    assert flag.blocking and flag.message.count("allow_tf32: False -> True") == 1  # said once, found twice
    in_init = harness.evaluate(candidate("init_tf32_switch"))
    assert in_init.failure is Failure.CHEAT and in_init.runtime is None and "timing" not in dict(in_init.phases)
    assert in_init.verify is not None and in_init.verify.trials == ()  # built, never called
    assert any(f.code == F.PRECISION_DOWNGRADE and f.blocking for f in in_init.flags)
    in_forward = harness.evaluate(candidate("forward_tf32_switch"))
    assert in_forward.failure is Failure.CHEAT and in_forward.runtime is None
    assert in_forward.verify is not None and in_forward.verify.trials and "timing" not in dict(in_forward.phases)
    assert any(f.code == F.PRECISION_DOWNGRADE and f.blocking for f in in_forward.flags)
    reported = make_harness("relu_scale", warmup=1, repetitions=3, precision_policy="report")
    flagged = reported.evaluate(candidate("tf32_switch"))
    assert flagged.runtime is not None and "timing" in dict(flagged.phases)  # not blocking: timed as before
    assert any(f.code == F.PRECISION_DOWNGRADE and not f.blocking for f in flagged.flags)


@pytest.fixture
def kforge_eval(cache_dir, monkeypatch, tmp_path):
    """``kforge eval PROBLEM CANDIDATE... --precision ...`` through the CLI, on the torch-cpu test backend."""
    monkeypatch.chdir(tmp_path)  # no kforge.toml around
    monkeypatch.setenv("KFORGE_CACHE_DIR", str(cache_dir))
    monkeypatch.setenv("KFORGE_HARNESS__SPARE_WORKERS", "0")

    def run(problem_name: str, candidates: list[str], *flags: str):
        app = App(load_plugins=False, plugin_modules=(PLUGIN_MODULE,))
        args = ["eval", str(PROBLEMS / f"{problem_name}.py"), *(str(CANDIDATES / f"{c}.py") for c in candidates),
                "--backend", "torch-cpu", "--trials", "2", "--warmup", "1", "--repetitions", "3", "--baselines",
                "eager", *flags]
        return CliRunner().invoke(cli, args, obj=app, catch_exceptions=False)

    return run


def test_under_bf16_a_bfloat16_candidate_within_tolerance_passes_and_one_beyond_it_fails(kforge_eval):
    result = kforge_eval("linear_relu", ["linear_relu_bf16", "linear_relu_fp8"], "--precision", "bf16", "--json")
    assert result.exit_code == 3, result.output  # the second is incorrect
    bf16, fp8 = json.loads(result.stdout)
    assert bf16["correct"] is True and bf16["flags"] == [], bf16["message"]
    assert bf16["speedups"]["eager"] > 0  # timed, and compared with the baseline (under the bf16 contract)
    assert bf16["precision"]["contract"] == "bf16" and 7 < bf16["precision"]["bits"] < 10
    assert bf16["precision"]["tolerances"] == [["float32", 2e-2, 2e-2]]
    assert any("the bf16 contract's floor: 6.0" in note for note in bf16["verify"]["notes"])
    assert fp8["failure"] == "numerical_mismatch" and "outside atol=0.02, rtol=0.02" in fp8["message"]
    assert fp8["precision"]["contract"] == "bf16" and fp8["precision"]["bits"] is None  # a wrong answer: no bits


def test_under_tf32_a_tf32_switch_is_fine_and_a_bfloat16_switch_is_not(kforge_eval):
    result = kforge_eval("relu_scale", ["tf32_switch", "precision_switch"], "--precision", "tf32", "--no-timing")
    assert result.exit_code == 3, result.output
    text = " ".join(result.output.split())  # the console wraps lines at its width
    tf32_part, bf16_part = text.split("precision_switch (", 1)
    assert "precision contract: tf32 (may compute in float32, and TF32 in matmuls and convolutions" in tf32_part
    assert "precision switch within the contract: torch.backends.cuda.matmul.allow_tf32: False -> True" in tf32_part
    assert "CORRECT" in tf32_part and "NOT CORRECT" not in tf32_part and "(tf32 contract" in tf32_part
    assert "NOT CORRECT: cheat" in bf16_part and "below the tf32 contract" in bf16_part
    assert "torch.get_float32_matmul_precision(): 'highest' -> 'medium'" in bf16_part
