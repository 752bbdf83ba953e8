"""``kforge bench`` end to end on the torch-cpu test backend: two slots, every kind of outcome, the store, the
report, and a second bench that finds its baselines in the cache."""

from __future__ import annotations

import json
import sqlite3

import pytest

from .conftest import QUICK, kforge


@pytest.fixture(scope="module")
def first_bench(bench_env):
    root, suite, solutions = bench_env
    result, document = kforge("bench", str(suite), "--solutions", str(solutions), "--devices", "0,1", "--json",
                              "--runs-dir", str(root / "runs"), *QUICK)
    assert result.exit_code == 0, result.output
    return root, document


def test_every_problem_gets_a_verdict_and_the_summary_counts_them(first_bench):
    _, document = first_bench
    problems = {p["problem"]: p for p in document["problems"]}
    assert list(problems) == ["level1/1_relu_scale", "level1/2_relu_wrong", "level1/3_relu_unsolved",
                              "level2/1_linear_relu", "level2/2_invalid"]  # the suite's order
    outcome = {key: p["failure"] or "correct" for key, p in problems.items()}
    assert outcome == {"level1/1_relu_scale": "correct", "level1/2_relu_wrong": "numerical_mismatch",
                       "level1/3_relu_unsolved": "no_solution", "level2/1_linear_relu": "correct",
                       "level2/2_invalid": "invalid_problem"}
    assert "defines no Model" in problems["level2/2_invalid"]["message"]
    correct = problems["level1/1_relu_scale"]
    assert correct["runtime_ms"] > 0 and set(correct["speedups"]) == {"eager"}
    assert correct["best_speedup"] == correct["speedups"]["eager"]
    summary = document["summary"]
    assert summary["total"] == 5 and summary["correct"] == 2
    assert summary["failures"] == {"invalid_problem": 1, "no_solution": 1, "numerical_mismatch": 1}
    assert summary["fast_p"]["0"] == pytest.approx(0.4) and set(summary["fast_p"]) == {"0", "1", "1.5", "2"}
    assert summary["geomean_speedup"]["eager"] > 0
    assert summary["evaluated_now"] == 4 and summary["seconds_per_problem"] > 0
    assert summary["precision"] == "fp32" and correct["precision_bits"] > 10


def test_the_two_slots_shared_the_problems(first_bench):
    _, document = first_bench
    devices = {p["device"] for p in document["problems"] if p["failure"] != "no_solution"}
    assert devices == {"cpu slot 0", "cpu slot 1"}


def test_results_are_in_the_store_and_the_bench_directory(first_bench):
    root, document = first_bench
    bench_dir = root / "runs" / document["bench"]
    with sqlite3.connect(root / "runs" / "kforge.db") as db:
        status = db.execute("SELECT status FROM benches WHERE id = ?", (document["bench"],)).fetchone()[0]
        rows = db.execute("SELECT key, status FROM bench_problems WHERE bench_id = ?", (document["bench"],)).fetchall()
    assert status == "finished" and sorted(rows) == sorted((p["problem"], "done") for p in document["problems"])
    verdict = json.loads((bench_dir / "problems" / "level1" / "2_relu_wrong" / "verdict.json").read_text())
    assert verdict["failure"] == "numerical_mismatch" and verdict["trials"]
    assert (bench_dir / "problems" / "level2" / "1_linear_relu" / "solution" / "1_linear_relu.py").is_file()
    report = (bench_dir / "report.md").read_text()
    assert "![fast_p curve](fast_p.png)" in report and (bench_dir / "fast_p.png").is_file()
    assert "**2 of 5 problems correct**" in report and (bench_dir / "speedups.png").is_file()
    assert json.loads((bench_dir / "summary.json").read_text()) == document
    # each correct solution against the speed of light on the host CPU (its measured peaks)
    correct = [p for p in document["problems"] if p["correct"]]
    assert all(0 < p["sol_fraction"] <= 1 and p["sol_binds"] in ("memory", "compute") for p in correct)
    assert document["summary"]["sol_fraction"]["solutions"]["count"] == len(correct)
    assert "fraction of the limit" in report and (bench_dir / "sol.png").is_file()


def test_a_second_bench_on_the_host_cpu_measures_its_baselines_again(first_bench, bench_env):
    root, first = first_bench
    _, suite, solutions = bench_env
    result, document = kforge("bench", str(suite), "--solutions", str(solutions), "--filter", "*relu_scale",
                              "--json", "--runs-dir", str(root / "runs"), *QUICK)
    assert result.exit_code == 0, result.output
    (problem,) = document["problems"]
    verdict = json.loads(open(problem["verdict_file"]).read())
    # a shared host's load moves a figure past any band: no prior from the first bench (Device.prior_band)
    (source,) = [s for s in verdict["baseline_sources"] if s["baseline"] == "eager"]
    assert (source["origin"], source["prior"]) == ("measured", "")
    assert document["summary"]["baseline_origins"] == {"measured now": 1}
    assert problem["timer"] == "wall" and problem["baseline_sources"]


def test_mistakes_in_the_command(bench_env):
    _, suite, solutions = bench_env
    result, _ = kforge("bench", str(suite), *QUICK)
    assert result.exit_code == 1 and "either --solutions DIR" in result.output
    result, _ = kforge("bench", "--resume", "bench-x", "--trials", "3")
    assert result.exit_code == 1 and "--resume continues a bench as it was started" in result.output
    result, _ = kforge("bench", str(suite), "--solutions", str(solutions), "--filter", "level9/*", *QUICK)
    assert result.exit_code == 1 and "no problem files matching level9/*" in result.output
    unrelated = suite.parent / "unrelated"
    unrelated.mkdir()
    (unrelated / "notes.txt").write_text("not a solution")
    result, _ = kforge("bench", str(suite), "--solutions", str(unrelated), *QUICK)
    assert result.exit_code == 1 and "no solution in" in result.output and "(found: notes.txt)" in result.output
    assert "hint: a problem's solution is level1/1_relu_scale.py (mirroring the suite's folders)" in result.output
