"""The loop's decisions, on a toy backend whose verdicts the test scripts (fast; no harness involved)."""

from __future__ import annotations

import pytest
from loop_helpers import code_reply, run_toy, write_script


def gen(reply: str, **extra) -> dict:
    return {"agent": "generation", "reply": reply, "usage": {"input_tokens": 100, "output_tokens": 50}, **extra}


def analysis(text: str = "1. fuse the loops", **extra) -> dict:
    return {"agent": "analysis", "reply": text, "usage": {"input_tokens": 80, "output_tokens": 20}, **extra}


def test_functional_pass_reacts_to_each_failure_then_optimizes(tmp_path, scripted):
    script = write_script(tmp_path / "s.jsonl", [
        gen("I would rather explain the idea first."),
        gen(code_reply("compile_error"), expect={"contains": ["no fenced code block"]}),
        gen(code_reply("wrong"), expect={"contains": ["TypingError: bad types at line 3"]}),
        gen(code_reply("ms=8.0"), expect={"contains": ["max abs error 0.31"]}),
        analysis(expect={"contains": ["memory bound, 80% of peak", "8.000 ms"]}),
        gen(code_reply("ms=4.0"), expect={"contains": ["1. fuse the loops", "Current best implementation (f4"]}),
        analysis("2. vectorize", expect={"contains": ["Round 1: gain"]}),
        gen(code_reply("ms=4.5")),
        analysis("3. unroll"),
        gen(code_reply("ms=3.99")),
    ])
    result, progress = run_toy(tmp_path, script, scripted, patience=2)
    report = result.outputs.report
    assert [a.verdict for a in report.attempts] == [
        "no code", "compile_error", "numerical_mismatch", "correct", "correct", "correct", "correct"]
    assert report.best.label == "o3.1"  # 3.99 ms: the fastest, although by less than min_gain
    assert result.stop_reason == "2 optimization round(s) in a row brought no gain"
    assert scripted.profiled == ["f4", "o1.1"]
    best_py = (result.outputs.best_path).read_text()
    assert "kforge-test: ms=3.99" in best_py


def test_the_fastest_correct_candidate_is_best_and_profiles_are_not_repeated(tmp_path, scripted):
    script = write_script(tmp_path / "s.jsonl", [
        gen(code_reply("ms=8.0")), analysis(), gen(code_reply("ms=4.0")), analysis(), gen(code_reply("ms=4.5")),
        analysis(), gen(code_reply("ms=3.99")),
    ])
    result, progress = run_toy(tmp_path, script, scripted, patience=2)
    assert scripted.profiled == ["f1", "o1.1"]  # round 3 reuses the profile of o1.1, still the best then
    assert result.outputs.report.best.label == "o3.1"
    run = result.outputs.report.run
    assert (run.best_label, run.status) == ("o3.1", "finished")
    statuses = {s.stage for s in progress.statuses}
    assert {"generating", "evaluating", "profiling", "analysing"} <= statuses
    last = progress.statuses[-1]
    assert last.spent.tokens == 4 * 150 + 3 * 100 and last.spent.llm_calls == 7


def test_optimization_stops_at_the_speed_of_light_target_and_the_prompts_show_the_headroom(tmp_path, scripted):
    scripted.sol_ms = 2.0  # eager 10 ms is at 20% of it, compile 8 ms at 25%
    script = write_script(tmp_path / "s.jsonl", [
        gen(code_reply("ms=8.0")),
        analysis(expect={"contains": ["Bound: 2 ms; the memory roof binds.",
                                      "f1 reaches 25% of it; PyTorch eager 20%; PyTorch compile 25% (wall time)"]}),
        gen(code_reply("ms=2.1"), expect={"contains": [
            "Headroom: at 25% of the speed of light (2 ms, memory-bound): at most 4.00x faster is possible."]}),
        analysis(), gen(code_reply("ms=1.9")),  # never asked for: the run stops first
    ])
    result, progress = run_toy(tmp_path, script, scripted, optimization_rounds=3)
    assert result.stop_reason == ("o1.1 reaches 95% of the speed of light (2 ms, memory-bound), at or above "
                                  "loop.sol_target 90%: little is left to gain")
    assert [a.label for a in result.outputs.report.attempts] == ["f1", "o1.1"]
    assert any("o1.1: correct, 2.100 ms" in e and "95% of the speed of light" in e for e in progress.events)
    best = result.outputs.report.best.outcome
    assert (best.sol_ms, best.sol_binds, best.sol_fraction) == (2.0, "memory", pytest.approx(2.0 / 2.1))
    report = result.outputs.report_path.read_text()
    assert "Against the speed of light: speed of light 2 ms on the Toy T1, memory-bound" in report
    assert "| 95% |" in report


def test_a_failed_optimization_attempt_is_repaired_within_the_round(tmp_path, scripted):
    script = write_script(tmp_path / "s.jsonl", [
        gen(code_reply("ms=8.0")), analysis(), gen(code_reply("wrong")),
        gen(code_reply("ms=2.0"), expect={"contains": ["max abs error 0.31", "1. fuse the loops"]}),
    ])
    result, _ = run_toy(tmp_path, script, scripted, optimization_rounds=1)
    assert [a.label for a in result.outputs.report.attempts] == ["f1", "o1.1", "o1.2"]
    assert result.outputs.report.best.label == "o1.2"
    assert result.stop_reason == "all 1 optimization rounds done"


def test_no_correct_candidate_within_the_functional_attempts(tmp_path, scripted):
    script = write_script(tmp_path / "s.jsonl", [gen(code_reply("wrong")), gen(""), gen(code_reply("compile_error"))])
    result, _ = run_toy(tmp_path, script, scripted, functional_attempts=3)
    assert result.stop_reason == "no correct candidate in 3 functional attempts"
    assert not result.found_correct and result.outputs.best_path is None
    assert not (result.outputs.report.run_dir / "best.py").exists()
    assert "No correct candidate was found." in result.outputs.report_path.read_text()


@pytest.mark.parametrize("budget, reason, calls", [
    ({"max_llm_calls": 3}, "the budget of 3 LLM calls is spent", 3),
    ({"max_tokens": 250}, "the budget of 250 tokens is spent (300 used)", 2),
])
def test_budgets_stop_the_run_before_the_next_call(tmp_path, scripted, budget, reason, calls):
    script = write_script(tmp_path / "s.jsonl", [gen("no code")] * 5)
    result, _ = run_toy(tmp_path, script, scripted, functional_attempts=5, **budget)
    assert result.stop_reason == reason
    assert len(result.outputs.report.attempts) == calls


def test_the_cost_budget_uses_the_configured_prices(tmp_path, scripted):
    import dataclasses

    from kforge_core.loop.session import plan_run, start_run
    from kforge_core.store import RunStore
    from loop_helpers import PROBLEM, RecordingProgress, toy_app, toy_settings

    script = write_script(tmp_path / "s.jsonl", [gen("no code")] * 5)
    settings = toy_settings(tmp_path, script, functional_attempts=5, max_cost_usd=0.0025)
    # $10 per million input tokens, $20 per million output tokens: each call (100 in, 50 out) costs $0.002
    settings = dataclasses.replace(settings, llm=dataclasses.replace(settings.llm, prices={str(script): (10.0, 20.0)}))
    with RunStore(settings.runs_dir) as store:
        result = start_run(toy_app(), plan_run(settings, PROBLEM, store=store), store, RecordingProgress(),
                           evaluator_factory=scripted.factory())
    assert result.stop_reason == "the budget of $0.0025 is spent ($0.0040)"
    assert len(result.outputs.report.attempts) == 2
    assert result.outputs.report.usage[0].cost_usd == pytest.approx(0.004)
    assert "0.0040" in result.outputs.report_path.read_text()


def test_the_wall_time_budget(tmp_path, scripted):
    script = write_script(tmp_path / "s.jsonl", [gen("no code")] * 3)
    result, _ = run_toy(tmp_path, script, scripted, max_wall_s=1e-9)
    assert result.stop_reason.startswith("the wall-time budget") and not result.outputs.report.attempts


def test_a_replay_script_that_runs_out_ends_the_run_cleanly(tmp_path, scripted):
    script = write_script(tmp_path / "s.jsonl", [gen(code_reply("ms=8.0"))])
    result, progress = run_toy(tmp_path, script, scripted)
    assert "has no reply left (1 used)" in result.stop_reason
    assert result.outputs.report.best.label == "f1" and result.outputs.best_path.exists()
    assert any("REPLAY of" in e and "no model is called" in e for e in progress.events)


def test_profile_images_reach_the_analyst_and_the_run_directory(tmp_path, scripted, png):
    from kforge_core.records import Image, ProfileSummary

    scripted.summary = ProfileSummary(text="see the roofline", images=(Image(png, "roofline"),))
    script = write_script(tmp_path / "s.jsonl", [
        gen(code_reply("ms=8.0")), analysis(expect={"images": 1, "contains": ["Attached image 1: roofline"]}),
        gen(code_reply("ms=4.0")),
    ])
    result, _ = run_toy(tmp_path, script, scripted, optimization_rounds=1)
    run_dir = result.outputs.report.run_dir
    kept = list(run_dir.glob("steps/*-profile-*/1-roofline.png"))
    assert len(kept) == 1 and kept[0].read_bytes() == png.read_bytes()
    assert list(run_dir.glob("steps/*-analysis-*/prompt-image-1.png"))
    report = result.outputs.report_path.read_text()
    assert "see the roofline" in report and "1-roofline.png" in report
