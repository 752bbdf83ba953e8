"""A resume changes a run's record only through new work. A finished run resumed is shown and left as it was; a
replay that a closed pipe (``kforge run --resume ID | head``) or Ctrl-C stops writes nothing; and the real CLI
ends quietly with 141 when the reader of its output goes away."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from loop_helpers import RecordingProgress, ScriptedEvaluator, write_script
from test_loop_resume import ENTRIES, resume, start

from kforge_core.redacting_stream import OutputClosed
from kforge_core.store import RunStore


class StopsAt(RecordingProgress):
    """Raises ``error`` at the first event line that contains ``text``."""

    def __init__(self, text: str, error: BaseException) -> None:
        super().__init__()
        self.text, self.error = text, error

    def event(self, text: str) -> None:
        super().event(text)
        if self.text in text:
            raise self.error


def finished_run(tmp_path):
    """A finished run whose best is o1.1 (f3 was the best before it)."""
    result = start(tmp_path, write_script(tmp_path / "s.jsonl", ENTRIES), ScriptedEvaluator())
    assert result.outputs.report.run.status == "finished" and result.outputs.report.best.label == "o1.1"
    return result.run_id


def snapshot(tmp_path, run_id):
    """Everything a resume could change: the run's row, its steps, the files at the top of its directory."""
    with RunStore(tmp_path / "runs") as store:
        run, steps = store.get_run(run_id), len(store.steps(run_id))
    files = {p.name: p.read_bytes() for p in run.run_dir.iterdir() if p.is_file()}
    return run, steps, files


@pytest.mark.parametrize("error", [OutputClosed("the pipe closed"), KeyboardInterrupt()], ids=["pipe", "ctrl-c"])
def test_a_replay_stopped_before_new_work_leaves_the_run_as_it_was(tmp_path, error):
    run_id = finished_run(tmp_path)
    before = snapshot(tmp_path, run_id)
    # stopped after f3, the first correct attempt: it was the best once, and the replay finds it again
    with pytest.raises(type(error)):
        resume(tmp_path, run_id, ScriptedEvaluator(), StopsAt("functional f3", error), optimization_rounds=9)
    assert snapshot(tmp_path, run_id) == before
    with RunStore(tmp_path / "runs") as store:
        run = store.get_run(run_id)
    assert (run.display_status, run.best_label) == ("finished", "o1.1")


def test_a_finished_run_resumed_without_new_work_is_not_written(tmp_path):
    run_id = finished_run(tmp_path)
    before = snapshot(tmp_path, run_id)
    evaluator = ScriptedEvaluator()
    # more rounds, but the same patience: the replay reaches the same stop, and no step is new
    result = resume(tmp_path, run_id, evaluator, optimization_rounds=9)
    assert snapshot(tmp_path, run_id) == before
    assert result.outputs.report.best.label == "o1.1" and evaluator.evaluated == []


def test_a_finished_run_resumed_without_a_budget_is_only_shown(tmp_path):
    run_id = finished_run(tmp_path)
    before = snapshot(tmp_path, run_id)
    progress = RecordingProgress()
    result = resume(tmp_path, run_id, ScriptedEvaluator(), progress)
    assert snapshot(tmp_path, run_id) == before and result.outputs.report.best.label == "o1.1"
    assert progress.events == [f"run {run_id} is finished (1 optimization round(s) in a row brought no gain); "
                               "nothing is resumed unless a budget is raised (--optimization-rounds, "
                               "--max-llm-calls, ...)"]


def test_a_resume_that_does_new_work_claims_the_run_and_keeps_its_best(tmp_path):
    script = write_script(tmp_path / "s.jsonl", ENTRIES)
    first = start(tmp_path, script, ScriptedEvaluator(), max_llm_calls=3)  # f3 correct, stopped before round 1
    assert first.outputs.report.best.label == "f3"
    second = resume(tmp_path, first.run_id, ScriptedEvaluator(), max_llm_calls=50)
    with RunStore(tmp_path / "runs") as store:
        run = store.get_run(first.run_id)
    assert (run.status, run.best_label) == ("finished", "o1.1") and second.outputs.report.best.label == "o1.1"


def test_the_cli_ends_quietly_when_the_reader_of_its_output_is_gone(tmp_path):
    run_id = finished_run(tmp_path)
    before = snapshot(tmp_path, run_id)
    read, write = os.pipe()
    os.close(read)  # as `| head -1` leaves it once head has its line: every write now fails
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from kforge_core.cli import main; main()", "run", "--resume", run_id,
             "--runs-dir", str(tmp_path / "runs")], stdout=write, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == b""
    assert snapshot(tmp_path, run_id) == before
