"""Verdicts: their JSON document (exact round trip), speedups, the timing method, baselines and profiles."""

from __future__ import annotations

import dataclasses
import json
import math
import time

import pytest

from kforge_core.harness import PrecisionReached, RuntimeStats, TimingMethod, Verdict
from kforge_core.harness import flags as F
from kforge_core.records import CompileResult, Failure, Flag, KernelMetrics, ProfileResult, TrialError, VerifyResult

from .helpers import candidate


def round_trip(verdict: Verdict) -> Verdict:
    return Verdict.from_json(json.loads(json.dumps(verdict.to_json(), allow_nan=False)))


@pytest.fixture(scope="module")
def honest(relu_harness) -> tuple[Verdict, float]:
    """An honest candidate's verdict on the shared harness, timed against eager, and the seconds its evaluation took:
    the tests below each check their part of it."""
    start = time.perf_counter()
    verdict = relu_harness.evaluate(candidate("relu_scale_numpy"))
    return verdict, time.perf_counter() - start


@pytest.fixture(scope="module")
def wrong(relu_harness) -> Verdict:
    """A wrong candidate's verdict, a profile asked for: the tests below each check their part of it."""
    return relu_harness.evaluate(candidate("mismatch"), profile=True)


def test_a_correct_verdict_has_runtimes_speedups_and_the_method(relu_harness, honest):
    verdict, _ = honest
    assert verdict.correct and verdict.failure is None
    eager = dict(verdict.baselines)["eager"]
    assert verdict.speedup("eager") == pytest.approx(eager.figure / verdict.runtime.figure)  # on the CPU: fastest runs
    assert verdict.method.statistic == "min" and eager.figure == eager.min
    assert verdict.best_speedup == verdict.speedup("eager")
    assert verdict.runtime.count == relu_harness.settings.harness.repetitions
    assert verdict.runtime.min <= verdict.runtime.median
    method = verdict.method
    assert (method.device, method.warmup, method.repetitions, method.l2_flush_bytes) == ("cpu", 1, 4, 0)
    assert method.fresh_inputs and "every timed call's outputs checked against the reference" in method.notes
    assert "drawn by the KForge process after the call returned" in method.notes
    assert round_trip(verdict) == verdict


def test_an_honest_verdict_is_placed_against_the_speed_of_light_and_never_flagged(honest):
    verdict, _ = honest
    light = verdict.speed_of_light
    assert verdict.correct and F.FASTER_THAN_HARDWARE not in {f.code for f in verdict.flags}
    # the host CPU's peaks were measured on this machine (once for the session, kept in its cache directory)
    assert light.bound.bandwidth > 0 and "measured on this device" in light.bound.bandwidth_source
    assert light.bound.binds in ("memory", "compute") and light.timer == verdict.timer == "wall"
    assert light.figure_ms == verdict.runtime_ms and 0 < light.fraction <= 1
    assert 0 < dict(light.baseline_fractions)["eager"] <= 1
    document = verdict.to_json()
    assert document["sol_ms"] == light.sol_ms and document["sol_fraction"] == light.fraction
    assert document["sol_score"] == light.score and document["speed_of_light"]["bound"]["bytes"] > 0
    assert round_trip(verdict) == verdict


def test_the_verdict_says_where_its_seconds_went(honest, wrong):
    verdict, spent = honest
    phases = dict(verdict.phases)
    assert list(phases) == ["prebuild", "reference", "worker", "compile", "verify", "timing", "quiet",
                            "baselines_ready", "finish"]
    assert all(seconds >= 0 for seconds in phases.values())
    assert phases["timing"] > 0 and phases["verify"] > 0  # the candidate's work is where it happened
    # the wait for the harness's other work and the baselines' own build, said apart, inside timing
    assert phases["quiet"] + phases["baselines_ready"] <= phases["timing"]
    assert sum(seconds for name, seconds in phases.items() if name not in ("quiet", "baselines_ready")) <= spent
    assert "timing" not in dict(wrong.phases)  # rejected in verify: never timed
    assert verdict.to_json()["phases"] == phases


def test_the_json_document_has_the_documented_fields(wrong):
    document = wrong.to_json()
    assert {"correct", "failure", "flags", "trials", "runtime", "baselines", "speedups", "best_speedup", "method",
            "message", "compile", "verify", "profile", "stdout", "stderr", "worker_replaced"} <= set(document)
    assert document["correct"] is False and document["failure"] == "numerical_mismatch"
    assert document["runtime"] is None and document["speedups"] == {}
    assert [t["seed"] for t in document["trials"]] == [42, 43, 44]
    assert all(t["max_abs_error"] > 1 for t in document["trials"])
    assert document["method"]["repetitions"] == 4  # the method is recorded for every measured evaluation


def test_non_finite_errors_survive_the_round_trip_as_strict_json(relu_harness):
    verdict = relu_harness.evaluate(candidate("nan_output"))
    assert math.isinf(verdict.verify.trials[0].max_abs_error)
    text = json.dumps(verdict.to_json(), allow_nan=False)
    assert '"max_abs_error": "inf"' in text
    assert round_trip(verdict) == verdict


def test_round_trip_of_every_field():
    verdict = Verdict(
        candidate="c", candidate_digest="abc", backend="torch-cpu", problem="p",
        compile=CompileResult(ok=True, log="built", seconds=1.5, cached=True),
        verify=VerifyResult(correct=True, trials=(TrialError(1, True, 0.0, math.nan, "m"),), flags=(
            Flag("reference_call", "ops", False),), notes=("n",), precision_bits=8.7),
        runtime=RuntimeStats(1.0, 1.1, 0.1, 0.9, 5),
        baselines=(("eager", RuntimeStats(2.0, 2.0, 0.0, 2.0, 5)), ("compile", RuntimeStats(1.5, 1.5, 0.0, 1.5, 5))),
        speedups=(("eager", 2.0), ("compile", 1.5)), flags=(Flag("reference_call", "ops", False),), failure=None,
        message="ok", method=TimingMethod("cuda:0", 3, 20, 100 << 20, "sync", "timer", True, "notes"),
        profile=ProfileResult(tool="ncu", kernels=(KernelMetrics("k", 1.0, (("dram", 0.5), ("bound", "memory"),
                                                                              ("nan", math.inf))),),
                              raw="raw", ops=("aten::empty",)),
        stdout="out", stderr="err", worker_replaced=True, baseline_errors=(("compile", "failed"),),
        precision=PrecisionReached("bf16", 8.7, ("torch.backends.cuda.matmul.allow_tf32: False -> True",),
                                   (("float32", 2e-2, 2e-2),)),
        device_streams=2,
    )
    assert verdict.to_json()["device_streams"] == 2
    assert verdict.best_speedup == 1.5  # against the faster baseline
    assert round_trip(verdict) == verdict
    older = {key: value for key, value in verdict.to_json().items() if key != "precision"}
    assert Verdict.from_json(older).precision == PrecisionReached("fp32")  # judged under the default then
    with pytest.raises(ValueError, match="schema"):
        Verdict.from_json({"schema": "something else"})


def test_a_blocking_flag_never_counts_as_a_speedup(relu_harness):
    verdict = relu_harness.evaluate(candidate("relu_scale_torch"))
    assert verdict.failure is Failure.CHEAT
    assert verdict.runtime is None and verdict.speedups == () and verdict.best_speedup is None
    assert verdict.blocking_flags and verdict.blocking_flags[0].code == F.REFERENCE_CALL


def test_measure_false_checks_correctness_only(relu_harness):
    verdict = relu_harness.evaluate(candidate("relu_scale_numpy"), measure=False)
    assert verdict.correct and verdict.runtime is None and verdict.method is None


def test_baselines_are_measured_once_and_a_failing_torch_compile_is_recorded(make_harness, monkeypatch, tmp_path):
    # Inductor cannot start (its configuration reads the count as a number; the baseline workers keep a count the
    # user set, where their build caches are KForge's own whatever the user set)
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "not-a-number")
    harness = make_harness(baselines=("eager", "compile"))
    verdict = harness.evaluate(candidate("relu_scale_numpy"))
    assert verdict.correct, verdict.message
    assert [name for name, _ in verdict.baselines] == ["eager"]
    assert "compile baseline failed" in dict(verdict.baseline_errors)["compile"]
    started = harness.workers_started
    assert harness.baselines().keys() == {"eager"}
    assert harness.workers_started == started  # cached: no new worker


@pytest.mark.slow
def test_torch_compile_baseline(make_harness):
    harness = make_harness(baselines=("eager", "compile"))
    measured = harness.baselines()
    assert set(measured) == {"eager", "compile"}, harness.baseline_errors
    assert all(stats.count == 4 and stats.median > 0 for stats in measured.values())


def test_profile_of_a_correct_candidate_and_its_summary(make_harness):
    harness = make_harness(cheat_policy="report")
    verdict = harness.evaluate(candidate("relu_scale_torch"), profile=True)
    assert verdict.correct, verdict.message
    profile = verdict.profile
    assert profile.tool == "torch.profiler"
    assert "aten::relu" in profile.ops and profile.files and profile.files[0].exists()
    assert any(k.name == "ModelNew.forward" for k in profile.kernels)
    flag = next(f for f in verdict.flags if f.code == F.REFERENCE_CALL)
    assert "the profiler saw PyTorch compute operators run: aten::clamp_min x1, aten::mul x1, aten::relu x1" \
        in flag.message  # the profiler also sees what relu calls underneath
    summary = harness.summarize(profile)
    assert "ModelNew.forward" in summary.text and "Minimum memory traffic" in summary.text
    assert "aten::relu" in summary.text


def test_a_failing_candidate_is_not_profiled(wrong):
    assert wrong.profile is None  # asked for, as the fixture did


def test_runtime_stats_from_samples():
    stats = RuntimeStats.from_samples([3.0, 1.0, 2.0, 10.0])
    assert (stats.median, stats.min, stats.count) == (2.5, 1.0, 4)
    assert stats.mean == 4.0 and stats.std == pytest.approx(4.0825, rel=1e-4)
    assert dataclasses.replace(stats, std=0.4).cv == pytest.approx(0.1)


def test_a_forward_that_never_returned_in_the_compile_stage_is_not_a_build_that_failed():
    from rich.console import Console

    from kforge_core.commands.eval import print_verdict
    from kforge_core.records import Candidate
    from kforge_core.store.attempts import Outcome

    hung = "the first forward (Numba compiles its kernels) did not return within 15 s (the call timeout)"
    verdict = Verdict(
        candidate="hang", candidate_digest="d", backend="cpu", problem="p",
        compile=CompileResult(ok=False, log=hung, failure=Failure.TIMEOUT), verify=None, runtime=None, baselines=(),
        speedups=(), flags=(), failure=Failure.TIMEOUT, message=hung, method=None, profile=None, stdout="",
        stderr="", worker_replaced=True)
    console = Console(record=True, width=200)
    print_verdict(console, verdict, None)
    text = console.export_text()
    assert "did not compile" not in text and f"the compile stage ended (timeout):\n{hung}" in text
    feedback = Outcome.from_verdict(verdict).feedback(Candidate.from_source("x = 1"))
    assert "did not compile" not in feedback.headline and "ended in timeout" in feedback.headline
    built = dataclasses.replace(verdict, compile=CompileResult(ok=False, log="TypingError", failure=Failure.COMPILE),
                                failure=Failure.COMPILE)
    assert Outcome.from_verdict(built).feedback(Candidate.from_source("x = 1")).headline == \
        "It did not compile (compile_error)."
