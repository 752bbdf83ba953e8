"""A bench killed in the middle (SIGKILL, no chance to clean up) continues with ``--resume``: the problems it
finished are kept, not evaluated again. On the real cpu backend, with the shipped suite's Numba solutions, so the
suite runs out of the box here too."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # `kforge bench` processes on the real cpu backend

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "suites" / "basics"
PICK = ["--filter", "reduction/1_*", "--filter", "reduction/2_*", "--filter", "norm/7_*"]
QUICK = ["--trials", "2", "--warmup", "1", "--repetitions", "3", "--baselines", "eager"]


def kforge(*args: str) -> list[str]:
    return [sys.executable, "-c", "from kforge_core.cli import main; main()", *args]


def _done_rows(db: Path) -> dict[str, float]:
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        try:
            rows = conn.execute("SELECT key, updated_at FROM bench_problems WHERE status = 'done'").fetchall()
        except sqlite3.OperationalError:  # the tables are not made yet
            return {}
    return dict(rows)


def test_a_killed_bench_resumes_without_redoing_finished_problems(tmp_path, fresh_cache):
    runs = tmp_path / "runs"
    env = {**os.environ, "KFORGE_CACHE_DIR": str(fresh_cache), "KFORGE_HARNESS__SPARE_WORKERS": "0",
           "KFORGE_PLUGINS": "cpu"}
    command = kforge("bench", str(EXAMPLES / "problems"), "--backend", "cpu", "--solutions",
                     str(EXAMPLES / "solutions" / "numba"), "--runs-dir", str(runs), *PICK, *QUICK)
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    deadline = time.monotonic() + 600
    while not _done_rows(runs / "kforge.db") and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # the bench and its workers, mid-suite
    output = process.communicate()[0].decode()
    before = _done_rows(runs / "kforge.db")
    assert 1 <= len(before) < 3, output
    with sqlite3.connect(runs / "kforge.db") as conn:
        ((bench_id, status),) = conn.execute("SELECT id, status FROM benches").fetchall()
    assert status == "running"  # as the killed process left it

    resumed = subprocess.run(kforge("bench", "--resume", bench_id, "--runs-dir", str(runs), "--json"), env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"resuming: {len(before)} finished problems are kept" in resumed.stderr
    document = json.loads(resumed.stdout)
    after = _done_rows(runs / "kforge.db")
    assert {key: after[key] for key in before} == before  # finished problems were not evaluated again
    assert len(after) == 3 and document["summary"]["total"] == 3
    assert document["summary"]["correct"] == 3, [p["message"] for p in document["problems"]]
    assert document["summary"]["evaluated_now"] == 3 - len(before)
    with sqlite3.connect(runs / "kforge.db") as conn:
        assert conn.execute("SELECT status FROM benches").fetchone()[0] == "finished"


def test_ctrl_c_finishes_the_problem_in_hand_prints_the_summary_and_the_resume_command(tmp_path, fresh_cache):
    runs = tmp_path / "runs"
    env = {**os.environ, "KFORGE_CACHE_DIR": str(fresh_cache), "KFORGE_HARNESS__SPARE_WORKERS": "0",
           "KFORGE_PLUGINS": "cpu"}
    command = kforge("bench", str(EXAMPLES / "problems"), "--backend", "cpu", "--solutions",
                     str(EXAMPLES / "solutions" / "numba"), "--runs-dir", str(runs), "--json", *PICK, *QUICK)
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 600
    while not _done_rows(runs / "kforge.db") and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 130, stdout + stderr
    document = json.loads(stdout)  # the --json document, for what was done
    done = _done_rows(runs / "kforge.db")
    assert 1 <= len(document["problems"]) == len(done) < 3, stderr
    bench_id = document["bench"]
    assert f"kforge bench --resume {bench_id} --runs-dir {runs}" in stderr
    with sqlite3.connect(runs / "kforge.db") as conn:
        assert conn.execute("SELECT status FROM benches").fetchone()[0] == "interrupted"

    resumed = subprocess.run(kforge("bench", "--resume", bench_id, "--runs-dir", str(runs), "--json"), env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads(resumed.stdout)["summary"]["total"] == 3


def test_a_problem_past_its_budget_is_budget_exceeded_with_what_was_done_and_the_bench_goes_on(tmp_path, fresh_cache):
    env = {**os.environ, "KFORGE_CACHE_DIR": str(fresh_cache), "KFORGE_HARNESS__SPARE_WORKERS": "0",
           "KFORGE_PLUGINS": "cpu"}
    command = kforge("bench", str(EXAMPLES / "problems"), "--backend", "cpu", "--solutions",
                     str(EXAMPLES / "solutions" / "numba"), "--runs-dir", str(tmp_path / "runs"), "--json",
                     "--problem-budget", "0.001", *PICK[:4], *QUICK)
    finished = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    problems = json.loads(finished.stdout)["problems"]
    assert len(problems) == 2  # the second problem ran after the first ran out of budget
    for problem in problems:
        assert problem["failure"] == "budget_exceeded", problem["message"]
        assert problem["message"].startswith("the problem's budget of 0.001 s ran out (not compiled)")
