"""The run store: runs, steps and LLM calls in SQLite, committed as they happen, without secrets."""

from __future__ import annotations

import os
import sqlite3

import pytest

from kforge_core.errors import KForgeError
from kforge_core.secrets import redact, secret_values
from kforge_core.store import LLMCall, RunDirectory, RunStore, StepRecord

SECRET = "sk-proj-kforge-secret-9876543210"


def make_run(store: RunStore, run_id: str = "r1", precision: str = "fp32", **config):
    return store.create_run(run_id, problem_name="p", problem_path="/p.py", problem_digest="d", backend="cpu",
                            model="openai:gpt-4.1", analyst_model="openai:gpt-4.1", config=config,
                            precision=precision)


def test_steps_and_calls_are_committed_and_read_back_by_another_connection(tmp_path):
    with RunStore(tmp_path) as store:
        run = make_run(store, budget={"max_llm_calls": 3})
        assert run.status == "running" and run.alive and run.run_dir == tmp_path / "r1"
        call = LLMCall("generation", "openai:gpt-4.1", 100, 20, True, 0.001, 2, 1.5)
        store.add_step("r1", StepRecord(0, "generation", "abc", "functional", 0, 1, "f1", 3.0, "steps/000",
                                        {"reply": "hi"}, llm_call=call))
        # a second reader (`kforge runs` while a run works) sees the committed step at once
        other = sqlite3.connect(tmp_path / "kforge.db")
        assert other.execute("SELECT kind, key FROM steps").fetchall() == [("generation", "abc")]
        other.close()
        (step,) = store.steps("r1")
        assert step.data == {"reply": "hi"} and step.llm_call == call and step.elapsed_s == 3.0
        assert store.replies_received("r1") == {"openai:gpt-4.1": 1}
        store.set_best("r1", "f1", 2.5, 1.9)
        store.finish("r1", "finished", "all rounds done")
        done = store.get_run("r1")
        assert (done.status, done.best_label, done.best_speedup, done.config) == (
            "finished", "f1", 1.9, {"budget": {"max_llm_calls": 3}})


def test_a_run_whose_process_died_shows_as_interrupted(tmp_path):
    with RunStore(tmp_path) as store:
        make_run(store)
        store._conn.execute("UPDATE runs SET pid = 2147483646")  # no such process
        store._conn.commit()
        assert store.get_run("r1").display_status == "interrupted"


def test_unknown_runs_and_duplicate_steps_are_refused(tmp_path):
    with RunStore(tmp_path) as store:
        with pytest.raises(KForgeError, match="no run 'nope'"):
            store.get_run("nope")
        make_run(store)
        step = StepRecord(0, "lowering", "cpu", "setup", 0, 0, "lowering", 0.0, "steps/000")
        store.add_step("r1", step)
        with pytest.raises(sqlite3.IntegrityError):
            store.add_step("r1", step)


def test_secrets_from_the_environment_never_reach_the_store_or_artifacts(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijklmnop")
    assert SECRET in secret_values()
    with RunStore(tmp_path) as store:
        make_run(store, note=f"key {SECRET}", url="https://user:hunter2pass@example.invalid/v1")
        store.add_step("r1", StepRecord(0, "generation", "k", "functional", 0, 1, "f1", 0.0, "s",
                                        {"reply": f"I found {SECRET} and hf_abcdefghijklmnop"}))
        store.finish("r1", "failed", f"401: invalid key {SECRET}")
    run_dir = RunDirectory(tmp_path / "r1")
    run_dir.write("steps/000/reply.md", f"echo {SECRET}")
    everything = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())
    assert SECRET.encode() not in everything and b"hf_abcdefghijklmnop" not in everything
    assert b"hunter2pass" not in everything and b"[redacted]" in everything


def test_redact_leaves_ordinary_text_alone():
    assert redact("speedup 1.5x, atol 1e-4", ("sk-longsecret",)) == "speedup 1.5x, atol 1e-4"
    assert redact("ok", secret_values({"DEBUG_TOKEN": "1", "PATH": os.defpath})) == "ok"
