"""Searching wider (``--width``, ``--keep``, ``--devices``): a round's candidates asked for at once and evaluated
on every device given, the budget held with requests in flight, a run stopped mid-round resumed without asking an
answered request again, the search tree in report.md and ``kforge show``; and the ``corpus:`` stand-in model."""

from __future__ import annotations

import dataclasses
import threading
import time
from contextlib import contextmanager

import pytest
from loop_helpers import PROBLEM, RecordingProgress, ScriptedEvaluator, toy_app, toy_settings

from kforge_core.errors import KForgeError
from kforge_core.llm.corpus import CorpusModel, CorpusOptions, CorpusUnavailable, parse_corpus
from kforge_core.loop.budget import Budget, RequestBound, RunClock
from kforge_core.loop.session import plan_run, resume_run, start_run
from kforge_core.settings import BudgetSettings, LLMSettings, LoopSettings
from kforge_core.store import RunStore

TOY = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n"
GENERATION = "You are KForge's generation agent."
ANALYST = "You are KForge's performance-analysis agent."


def toy_corpus(root, runtimes=(8.0, 6.0, 4.0, 3.0)):
    """Kernels for the toy problem, each telling the scripted evaluator its runtime."""
    root.mkdir(parents=True, exist_ok=True)
    for i, ms in enumerate(runtimes):
        (root / f"{PROBLEM.stem}.v{i}.py").write_text(f"# kforge-test: ms={ms}\n{TOY}")
    return root


def prompt(name=PROBLEM.stem):
    return f"# Task: {name} on toy\n\nWrite it. ...the module that defines `ModelNew`..."


# --------------------------------------------------------------------------------------------- corpus model


def test_the_corpus_answers_with_its_kernels_and_fails_as_often_as_asked(tmp_path):
    corpus = toy_corpus(tmp_path / "corpus")
    slept: list[float] = []
    model = CorpusModel(corpus, CorpusOptions(latency_s=2.0, jitter_s=1.0, fail=0.3, seed=7), sleep=slept.append)
    answers = [model.answer(GENERATION, prompt() + f" variant {i}").text for i in range(300)]
    assert all(2.0 <= s <= 3.0 for s in slept) and len(set(slept)) > 100  # the latency, and the jitter drawn
    broken = [a for a in answers if "```" not in a or "deliberate syntax error" in a or "off by one" in a]
    assert 0.2 < len(broken) / len(answers) < 0.4
    assert {"no code": any("```" not in a for a in answers), "compile": any("syntax error" in a for a in answers),
            "wrong": any("off by one" in a for a in answers)} == {"no code": True, "compile": True, "wrong": True}
    assert len({a for a in answers if a not in broken}) == 4  # every kernel drawn
    again = CorpusModel(corpus, CorpusOptions(fail=0.3, seed=7), sleep=lambda s: None)
    assert [again.answer(GENERATION, prompt() + f" variant {i}").text for i in range(300)] == answers  # repeatable
    assert "1. " in model.answer(ANALYST, "# Performance analysis").text


def test_the_corpus_fails_requests_as_a_server_would_and_says_what_it_lacks(tmp_path):
    model = CorpusModel(toy_corpus(tmp_path / "corpus"), CorpusOptions(errors=0.5), sleep=lambda s: None)
    failed = 0
    for i in range(200):
        try:
            model.answer(GENERATION, prompt() + str(i))
        except CorpusUnavailable:
            failed += 1
    assert 70 < failed < 130
    with pytest.raises(KForgeError, match="holds no kernel for problem other_problem"):
        CorpusModel(tmp_path / "corpus").answer(GENERATION, prompt("other_problem"))
    assert parse_corpus("dir?latency=20&fail=0.3")[1] == CorpusOptions(latency_s=20.0, fail=0.3)
    for wrong, message in (("d?speed=1", "unknown option 'speed'"), ("d?fail=x", "is not a number"),
                           ("d?fail=2", "fail must be between 0 and 1")):
        with pytest.raises(KForgeError, match=message):
            parse_corpus(wrong)


# ------------------------------------------------------------------------------------------------- variants


def test_candidates_are_spread_over_parents_then_recommendations_each_told_its_part():
    from kforge_core.loop.variants import optimization_lineages, split_recommendations, temperature_of

    reply = "Intro.\n1. Fuse the loops.\n   details\n2) Tile for reuse.\n### 3. Vectorise the tail.\n"
    assert [r.splitlines()[0] for r in split_recommendations(reply)] == [
        "1. Fuse the loops.", "2) Tile for reuse.", "### 3. Vectorise the tail."]
    assert split_recommendations("Just make it faster.") == ["Just make it faster."]
    lineages = optimization_lineages(7, ["f1-2", "f1-4"], [reply, "Only one idea."])
    assert [(x.parent_label, x.follows) for x in lineages[:4]] == [
        ("f1-2", "recommendation 1 of f1-2's analysis"), ("f1-4", "f1-4's analysis"),
        ("f1-2", "recommendation 2 of f1-2's analysis"), ("f1-4", "f1-4's analysis")]
    assert "Follow recommendation 3 of the analyst's (Vectorise the tail.)" in lineages[4].variant
    assert "carry it out differently" in lineages[6].variant and "carry it out differently" not in lineages[4].variant
    assert len({x.variant for x in lineages}) == 7  # no two candidates are told the same
    assert [temperature_of(m, 0.2, 0.1) for m in (0, 1)] == [None, None]
    assert [temperature_of(m, 0.2, 0.1) for m in (2, 9, 12)] == pytest.approx([0.3, 1.0, 1.0])


# --------------------------------------------------------------------------------------------------- budget


def test_requests_in_flight_never_take_the_run_past_its_budget():
    budget = Budget(BudgetSettings(max_llm_calls=3, max_tokens=1000), RunClock())
    first = budget.admit(RequestBound(tokens=400))
    second = budget.admit(RequestBound(tokens=400))
    assert not isinstance(first, str) and not isinstance(second, str)
    assert budget.admit(RequestBound(tokens=400)) == "the requests in flight may use the rest of the tokens"
    assert budget.retry_gate(first)(1, 0.0)  # a retry is one more request in flight: 3 of 3
    assert budget.admit(RequestBound(tokens=1)) == "the requests in flight may use the rest of the LLM calls"
    assert not budget.retry_gate(second)(1, 0.0)
    from kforge_core.store import LLMCall

    budget.charge(LLMCall("generation", "m", 100, 50, True, None, 2, 1.0), first)
    budget.release(second)  # failed: its request was sent, so it counts
    assert budget.spent.requests == 3 and budget.in_flight == 0 and budget.most_in_flight == 2
    assert budget.admit(RequestBound(tokens=1)) == "the budget of 3 LLM calls is spent"


# ------------------------------------------------------------------------------------------- toy searches


def wide_settings(tmp_path, corpus_spec, *, width=4, keep=2, devices=(), **budget):
    settings = toy_settings(tmp_path, tmp_path / "unused.jsonl", **budget)
    return dataclasses.replace(settings, llm=LLMSettings(model=corpus_spec),
                               loop=LoopSettings(width=width, keep=keep, devices=devices))


def run_wide(tmp_path, settings, evaluator, progress=None):
    with RunStore(settings.runs_dir) as store:
        return start_run(toy_app(), plan_run(settings, PROBLEM, store=store), store, progress or RecordingProgress(),
                         evaluator_factory=evaluator.factory())


def test_a_wide_search_keeps_parents_follows_their_recommendations_and_shows_its_tree(tmp_path):
    from rich.console import Console

    from kforge_core.report.console import print_run

    corpus = toy_corpus(tmp_path / "corpus")
    settings = wide_settings(tmp_path, f"corpus:{corpus}", optimization_rounds=2, patience=5)
    result = run_wide(tmp_path, settings, ScriptedEvaluator())
    report = result.outputs.report
    labels = [a.label for a in report.attempts]
    assert labels[:4] == ["f1-1", "f1-2", "f1-3", "f1-4"] and set(labels[4:8]) == {f"o1.1-{m}" for m in range(1, 5)}
    with RunStore(settings.runs_dir) as store:
        steps = store.steps(result.run_id)
    prompts = [s.key for s in steps if s.kind == "generation" and s.round == 1]
    assert len(set(prompts)) == 4  # the round's candidates differ by construction
    analyses = [s for s in steps if s.kind == "analysis" and s.round == 1]
    assert [s.label for s in analyses] == ["o1-p1", "o1-p2"]  # each parent analysed
    round_one = [a for a in report.attempts if a.round == 1]
    parents = {s.data["tree"]["parent"] for s in analyses}
    assert {a.parent for a in round_one} == parents and len(parents) == 2
    assert {a.follows.split(" of ")[0] for a in round_one} == {"recommendation 1", "recommendation 2"}
    text = result.outputs.report_path.read_text()
    assert "## Search tree" in text and "| 1 | o1.1-1 | " in text and "recommendation 1 of " in text
    assert (report.run_dir / "search.png").read_bytes()[:4] == b"\x89PNG" and "(search.png)" in text
    console = Console(record=True, width=200)
    print_run(report, console)
    shown = console.export_text()
    assert "search tree" in shown and "\n  r1 o1.1-" in shown  # round 1's candidates under their parents


class DeviceEvaluator(ScriptedEvaluator):
    """One per device, slow enough to overlap; counts how many candidates it evaluates at once."""

    def __init__(self, index, busy, lock):
        super().__init__()
        self.index, self.busy, self.lock = index, busy, lock

    def evaluate(self, candidate, *, profile=False):
        with self.lock:
            self.busy[self.index] = self.busy.get(self.index, 0) + 1
            self.busy["most"] = max(self.busy.get("most", 0), sum(v for k, v in self.busy.items() if k != "most"))
            assert self.busy[self.index] == 1, "two candidates at once on one device"
        time.sleep(0.2)
        with self.lock:
            self.busy[self.index] -= 1
        return super().evaluate(candidate, profile=profile)


def test_a_round_is_evaluated_on_every_device_one_candidate_at_a_time_on_each(tmp_path):
    busy, lock, opened = {}, threading.Lock(), []

    @contextmanager
    def factory(backend, problem, settings, options, plugins, scratch, device_index):
        opened.append(device_index)
        yield DeviceEvaluator(device_index, busy, lock)

    class Factory:
        def factory(self):
            return factory

    corpus = toy_corpus(tmp_path / "corpus")
    settings = wide_settings(tmp_path, f"corpus:{corpus}", width=6, keep=1, devices=(0, 1), optimization_rounds=0)
    progress = RecordingProgress()
    result = run_wide(tmp_path, settings, Factory(), progress)
    assert opened == [0, 1] and busy["most"] == 2  # both devices busy at once, never two on one
    assert len(result.outputs.report.attempts) == 6
    assert any(e.startswith("search: 6 candidates evaluated on 2 device(s)") for e in progress.events)


class GatedEvaluator(ScriptedEvaluator):
    """Holds its first evaluation until ``ready()``, then stops the run there, as a Ctrl-C would."""

    def __init__(self, ready):
        super().__init__()
        self.ready = ready

    def evaluate(self, candidate, *, profile=False):
        if not self.evaluated:
            deadline = time.monotonic() + 20
            while not self.ready() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.6)  # the loop's thread commits the replies that came
            self.evaluated.append(candidate.label)
            raise KeyboardInterrupt
        return super().evaluate(candidate, profile=profile)


def test_a_run_stopped_mid_round_resumes_without_asking_an_answered_request_again(tmp_path):
    from kforge_core.llm.corpus_server import CorpusServer

    corpus = toy_corpus(tmp_path / "corpus")
    with CorpusServer(CorpusModel(corpus, CorpusOptions(jitter_s=0.3))) as server:
        settings = wide_settings(tmp_path, "openai-like:corpus", keep=1, optimization_rounds=1, patience=5)
        settings = dataclasses.replace(settings, llm=dataclasses.replace(
            settings.llm, base_url=server.url, retry_initial_s=0.0, retry_max_s=0.0))
        with pytest.raises(KeyboardInterrupt):
            run_wide(tmp_path, settings, GatedEvaluator(lambda: server.requests >= 4))
        with RunStore(settings.runs_dir) as store:
            (run,) = store.list_runs()
            before = store.steps(run.id)
        assert sorted(s.label for s in before if s.kind == "generation") == ["f1-1", "f1-2", "f1-3", "f1-4"]
        assert not [s for s in before if s.kind == "evaluation"]

        fresh = ScriptedEvaluator()
        with RunStore(settings.runs_dir) as store:
            result = resume_run(toy_app(), store, run.id, RecordingProgress(), evaluator_factory=fresh.factory())
            calls = store.llm_calls(run.id)
            steps = store.steps(run.id)
        assert server.requests == len(calls)  # no request answered before the stop was asked again
        assert sorted(fresh.evaluated[:4]) == ["f1-1", "f1-2", "f1-3", "f1-4"]
        assert len({(s.kind, s.label) for s in steps}) == len(steps)
        assert result.outputs.report.run.status == "finished" and len(result.outputs.report.attempts) == 8
