"""End to end: `kforge run` on the real cpu backend (Numba) and the real harness, driven by the demo's replay
script (the reply with no code, the typing error, the wrong result, the slow kernel, the fast one, and slower
variants). Checks how the loop reacted to each, and what the run left behind."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from loop_e2e import (
    DEMO_SCRIPT, SMALL_PROBLEM, analysis_prompts, assert_best_is_the_fastest_correct, assert_no_secret_stored,
    only_report, prompt_of, quick_environment, run_kforge,
)

from kforge_core.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
# what each line of `kforge run`'s output is, whatever its numbers: the README's sample must show the same kinds
LINE_KINDS = [
    ("run", r"run \S+: \S+ on cpu, fp32 precision contract; artifacts in \S+"),
    ("agent", r"(generation|analysis) agent: REPLAY of \S+ \(scripted replies; no model is called\)"),
    ("baselines", r"baselines: eager [\d.]+ ms(, compile [\d.]+ ms)?"),  # the tests' quick settings: eager only
    ("no code", r"functional f\d: no code in the reply .*\(\S+ tokens\)"),
    ("failed", r"functional f\d: (compile_error|numerical_mismatch): .*\(\S+ tokens\)"),
    ("correct", r"(functional f\d|optimization o\d\.\d): correct, [\d.]+ ms, [\d.]+x vs eager(, [\d.]+x vs compile)?"
                r"(, (<?[\d.]+%|-) of the speed of light)? ( \(new best\) )? \(\S+ tokens\)"),
    ("round", r"round \d: (no )?gain: \S+ runs in [\d.]+ ms against [\d.]+ ms for \S+"
              r"( \([\d.]+x faster\)| \(faster, but by less than \d+%\))?"),
    ("stopped", r"stopped: .+"),
    ("best", r"Best: \S+ — [\d.]+ ms( \((wall|events|device) time[^)]*\))?, [\d.]+x vs eager(, [\d.]+x vs compile)? "
             r"\(fp32 contract, [\d.]+ bits\)"),
    ("best", r"  baselines: (eager|compile) .+"),  # where the best's baselines came from, and when
    ("best", r"  speed of light .+"),  # the problem's bound on the host CPU (measured peaks), and the fractions
    ("index", r"kernel index: added the best kernel of run \S+ \(.+\)"),  # what later runs may be shown
    ("usage", r"LLM: \d+ calls, \S+ tokens, cost unknown \(no \[llm\] prices for these models\)"),
    ("file", r"  \S+/(best\.py|report\.md|speedup\.png)"),
    ("details", r"details: kforge show \S+ --runs-dir \S+"),
]


def output_shape(text: str) -> list[str]:
    """The kinds of the lines in order, each run of one kind counted once (how many attempts and rounds a replay
    gets depends on the timings)."""
    kinds = []
    for line in text.strip().splitlines():
        kind = next((k for k, pattern in LINE_KINDS if re.fullmatch(pattern, line)), f"unexpected: {line}")
        if not kinds or kinds[-1] != kind:
            kinds.append(kind)
    return kinds


def readme_demo() -> tuple[str, str]:
    """The README's demo command (as one line) and the output it shows."""
    section = (ROOT / "README.md").read_text().split("### The replay demo", 1)[1]
    command, sample = re.findall(r"```(?:sh)?\n(.*?)```", section, re.S)[:2]
    return " ".join(command.replace("\\\n", " ").split()), sample


def test_the_readme_demo_is_make_demos_command_and_its_sample_has_the_shape_the_cli_prints():
    command, sample = readme_demo()
    makefile = (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert command.replace("kforge ", "$(BIN)/kforge ", 1) == " ".join(makefile.replace("\\\n", " ").split()[1:])
    assert output_shape(sample) == EXPECTED_SHAPE, sample


# the demo as the README shows it: three failures, a correct kernel, optimization rounds, the summary
EXPECTED_SHAPE = ["run", "agent", "baselines", "no code", "failed", "correct", "round", "correct", "round", "correct",
                  "round", "stopped", "index", "best", "usage", "file", "details"]

# which one depends on the timings: the script has replies for 4 rounds, then it runs out
STOP_REASONS = ("2 optimization round(s) in a row brought no gain", "has no reply left", "of the speed of light")


@pytest.mark.slow
def test_the_demo_script_on_the_cpu_backend(tmp_path):
    runs = tmp_path / "runs"
    done = run_kforge("run", str(SMALL_PROBLEM), "--backend", "cpu", "--llm", f"replay:{DEMO_SCRIPT}",
                      "--runs-dir", str(runs), env=quick_environment())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "REPLAY of" in done.stdout and "no model is called" in done.stdout
    # the README's sample output has the shape of what the CLI printed, line by line
    assert set(output_shape(done.stdout)) == set(output_shape(readme_demo()[1])), done.stdout
    assert "unexpected" not in " ".join(output_shape(done.stdout)), done.stdout

    report = only_report(runs)
    verdicts = [a.verdict for a in report.attempts]
    assert verdicts[:4] == ["no code", "compile_error", "numerical_mismatch", "correct"]
    # the optimization rounds ran until no gain, or until the best came near the speed of light (loop.sol_target)
    rounds_run = 5 if "of the speed of light" in report.run.stop_reason else 6
    assert all(v == "correct" for v in verdicts[4:]) and len(verdicts) >= rounds_run
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

    best = report.best.outcome  # its place against the host CPU's measured speed of light, in the report too
    assert best.sol_ms > 0 and 0 < best.sol_fraction <= 1 and best.sol_binds in ("memory", "compute")
    assert "  speed of light " in done.stdout and "of the speed of light" in done.stdout
    markdown = (report.run_dir / "report.md").read_text()
    assert f"Best candidate: **{report.best.label}**" in markdown and "against eager" in markdown
    assert "Against the speed of light: speed of light" in markdown
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
