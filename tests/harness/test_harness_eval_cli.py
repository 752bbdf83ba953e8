"""``kforge eval``: the command, its JSON document, its exit status; a KernelBench load_inline candidate as is."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli

from kforge_core.secrets import encoded_forms

from .helpers import CANDIDATES, PLUGIN_MODULE, PROBLEMS

QUICK_FLAGS = ["--backend", "torch-cpu", "--trials", "2", "--warmup", "1", "--repetitions", "3",
               "--baselines", "eager"]


@pytest.fixture
def kforge_eval(cache_dir, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no kforge.toml around
    monkeypatch.setenv("KFORGE_CACHE_DIR", str(cache_dir))
    monkeypatch.setenv("KFORGE_HARNESS__SPARE_WORKERS", "0")

    def run(problem: str, candidate: str, *flags: str):
        app = App(load_plugins=False, plugin_modules=(PLUGIN_MODULE,))
        args = ["eval", str(PROBLEMS / f"{problem}.py"), str(CANDIDATES / candidate), *QUICK_FLAGS, *flags]
        return CliRunner().invoke(cli, args, obj=app, catch_exceptions=False)

    return run


def test_json_document_of_a_correct_candidate_and_each_stage_told_on_stderr_as_it_happens(kforge_eval):
    result = kforge_eval("relu_scale", "relu_scale_numpy.py", "--json", "--atol", "0.001", "--candidate-class",
                         "ModelNew")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # stdout holds the JSON alone
    told = [line.removeprefix("relu_scale_numpy: ") for line in result.stderr.splitlines()]
    assert told == ["getting the reference's outputs", "getting a worker ready", "compiling", "verifying",
                    "trial 1/2 passed", "trial 2/2 passed", "timing", "baselines: eager",
                    "timing block 1/3", "timing block 2/3", "timing block 3/3"], result.stderr
    assert "tolerance for float32 outputs: atol=0.001, rtol=0.0001 (--atol/--rtol; rtol the harness's default)" \
        in document["verify"]["notes"]
    assert document["correct"] is True and document["failure"] is None and document["flags"] == []
    assert len(document["trials"]) == 2 and all(t["passed"] for t in document["trials"])
    assert document["runtime"]["count"] == 3
    assert set(document["baselines"]) == {"eager"} and set(document["speedups"]) == {"eager"}
    assert document["method"]["device"] == "cpu"


def test_rich_output_of_an_incorrect_candidate_and_its_exit_status(kforge_eval):
    result = kforge_eval("relu_scale", "mismatch.py")
    assert result.exit_code == 3
    assert "correctness trials" in result.output
    assert "NOT CORRECT: numerical_mismatch" in result.output
    assert "max abs error" in result.output


def test_a_candidate_that_did_not_compile_shows_its_error_once_and_no_timing_plan(kforge_eval):
    result = kforge_eval("relu_scale", "syntax_error.py")
    assert result.exit_code == 3
    assert "did not compile" in result.output and "NOT CORRECT: syntax_error" in result.output
    assert result.output.count("SyntaxError") == 1, result.output
    assert "would be checked again" not in result.output and "timing:" not in result.output


def test_report_policy_and_profile(kforge_eval):
    result = kforge_eval("relu_scale", "relu_scale_torch.py", "--json", "--policy", "report", "--profile")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [(f["code"], f["blocking"]) for f in document["flags"]] == [("reference_call", False)]
    assert document["profile"]["tool"] == "torch.profiler"
    assert "ModelNew.forward" in document["profile_summary"]


def test_an_unknown_backend_is_a_clean_error(kforge_eval):
    result = CliRunner().invoke(cli, ["eval", str(PROBLEMS / "relu_scale.py"), str(CANDIDATES / "mismatch.py"),
                                      "--backend", "nonesuch"], obj=App(load_plugins=False))
    assert result.exit_code == 1
    assert "Error: unknown backend 'nonesuch'" in result.output


@pytest.mark.slow
def test_a_kernelbench_load_inline_candidate_evaluates_as_it_is(kforge_eval):
    result = kforge_eval("relu_scale", "kernelbench_cpp.py")  # builds a C++ extension: about a minute on 2 cores
    assert result.exit_code == 0, result.output
    assert "CORRECT" in result.output and "NOT CORRECT" not in result.output


STOLEN = {"OPENAI_API_KEY": "sk-proj-THIEF0123456789abcdef", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
          "MY_SERVICE_TOKEN": "tok_9f8e7d6c5b4a3210"}
EVAL_IN_A_PROCESS = """
import sys
sys.path.insert(0, {tests!r})
from kforge_core.app import App
from kforge_core.cli import cli
cli.main(args=sys.argv[1:], obj=App(load_plugins=False, plugin_modules=({plugin!r},)), prog_name="kforge")
"""


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_credentials_a_candidate_reads_from_proc_appear_nowhere(cache_dir, tmp_path, sandbox):
    # a KForge process of its own: the credentials are in the environment it started with, as a user's would be
    env = {**os.environ, **STOLEN, "KFORGE_CACHE_DIR": str(cache_dir), "KFORGE_HARNESS__SPARE_WORKERS": "0"}
    script = EVAL_IN_A_PROCESS.format(tests=str(Path(__file__).resolve().parents[1]), plugin=PLUGIN_MODULE)
    result = subprocess.run(
        [sys.executable, "-c", script, "eval", str(PROBLEMS / "relu_scale.py"), str(CANDIDATES / "environ_thief.py"),
         *QUICK_FLAGS, "--sandbox", sandbox, "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    shown = result.stdout + result.stderr
    assert "stolen" in shown  # the candidate ran and raised what it found
    for value in STOLEN.values():
        assert not {f for f in encoded_forms(value) if f in shown}, sandbox


@pytest.mark.parametrize("columns", ["200", "80"])
def test_rich_output_of_a_correct_candidate_shows_the_figure_the_speedups_are_taken_from_and_the_speed_of_light(
        kforge_eval, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    result = kforge_eval("relu_scale", "relu_scale_numpy.py")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "speed of light " in text and "-bound (" in text  # the bound on the host CPU, and its roof
    assert "The candidate at " in text and "eager " in text and "(wall time)" in text
    # on the host CPU the headline is the fastest run: its column is there, marked, at any width
    assert "the speedups are ratios of the wall timer's fastest run (marked *)" in result.stdout
    fastest = re.findall(r"fastest \*\s+│?\s*([\d.]+)", result.stdout) if columns == "80" else [
        row.split("│")[5].strip() for row in result.stdout.splitlines() if row.startswith(("│ candidate", "│ eager"))]
    assert "fastest *" in result.stdout and len(fastest) == 2, result.stdout
    candidate, eager = map(float, fastest)
    speedup = float(re.search(r"CORRECT, ([\d.]+)x against the faster baseline", result.stdout).group(1))
    assert speedup == pytest.approx(eager / candidate, rel=0.02, abs=0.01)  # derived from the table's own figures


@pytest.fixture
def problem_never_loaded(monkeypatch):
    """kforge eval's problem loading (torch's import, the problem's description) fails the test if reached."""
    from kforge_core.commands import eval as eval_command

    def load_problem(path):
        raise AssertionError(f"{path} was loaded")

    monkeypatch.setattr(eval_command, "load_problem", load_problem)


def test_a_candidate_that_does_not_parse_is_answered_before_the_problem_loads(kforge_eval, problem_never_loaded):
    result = kforge_eval("relu_scale", "syntax_error.py", "--json")
    assert result.exit_code == 3, result.output
    document = json.loads(result.stdout)
    assert document["failure"] == "syntax_error" and "syntax_error.py:5: SyntaxError" in document["compile"]["log"]
    assert result.stderr == ""  # nothing ran: no stage to tell


def test_an_unknown_backend_is_said_before_the_problem_loads(kforge_eval, problem_never_loaded):
    result = kforge_eval("relu_scale", "relu_scale_numpy.py", "--backend", "torch-cpuu")
    assert result.exit_code == 1 and result.stderr.startswith("Error: unknown backend 'torch-cpuu'"), result.output
