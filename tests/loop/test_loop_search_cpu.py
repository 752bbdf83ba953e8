"""``kforge run --width 4`` on the host CPU, end to end: the real harness (the torch-cpu test backend), the real
``openai-like`` provider, and the ``corpus:`` stand-in model served over HTTP on 127.0.0.1 at no latency, some of
its requests held longer than others and some of its candidates failing on purpose. The budget of LLM calls is
never exceeded, though requests are in flight together when it runs out."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.llm.corpus import CorpusModel, CorpusOptions
from kforge_core.llm.corpus_server import CorpusServer
from kforge_core.store import RunStore

TESTS = Path(__file__).resolve().parents[1]
CANDIDATES, PROBLEMS = TESTS / "harness" / "candidates", TESTS / "harness" / "problems"
PLUGIN_MODULE = "harness.torch_backend_plugin"  # the harness tests' torch-cpu backend; its workers import it too
QUICK = {"KFORGE_HARNESS__TRIALS": "2", "KFORGE_HARNESS__WARMUP": "1", "KFORGE_HARNESS__REPETITIONS": "3",
         "KFORGE_HARNESS__BASELINES": "[]", "KFORGE_HARNESS__SPARE_WORKERS": "0"}


@pytest.mark.slow
def test_width_4_on_the_host_cpu_through_the_http_provider_keeps_to_the_budget(tmp_path, monkeypatch, fresh_cache):
    for name, value in {**QUICK, "KFORGE_CACHE_DIR": str(fresh_cache)}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(TESTS))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(CANDIDATES / "relu_scale_numpy.py", corpus / "relu_scale.py")
    model = CorpusModel(corpus, CorpusOptions(jitter_s=0.5, fail=0.3, seed=3))
    with CorpusServer(model) as server:
        result = CliRunner().invoke(
            cli, ["run", str(PROBLEMS / "relu_scale.py"), "--backend", "torch-cpu", "--llm", "openai-like:corpus",
                  "--base-url", server.url, "--width", "4", "--max-llm-calls", "6", "--optimization-rounds", "1",
                  "--runs-dir", str(tmp_path / "runs")],
            obj=App(load_plugins=False, plugin_modules=(PLUGIN_MODULE,)))
    assert result.exit_code in (0, 3), result.output
    with RunStore(tmp_path / "runs") as store:
        (run,) = store.list_runs()
        calls = store.llm_calls(run.id)
    assert "the budget of 6 LLM calls is spent" in run.stop_reason
    assert server.requests <= 6 and sum(c.requests for c in calls) == server.requests  # never past the budget
    assert server.most_in_flight >= 2  # requests were in flight together
    in_flight = re.search(r"at most (\d+) LLM requests in flight", result.output)
    assert in_flight and int(in_flight.group(1)) >= 2, result.output
    assert re.search(r"functional f1-\d: ", result.output)


def test_a_run_opens_a_harness_per_device_with_its_workers_already_started(monkeypatch, fresh_cache):
    """``--devices 0,1``: the production evaluator binds its harness to the unit given and starts its processes
    before the first candidate arrives (here the host CPU's test units)."""
    monkeypatch.syspath_prepend(str(TESTS))
    from harness.helpers import problem, settings_for

    from kforge_core.loop.evaluator import open_harness

    app = App(load_plugins=False, plugin_modules=(PLUGIN_MODULE,))
    registered = app.backend("torch-cpu-units")
    settings = settings_for(fresh_cache, spare_workers=0, baselines=())
    with open_harness(registered, problem("relu_scale"), settings, None, app.plugin_selection, None, 1) as harness:
        assert harness.device_index == 1 and harness.workers_started >= 1
