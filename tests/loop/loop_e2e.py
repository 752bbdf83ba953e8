"""Helpers for the end-to-end tests: the real `kforge` CLI, the real harness and the real cpu backend (Numba),
with a small problem and few timing repetitions so that a whole run takes about a minute on two cores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from loop_helpers import EXAMPLES

from kforge_core.report import RunReport
from kforge_core.store import RunStore

HERE = Path(__file__).resolve().parent
SMALL_PROBLEM = HERE / "problems" / "gelu_scale_small.py"
DEMO_SCRIPT = EXAMPLES / "replay" / "cpu_demo.jsonl"
SECRET = "sk-kforge-e2e-secret-0123456789abcdef"

QUICK = {
    "KFORGE_HARNESS__TRIALS": "2",
    "KFORGE_HARNESS__WARMUP": "1",
    "KFORGE_HARNESS__REPETITIONS": "5",
    "KFORGE_HARNESS__BASELINES": '["eager"]',  # torch.compile's C++ build would dominate a CI run
    "KFORGE_HARNESS__SPARE_WORKERS": "0",  # a replaced worker starts when the next candidate needs it
    "KFORGE_BACKENDS__CPU__THREAD_SCALING": "false",
    "KFORGE_BACKENDS__CPU__PROFILE_REPETITIONS": "2",
}


def quick_environment(**extra: str) -> dict[str, str]:
    """This process's environment with quick harness settings and an API key that must never be stored."""
    return {**os.environ, **QUICK, "OPENAI_API_KEY": SECRET, **extra}


def kforge(*args: str) -> list[str]:
    """The command line of the real `kforge` CLI, in this interpreter."""
    return [sys.executable, "-c", "from kforge_core.cli import main; main()", *args]


def run_kforge(*args: str, env: dict[str, str], timeout: float = 1200) -> subprocess.CompletedProcess:
    return subprocess.run(kforge(*args), env=env, capture_output=True, text=True, timeout=timeout)


def only_report(runs_dir: Path) -> RunReport:
    with RunStore(runs_dir) as store:
        (run,) = store.list_runs()
        return RunReport.from_store(store, run.id)


def prompt_of(report: RunReport, step_dir: str) -> str:
    return (report.run_dir / step_dir / "prompt.md").read_text()


def analysis_prompts(report: RunReport) -> list[str]:
    return [path.read_text() for path in sorted(report.run_dir.glob("steps/*-analysis-*/prompt.md"))]


def assert_best_is_the_fastest_correct(report: RunReport) -> None:
    """best.py holds the correct, unflagged candidate with the lowest measured median. (Which one that is depends on
    the machine: on a busy one, timings of the later variants can cross, so the test does not name it.)"""
    correct = [a for a in report.attempts if a.rankable]
    fastest = min(correct, key=lambda a: a.outcome.runtime_ms)
    assert report.best is fastest
    assert (report.run_dir / "best.py").read_text() == fastest.candidate.source
    assert report.run.best_label == fastest.label  # what the loop kept as best while it ran


def assert_no_secret_stored(runs_dir: Path) -> None:
    for path in runs_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"the API key reached {path}"
