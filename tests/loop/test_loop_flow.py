"""The loop's decisions, on a toy backend whose verdicts the test scripts (fast; no harness involved)."""

from __future__ import annotations

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
    assert scripted.profiled == ["f4", "o1.1", "o3.1"] or scripted.profiled == ["f4", "o1.1"]
    best_py = (result.outputs.best_path).read_text()
    assert "kforge-test: ms=3.99" in best_py
