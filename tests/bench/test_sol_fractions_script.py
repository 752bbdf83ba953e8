"""``benchmarks/sol_fractions.py``: its arguments, the self-check's problems, the rows it reads from a bench's
document, Nsight Compute's throughputs weighted by duration, the table and the self-check's judgement; and its CPU
path end to end (the GPU's is run on the GPU machine)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kforge_core.problem import load_problem

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sol_fractions.py"
spec = importlib.util.spec_from_file_location("sol_fractions", SCRIPT)
sol_fractions = importlib.util.module_from_spec(spec)
sys.modules["sol_fractions"] = sol_fractions  # its dataclasses look their module up
spec.loader.exec_module(sol_fractions)


def test_arguments_are_a_suite_with_solutions_or_the_self_check(capsys):
    with pytest.raises(SystemExit):
        sol_fractions.parse_args([])
    with pytest.raises(SystemExit):
        sol_fractions.parse_args(["suite"])  # no --solutions
    with pytest.raises(SystemExit):
        sol_fractions.parse_args(["suite", "--solutions", "s", "--self-check"])
    assert "give SUITE with --solutions, or --self-check" in capsys.readouterr().err
    assert sol_fractions.parse_args(["--self-check"]).timer == "events"  # a GPU: a device-time figure
    assert sol_fractions.parse_args(["--self-check", "--backend", "cpu"]).timer == "wall"


def test_the_self_check_problems_load_and_scale_to_the_device(tmp_path):
    args = sol_fractions.parse_args(["--self-check", "--backend", "cuda", "--gemm-size", "64", "--copy-elements",
                                     "1024"])
    suite, solutions = sol_fractions.write_self_check(tmp_path, args)
    gemm, copy = load_problem(suite / "gemm.py"), load_problem(suite / "copy.py")
    assert gemm.inputs[0].tensors()[0].dtype == "bfloat16" and gemm.inputs[0].tensors()[0].shape == (64, 64)
    assert copy.inputs[0].tensors()[0].shape == (1024,)
    assert "class ModelNew(" in (solutions / "gemm.py").read_text()
    cpu = sol_fractions.parse_args(["--self-check", "--backend", "cpu"])
    suite, _ = sol_fractions.write_self_check(tmp_path / "cpu", cpu)
    assert load_problem(suite / "gemm.py").inputs[0].tensors()[0].dtype == "float32"  # no tensor cores on the CPU


DOCUMENT = {"problems": [
    {"problem": "level1/1_gemm", "correct": True, "failure": None, "sol_ms": 1.0, "sol_binds": "compute",
     "sol_fraction": 0.5, "baseline_fractions": [["eager", 0.7], ["compile", 0.6]], "sol_score": 0.4,
     "speedups": {"eager": 0.7, "compile": 0.8}, "timer": "events", "verdict_file": None},
    {"problem": "level1/2_copy", "correct": False, "failure": "numerical_mismatch", "speedups": {}},
], "summary": {"geomean_sol_score": 0.4}}


def test_rows_are_read_from_the_bench_document_and_tabled():
    gemm, copy = sol_fractions.rows_of(DOCUMENT)
    assert (gemm.eager, gemm.compile, gemm.solution, gemm.score, gemm.binds) == (0.7, 0.6, 0.5, 0.4, "compute")
    assert copy.failure == "numerical_mismatch" and copy.solution is None
    text = sol_fractions.table([gemm, copy])
    assert "level1/1_gemm  correct" in text and "70.0%" in text and "numerical_mismatch" in text


def test_the_self_check_judges_the_references_fraction_on_a_gpu_only():
    gemm, copy = sol_fractions.rows_of({"problems": [
        {"problem": "gemm", "correct": True, "baseline_fractions": [["eager", 0.72]]},
        {"problem": "copy", "correct": True, "baseline_fractions": [["eager", 0.5]]}]})
    lines = sol_fractions.judge([gemm, copy], on_gpu=True)
    assert lines[0].startswith("gemm: eager at 72.0% of the bound, expected >= 60%") and lines[0].endswith("ok")
    assert "FAIL: the bound or the peaks are wrong" in lines[1]
    assert all("not judged" in line for line in sol_fractions.judge([gemm, copy], on_gpu=False))


def test_nsight_computes_throughputs_are_weighted_by_duration():
    memory, compute = sol_fractions.SOL_METRICS
    verdict = {"profile": {"kernels": [
        {"name": "a", "duration_us": 30.0, "metrics": [[memory, 90.0], [compute, 10.0]]},
        {"name": "b", "duration_us": 10.0, "metrics": [[memory, 50.0], [compute, 70.0]]},
        {"name": "c", "duration_us": 5.0, "metrics": [[memory, "n/a"]]}]}}
    assert sol_fractions.ncu_throughputs(verdict) == (80.0, 25.0)
    assert sol_fractions.ncu_throughputs({"profile": None}) == (None, None)


@pytest.mark.slow
def test_the_cpu_self_check_end_to_end(tmp_path, fresh_cache):
    out = tmp_path / "self.json"
    env = {**os.environ, "KFORGE_CACHE_DIR": str(fresh_cache), "KFORGE_HARNESS__SPARE_WORKERS": "0"}
    done = subprocess.run([sys.executable, str(SCRIPT), "--self-check", "--backend", "cpu", "--gemm-size", "128",
                           "--copy-elements", "65536", "--kforge-args", "--baselines eager --repetitions 5 --trials 2",
                           "--json", str(out)], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads(out.read_text())
    assert {row["problem"] for row in document["rows"]} == {"gemm", "copy"}
    assert all(row["correct"] and 0 < row["eager"] <= 1 and row["binds"] for row in document["rows"])
    assert "not judged" in document["checks"][0] and "copy" in done.stdout and "SOL score" in done.stdout
