"""A real `kforge run` process is killed with SIGKILL twice, once while a candidate is being evaluated and once
while an LLM call is in flight, and resumed each time: the run finishes with every step exactly once and no LLM
call answered twice. The LLM is a real HTTP server in this process, so it counts the calls on its own."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest
from chat_server import ChatServer
from loop_e2e import DEMO_SCRIPT, SMALL_PROBLEM, assert_no_secret_stored, kforge, quick_environment, run_kforge

from kforge_core.store import RunStore

pytestmark = pytest.mark.slow  # three `kforge run` processes on the real cpu backend

# the demo's no code, wrong result, slow kernel, analysis and fast kernel, without their expectations
REPLIES = [json.loads(line) for i, line in enumerate(DEMO_SCRIPT.read_text().splitlines()) if i in (0, 2, 3, 4, 5)]
EXPECTED_STEPS = ["lowering", "baselines", "generation", "generation", "evaluation", "generation", "evaluation",
                  "profile", "analysis", "generation", "evaluation"]


def steps(runs_dir) -> list:
    if not (runs_dir / "kforge.db").exists():
        return []
    with RunStore(runs_dir) as store:
        runs = store.list_runs()
        return store.steps(runs[0].id) if runs else []


def wait_for(condition, process, what: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, f"kforge ended before {what}: " + process.stdout.read()
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def kill(process) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL


def test_a_killed_run_resumes_with_no_repeated_call_and_no_lost_step(tmp_path):
    runs = tmp_path / "runs"
    entries = [{k: v for k, v in r.items() if k != "expect"} for r in REPLIES]
    server = ChatServer(entries[:3] + [{"hold": True}] + entries[3:])
    url = server.start()
    env = quick_environment()
    try:
        first = subprocess.Popen(
            kforge("run", str(SMALL_PROBLEM), "--backend", "cpu", "--llm", "openai-like:kforge-e2e", "--base-url",
                   url, "--optimization-rounds", "1", "--runs-dir", str(runs)),
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # kill 1: the third reply is stored, and its candidate is being compiled and verified
        wait_for(lambda: len(steps(runs)) >= 6, first, "the third generation step")
        kill(first)
        before = [s.kind for s in steps(runs)]
        assert before[:6] == EXPECTED_STEPS[:6] and len(server.answered) == 3
        with RunStore(runs) as store:
            (run,) = store.list_runs()
        assert run.display_status == "interrupted"

        second = subprocess.Popen(kforge("run", "--resume", run.id, "--runs-dir", str(runs)), env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # kill 2: the analyst's request has reached the server, which holds it unanswered
        wait_for(server.holding.is_set, second, "the analyst's request")
        kill(second)
        server.release()
        assert [s.kind for s in steps(runs)] == EXPECTED_STEPS[:8] and len(server.answered) == 3

        third = run_kforge("run", "--resume", run.id, "--runs-dir", str(runs), env=env)
    finally:
        server.stop()
    assert third.returncode == 0, third.stdout + third.stderr
    assert "resuming: 8 recorded steps are replayed from the store" in third.stdout

    done = steps(runs)
    assert [s.kind for s in done] == EXPECTED_STEPS and [s.seq for s in done] == list(range(len(EXPECTED_STEPS)))
    assert len(server.answered) == len(REPLIES)  # each scripted reply given once
    bodies = [json.dumps(r.body, sort_keys=True) for r in server.answered]
    assert len(set(bodies)) == len(bodies)  # no call was asked twice
    assert len(server.received) == len(REPLIES) + 1  # plus the one in flight at the second kill
    with RunStore(runs) as store:
        final = store.get_run(run.id)
        assert len(store.llm_calls(run.id)) == len(REPLIES)
    assert final.status == "finished" and final.best_label == "o1.1"
    assert (final.run_dir / "best.py").read_text() in REPLIES[4]["reply"]
    assert_no_secret_stored(runs)
