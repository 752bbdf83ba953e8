"""End to end through llama-index's OpenAI-compatible clients (OpenAILike, and OpenAI with a base URL) against a
real HTTP server on 127.0.0.1 that answers with the demo's scripted replies, a 429 and a 500 among them; the profile
summaries carry an image, which must arrive as an image part of the analyst's request."""

from __future__ import annotations

import base64
import json

import pytest
from chat_server import ChatServer
from click.testing import CliRunner
from loop_e2e import (
    DEMO_SCRIPT, HERE, QUICK, SECRET, SMALL_PROBLEM, assert_best_is_the_fastest_correct, assert_no_secret_stored,
    only_report,
)

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.store import RunStore

pytestmark = pytest.mark.slow  # `kforge run` on the real cpu backend

KEY_CHECK = (
    "import os\n"
    "if any(name.endswith('_API_KEY') for name in os.environ):\n"
    "    raise RuntimeError('an API key reached the candidate')\n"
)


@pytest.fixture
def quick_env(monkeypatch):
    quick_gui = {name.replace("__CPU__", "__CPU_GUI__"): value for name, value in QUICK.items() if "__CPU__" in name}
    for name, value in {**QUICK, **quick_gui, "OPENAI_API_KEY": SECRET}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", str(HERE))  # the harness's workers load the test plugin too
    monkeypatch.setenv("KFORGE_LLM__RETRY_INITIAL_S", "0")  # a 429 or a 500 is retried at once, as the server asks


def test_the_demo_flow_through_openai_like_with_retries_and_images(tmp_path, quick_env):
    server = ChatServer.from_script(DEMO_SCRIPT, insert={0: [{"status": 429}], 5: [{"status": 500}]})
    for entry in server.entries:
        if entry.get("agent") == "analysis":
            entry.setdefault("expect", {})["images"] = 1
        if entry.get("note") == "06_fast.py":  # this candidate fails if the API key reached its environment
            entry["reply"] = entry["reply"].replace("```python\n", "```python\n" + KEY_CHECK, 1)
    url = server.start()
    try:
        result = CliRunner().invoke(
            cli, ["run", str(SMALL_PROBLEM), "--backend", "cpu_gui", "--llm", "openai-like:kforge-e2e", "--base-url", url,
                  # one round holds what this test is about (an analysis with its image, the 500 before the
                  # round's candidate); more rounds ran only where a busy host kept the first from the speed of
                  # light, and repeated the same
                  "--optimization-rounds", "1", "--runs-dir", str(tmp_path / "runs")],
            obj=App(plugin_modules=("loop_image_summary",)),
        )
    finally:
        server.stop()
    assert result.exit_code == 0, result.output
    assert server.errors == []

    report = only_report(tmp_path / "runs")
    assert [a.verdict for a in report.attempts][:5] == [
        "no code", "compile_error", "numerical_mismatch", "correct", "correct"]
    assert KEY_CHECK in report.attempts[4].candidate.source
    assert_best_is_the_fastest_correct(report)
    with RunStore(tmp_path / "runs") as store:
        calls = store.llm_calls(report.run.id)
    assert len(server.answered) == len(calls)  # every call answered once, none repeated
    assert [c.requests for c in calls][:6] == [2, 1, 1, 1, 1, 2]  # the 429 and the 500 were retried
    assert len(server.received) == len(calls) + 2
    assert {r.authorization for r in server.received} == {f"Bearer {SECRET}"}

    analysis = [r for r in server.answered if r.agent == "analysis"]
    assert analysis and all(len(r.image_urls) == 1 for r in analysis)
    assert all(not r.image_urls for r in server.answered if r.agent == "generation")
    sent = base64.b64decode(analysis[0].image_urls[0].split(",", 1)[1])
    (kept,) = sorted(report.run_dir.glob("steps/*-analysis-*/prompt-image-1.png"))[:1]
    assert sent == kept.read_bytes() and sent[:4] == b"\x89PNG"
    assert report.rounds[0].images  # the report shows the image too
    assert_no_secret_stored(tmp_path / "runs")


def test_the_openai_client_with_a_base_url(tmp_path, quick_env):
    fast = json.loads(DEMO_SCRIPT.read_text().splitlines()[5])
    server = ChatServer([{"status": 500}, {"reply": fast["reply"], "usage": fast["usage"]}])
    url = server.start()
    try:
        result = CliRunner().invoke(
            cli, ["run", str(SMALL_PROBLEM), "--backend", "cpu", "--llm", "openai:gpt-4o-mini", "--base-url", url,
                  "--optimization-rounds", "0", "--runs-dir", str(tmp_path / "runs")], obj=App())
    finally:
        server.stop()
    assert result.exit_code == 0, result.output
    report = only_report(tmp_path / "runs")
    assert [a.verdict for a in report.attempts] == ["correct"] and report.best.label == "f1"
    assert [r.body["model"] for r in server.received] == ["gpt-4o-mini", "gpt-4o-mini"]
    assert len(server.answered) == 1 and report.usage[0].requests == 2
