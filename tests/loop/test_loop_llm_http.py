"""LLM calls through llama-index's OpenAI-compatible clients against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import base64

import pytest
from chat_server import ChatServer

from kforge_core.agents import Prompt
from kforge_core.llm import ChatClient, ProviderError, build_agent_llms, parse_model_spec
from kforge_core.records import Image
from kforge_core.settings import LLMSettings

KEY = "sk-kforge-test-0123456789abcdef"


def reply(text: str, tokens_in: int = 12, tokens_out: int = 7) -> dict:
    return {"reply": text, "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}


@pytest.fixture
def server():
    servers = []

    def start(entries):
        chat = ChatServer(entries)
        url = chat.start()
        servers.append(chat)
        return chat, url

    yield start
    for chat in servers:
        chat.stop()


def client_for(spec_text: str, url: str, **settings) -> ChatClient:
    llm_settings = LLMSettings(model=spec_text, base_url=url, retry_initial_s=0.01, retry_max_s=0.05, **settings)
    spec = parse_model_spec(spec_text)
    llm, _ = build_agent_llms(spec, spec, llm_settings)
    return ChatClient(llm, spec, llm_settings)


def prompt(images=()) -> Prompt:
    return Prompt(agent="generation", system="You are KForge's generation agent.", user="write the kernel",
                  images=tuple(images))


@pytest.mark.parametrize("spec", ["openai-like:my-local-model", "openai:gpt-4o-mini"])
def test_a_429_and_a_500_are_retried_and_usage_and_cost_recorded(server, spec, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    chat, url = server([{"status": 429}, {"status": 500}, reply("```python\nclass ModelNew: ...\n```", 1200, 300)])
    client = client_for(spec, url, prices={spec.split(":", 1)[1]: (2.0, 8.0)})
    answer = client.ask(prompt().messages())
    assert answer.text.startswith("```python")
    assert answer.requests == 3
    assert [r.split(":")[0] for r in answer.retries] == ["RateLimitError", "InternalServerError"]
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (1200, 300)
    assert answer.cost_usd == pytest.approx((1200 * 2.0 + 300 * 8.0) / 1e6)
    assert len(chat.received) == 3 and len(chat.answered) == 1
    assert all(r.path == "/v1/chat/completions" for r in chat.received)
    assert chat.received[-1].authorization == f"Bearer {KEY}"
    assert chat.received[-1].body["max_tokens"] == LLMSettings().max_output_tokens


def test_an_image_of_a_profile_summary_arrives_as_an_image_part(server, png):
    chat, url = server([{**reply("1. use shared memory"), "expect": {"images": 1}}])
    client = client_for("openai-like:vision-model", url)
    client.ask(prompt([Image(png, caption="roofline")]).messages())
    assert chat.errors == []
    (url_sent,) = chat.received[0].image_urls
    header, data = url_sent.split(",", 1)
    assert header == "data:image/png;base64"
    assert base64.b64decode(data) == png.read_bytes()


def test_a_client_error_is_not_retried(server):
    chat, url = server([{"status": 400}, reply("never sent")])
    with pytest.raises(ProviderError, match="BadRequestError"):
        client_for("openai-like:m", url).ask(prompt().messages())
    assert len(chat.received) == 1


def test_retries_stop_at_max_retries(server):
    chat, url = server([{"status": 500}, {"status": 503}, reply("too late")])
    with pytest.raises(ProviderError, match="failed 2 times"):
        client_for("openai-like:m", url, max_retries=1).ask(prompt().messages())
    assert len(chat.received) == 2


def test_retries_stop_when_the_budget_refuses(server):
    chat, url = server([{"status": 429}, reply("too late")])
    asked = []

    def may_retry(failed: int, delay: float) -> bool:
        asked.append((failed, delay))
        return False

    with pytest.raises(ProviderError, match="budget leaves no room"):
        client_for("openai-like:m", url).ask(prompt().messages(), may_retry=may_retry)
    assert asked == [(1, 0.01)] and len(chat.received) == 1
