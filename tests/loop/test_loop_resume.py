"""Resuming a run in process: replayed steps are not redone, live work continues after them.
(test_e2e_kill_resume.py kills a real `kforge run` process with SIGKILL.)"""

from __future__ import annotations

import os

import pytest
from loop_helpers import PROBLEM, RecordingProgress, ScriptedEvaluator, code_reply, toy_app, toy_settings, write_script
from test_loop_flow import analysis, gen

from kforge_core.errors import KForgeError
from kforge_core.loop.session import plan_run, resume_run, start_run
from kforge_core.store import RunStore

ENTRIES = [
    gen("no code yet"), gen(code_reply("wrong")), gen(code_reply("ms=8.0")), analysis(), gen(code_reply("ms=4.0")),
    analysis(), gen(code_reply("ms=6.0")),
]


def start(tmp_path, script, evaluator, progress=None, **budget):
    settings = toy_settings(tmp_path, script, patience=1, **budget)
    with RunStore(settings.runs_dir) as store:
        plan = plan_run(settings, PROBLEM, store=store)
        return start_run(toy_app(), plan, store, progress or RecordingProgress(),
                         evaluator_factory=evaluator.factory())


def resume(tmp_path, run_id, evaluator, progress=None, **budget):
    with RunStore(tmp_path / "runs") as store:
        return resume_run(toy_app(), store, run_id, progress or RecordingProgress(), budget=budget,
                          evaluator_factory=evaluator.factory())


def steps_of(runs_dir, run_id):
    with RunStore(runs_dir) as store:
        return [(s.kind, s.key, s.label) for s in store.steps(run_id)], store.llm_calls(run_id)


def only_run_id(runs_dir):
    with RunStore(runs_dir) as store:
        (run,) = store.list_runs()
        return run.id, run.display_status


def test_an_interrupted_run_resumes_without_repeating_calls_or_losing_steps(tmp_path):
    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    complete = start(reference_dir, write_script(reference_dir / "s.jsonl", ENTRIES), ScriptedEvaluator())
    expected_steps, _ = steps_of(reference_dir / "runs", complete.run_id)

    script = write_script(tmp_path / "s.jsonl", ENTRIES)
    with pytest.raises(KeyboardInterrupt):
        start(tmp_path, script, ScriptedEvaluator(fail_on=3))  # during the profile of f3
    run_id, status = only_run_id(tmp_path / "runs")
    assert status == "interrupted"
    done_before, calls_before = steps_of(tmp_path / "runs", run_id)
    assert [kind for kind, _, _ in done_before][-1] == "evaluation" and len(calls_before) == 3

    fresh = ScriptedEvaluator()
    progress = RecordingProgress()
    result = resume(tmp_path, run_id, fresh, progress)
    steps, calls = steps_of(tmp_path / "runs", run_id)
    assert steps == expected_steps  # nothing lost, nothing done twice
    assert len(calls) == len(ENTRIES)  # every scripted reply used exactly once
    assert fresh.evaluated == ["o1.1", "o2.1"] and fresh.profiled == ["f3", "o1.1"]  # f2, f3 were not evaluated again
    assert result.outputs.report.best.label == "o1.1" and result.outputs.report.run.status == "finished"
    assert any("resuming: 7 recorded steps are replayed" in e for e in progress.events)
    assert any(e.endswith("[from the store]") for e in progress.events)


def test_a_resume_may_raise_the_budget(tmp_path):
    script = write_script(tmp_path / "s.jsonl", ENTRIES)
    first = start(tmp_path, script, ScriptedEvaluator(), max_llm_calls=2)
    assert first.stop_reason == "the budget of 2 LLM calls is spent" and not first.found_correct
    second = resume(tmp_path, first.run_id, ScriptedEvaluator(), max_llm_calls=50)
    assert second.found_correct and second.outputs.report.best.label == "o1.1"
    assert len(second.outputs.report.usage) == 2 and sum(u.calls for u in second.outputs.report.usage) == 7


def test_a_run_whose_prompts_changed_cannot_be_resumed_faithfully(tmp_path):
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "generation.j2").write_text("Solve {{ problem.name }}, attempt {{ attempt }}.")
    script = write_script(tmp_path / "s.jsonl", ENTRIES)
    settings = toy_settings(tmp_path, script, max_llm_calls=2)
    settings = type(settings)(**{**settings.__dict__, "prompts_dir": prompts})
    with RunStore(settings.runs_dir) as store:
        run_id = start_run(toy_app(), plan_run(settings, PROBLEM, store=store), store, RecordingProgress(),
                           evaluator_factory=ScriptedEvaluator().factory()).run_id
    (prompts / "generation.j2").write_text("Please solve {{ problem.name }}.")
    with pytest.raises(KForgeError, match="cannot be resumed faithfully: its step 2 is a generation"):
        resume(tmp_path, run_id, ScriptedEvaluator(), max_llm_calls=10)


def test_a_live_run_is_not_resumed_twice(tmp_path):
    script = write_script(tmp_path / "s.jsonl", ENTRIES)
    first = start(tmp_path, script, ScriptedEvaluator(), max_llm_calls=1)
    with RunStore(tmp_path / "runs") as store:
        store.claim(first.run_id)  # as if this process were still running it
        assert store.get_run(first.run_id).pid == os.getpid()
        with pytest.raises(KForgeError, match="is still running"):
            resume_run(toy_app(), store, first.run_id, RecordingProgress(),
                       evaluator_factory=ScriptedEvaluator().factory())


def test_a_provider_failure_leaves_a_run_that_resumes(tmp_path):
    from chat_server import ChatServer

    from kforge_core.llm import ProviderError

    entries = [{"reply": e["reply"], "usage": e["usage"]} for e in ENTRIES]
    server = ChatServer(entries[:2] + [{"status": 401}] + entries[2:])
    url = server.start()
    try:
        settings = toy_settings(tmp_path, tmp_path / "unused.jsonl", patience=1)
        settings = type(settings)(**{**settings.__dict__, "llm": type(settings.llm)(
            model="openai-like:m", base_url=url, retry_initial_s=0.0, retry_max_s=0.0)})
        with RunStore(settings.runs_dir) as store:
            with pytest.raises(ProviderError, match="AuthenticationError"):
                start_run(toy_app(), plan_run(settings, PROBLEM, store=store), store, RecordingProgress(),
                          evaluator_factory=ScriptedEvaluator().factory())
            (run,) = store.list_runs()
            assert run.status == "failed" and "AuthenticationError" in run.stop_reason
        result = resume(tmp_path, run.id, ScriptedEvaluator())
    finally:
        server.stop()
    assert result.found_correct and len(server.answered) == len(ENTRIES)
