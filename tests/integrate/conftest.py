"""Fixtures for export and integrate: accepted kernels made from the shipped basics solutions, and a run store
holding one finished run whose best candidate is one of them (written through the store's own API)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kforge_core.bench.plan import BenchPlan
from kforge_core.bench.report import VERDICT, problem_dir
from kforge_core.bench.results import ProblemResult
from kforge_core.codec import to_json
from kforge_core.export import AcceptedKernel
from kforge_core.records import Candidate
from kforge_core.settings import Settings
from kforge_core.store import RunStore, StepRecord
from kforge_core.store.bench_store import BenchStore
from kforge_core.store.attempts import Outcome

REPO = Path(__file__).resolve().parents[2]
BASICS = REPO / "examples" / "suites" / "basics"
TIMING = {"device": "cpu", "warmup": 3, "repetitions": 20, "l2_flush_bytes": 0, "synchronize": "s",
          "timer": "time.perf_counter", "fresh_inputs": True, "notes": ""}
RUN_ID = "20260101-000000-aaaa"
BENCH_ID = "bench-20260101-000000-bbbb"


def accepted(problem: str, solutions: str = "torch", speedup: float = 1.5, backend: str = "cpu") -> AcceptedKernel:
    """The basics solution of ``problem`` (``norm/2_rmsnorm``) as if a bench had accepted it."""
    path = BASICS / "solutions" / solutions / f"{problem}.py"
    return AcceptedKernel(
        problem=problem, problem_path=str(BASICS / "problems" / f"{problem}.py"), run_id=None, bench_id="b1",
        backend=backend, precision="fp32", candidate=Candidate.from_path(path), runtime_ms=2.0,
        speedups=(("eager", speedup), ("compile", speedup + 1)), baselines_ms=(("eager", 3.0),),
        precision_bits=22.5, tolerances=(("float32", 1e-4, 1e-4),), timing=TIMING,
    )


def device_of(backend: str) -> str:
    return {"cpu": "cpu", "triton": "cuda", "cuda": "cuda"}[backend]


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs directory with run RUN_ID, finished, whose one correct candidate is the torch RMSNorm solution."""
    runs = tmp_path_factory.mktemp("runs")
    problem = BASICS / "problems" / "norm" / "2_rmsnorm.py"
    candidate = Candidate.from_path(BASICS / "solutions" / "torch" / "norm" / "2_rmsnorm.py", label="f1")
    outcome = Outcome(label="f1", candidate_digest=candidate.digest, compiled=True, correct=True, failure=None,
                      message="", runtime_ms=2.0, best_speedup=1.25, speedups=(("eager", 1.25), ("compile", 2.0)),
                      baselines_ms=(("eager", 2.5), ("compile", 4.0)), precision_bits=22.0,
                      tolerances=(("float32", 1e-4, 1e-4),))
    with RunStore(runs) as store:
        store.create_run(RUN_ID, problem_name=problem.stem, problem_path=str(problem), problem_digest="0" * 16,
                         backend="cpu", model="replay:demo.jsonl", analyst_model="replay:demo.jsonl", config={},
                         precision="fp32")
        place = {"key": "k", "pass_kind": "functional", "round": 0, "attempt": 1, "label": "f1", "elapsed_s": 0.0}
        store.add_step(RUN_ID, StepRecord(seq=1, kind="generation", artifact_dir="steps/001",
                                          data={"candidate": to_json(candidate), "no_code": ""}, **place))
        store.add_step(RUN_ID, StepRecord(seq=2, kind="evaluation", artifact_dir="steps/002", data=to_json(outcome),
                                          **place))
        store.finish(RUN_ID, "finished", "")
    (runs / RUN_ID / "steps" / "002").mkdir(parents=True)
    (runs / RUN_ID / "steps" / "002" / "verdict.json").write_text(json.dumps({"method": TIMING}))
    return runs


@pytest.fixture(scope="session")
def bench_runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs directory with bench BENCH_ID of the basics torch solutions: GELU correct and timed (its verdict
    document beside it, as a bench keeps it), softmax wrong."""
    runs = tmp_path_factory.mktemp("bench-runs")
    plan = BenchPlan(BASICS / "problems", ("*2_gelu", "*5_softmax"), "cpu", BASICS / "solutions" / "torch",
                     "model_new.py", True, Settings(), ())
    gelu = Candidate.from_path(BASICS / "solutions" / "torch" / "elementwise" / "2_gelu.py")
    with BenchStore(runs) as store:
        info = store.create_bench(BENCH_ID, suite_path=str(plan.suite), backend="cpu", source=plan.source,
                                  config=plan.to_json())
        store.problem_done(BENCH_ID, "elementwise/2_gelu", to_json(ProblemResult(
            "elementwise/2_gelu", True, None, runtime_ms=3.0, speedups=(("eager", 0.8),),
            candidate_digest=gelu.digest)))
        store.problem_done(BENCH_ID, "reduction/5_softmax", to_json(ProblemResult(
            "reduction/5_softmax", False, "numerical_mismatch")))
        store.finish_bench(BENCH_ID, "finished")
    folder = problem_dir(info.bench_dir, "elementwise/2_gelu")
    folder.mkdir(parents=True)
    (folder / VERDICT).write_text(json.dumps({"method": TIMING, "precision": {
        "contract": "fp32", "tolerances": [["float32", 1e-4, 1e-4]]}}))
    return runs
