"""End to end: `kforge run` on the real cpu backend (Numba) and the real harness, driven by the demo's replay
script (the reply with no code, the typing error, the wrong result, the slow kernel, the fast one, and slower
variants). Checks how the loop reacted to each, and what the run left behind."""

from __future__ import annotations

import subprocess
import sys

from loop_e2e import (
    DEMO_SCRIPT, SMALL_PROBLEM, analysis_prompts, assert_best_is_the_fastest_correct, assert_no_secret_stored,
    only_report, prompt_of, quick_environment, run_kforge,
)

from kforge_core.store import RunStore

# which one depends on the timings: the script has replies for 4 rounds, then it runs out
STOP_REASONS = ("2 optimization round(s) in a row brought no gain", "has no reply left")


def test_the_demo_script_on_the_cpu_backend(tmp_path):
    runs = tmp_path / "runs"
    done = run_kforge("run", str(SMALL_PROBLEM), "--backend", "cpu", "--llm", f"replay:{DEMO_SCRIPT}",
                      "--runs-dir", str(runs), env=quick_environment())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "REPLAY of" in done.stdout and "no model is called" in done.stdout

    report = only_report(runs)
    verdicts = [a.verdict for a in report.attempts]
    assert verdicts[:4] == ["no code", "compile_error", "numerical_mismatch", "correct"]
    assert all(v == "correct" for v in verdicts[4:]) and len(verdicts) >= 6
    assert any(reason in report.run.stop_reason for reason in STOP_REASONS), report.run.stop_reason

    # each failure went back to the generation agent, and the analyst's advice reached it
    prompts = {a.label: prompt_of(report, a.step_dir) for a in report.attempts}
    assert "Your reply contained no usable code: the reply has no fenced code block." in prompts["f2"]
    assert "No implementation of function Function(<built-in function erf>)" in prompts["f3"]
    assert "math.erf(row * INV_SQRT2)" in prompts["f3"]  # the code that failed to compile
    assert "numerical_mismatch" in prompts["f4"] and "max abs error" in prompts["f4"]
    first_analysis = analysis_prompts(report)[0]
    assert "Numba profile of ModelNew.forward" in first_analysis and "# column by column" in first_analysis
    assert "Run on every core" in prompts["o1.1"] and "Current best implementation (f4" in prompts["o1.1"]

    assert_best_is_the_fastest_correct(report)
    assert_importable_and_correct(report.run_dir / "best.py")
    assert report.rounds and all(r.recommendations for r in report.rounds)
    with RunStore(runs) as store:
        calls = store.llm_calls(report.run.id)
    assert len(calls) == len(report.attempts) + len(report.rounds)
    assert all(c.usage_reported and c.input_tokens > 0 and c.requests == 1 for c in calls)

    markdown = (report.run_dir / "report.md").read_text()
    assert f"Best candidate: **{report.best.label}**" in markdown and "against eager" in markdown
    assert all(f"| {a.label} |" in markdown for a in report.attempts)
    assert (report.run_dir / "speedup.png").read_bytes()[:4] == b"\x89PNG"
    assert_no_secret_stored(runs)


def assert_importable_and_correct(best) -> None:
    """best.py is ready to import: a fresh interpreter loads it and its ModelNew matches the reference."""
    check = (
        "import importlib.util, torch, sys\n"
        f"spec = importlib.util.spec_from_file_location('best', {str(best)!r})\n"
        "best = importlib.util.module_from_spec(spec); spec.loader.exec_module(best)\n"
        "x = torch.randn(64, 256)\n"
        "y = best.ModelNew(1.7, -0.25)(x)\n"
        "sys.exit(0 if torch.allclose(y, torch.nn.functional.gelu(x) * 1.7 - 0.25, atol=1e-4, rtol=1e-4) else 1)\n"
    )
    assert subprocess.run([sys.executable, "-c", check], timeout=300).returncode == 0
