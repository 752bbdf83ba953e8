"""Choosing and building providers: specs, missing extras and credentials, each integration's construction."""

from __future__ import annotations

import sys

import pytest

from kforge_core.errors import KForgeError
from kforge_core.llm import build_agent_llms, parse_model_spec
from kforge_core.llm.replay import ReplayLLM
from kforge_core.settings import LLMSettings


def build(spec_text: str, **settings):
    spec = parse_model_spec(spec_text)
    return build_agent_llms(spec, spec, LLMSettings(model=spec_text, **settings))[0]


@pytest.mark.parametrize("text, message", [
    ("", "no model chosen"),
    ("gpt-4.1", "is not PROVIDER:MODEL"),
    ("openai:", "is not PROVIDER:MODEL"),
    ("closedai:gpt", "unknown provider 'closedai'"),
])
def test_bad_specs_are_clear_errors(text, message):
    with pytest.raises(KForgeError, match=message):
        parse_model_spec(text)


@pytest.mark.parametrize("spec, module, extra", [
    ("openai:gpt-4.1", "llama_index.llms.openai", "openai"),
    ("anthropic:claude-sonnet-4-5", "llama_index.llms.anthropic", "anthropic"),
    ("ollama:qwen2.5-coder", "llama_index.llms.ollama", "ollama"),
    ("openai-like:qwen", "llama_index.llms.openai_like", "openai-like"),
])
def test_a_missing_extra_says_what_to_install(spec, module, extra, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # makes the import fail as if it were not installed
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-123")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-123")
    with pytest.raises(KForgeError) as caught:
        build(spec, base_url="http://127.0.0.1:9/v1")
    assert f"pip install 'kforge-core[{extra}]'" in str(caught.value)


@pytest.mark.parametrize("spec, variable", [("openai:gpt-4.1", "OPENAI_API_KEY"),
                                            ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY")])
def test_a_missing_credential_names_the_variable(spec, variable, monkeypatch):
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(KForgeError, match=f"the environment variable {variable} is not set"):
        build(spec)


def test_openai_is_built_unchanged_with_its_own_retries_off(monkeypatch):
    from llama_index.llms.openai import OpenAI

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-123")
    llm = build("openai:gpt-4.1", temperature=0.3, max_output_tokens=1000, request_timeout_s=30)
    assert type(llm) is OpenAI
    assert (llm.model, llm.temperature, llm.max_tokens, llm.timeout, llm.max_retries) == ("gpt-4.1", 0.3, 1000, 30, 0)


def test_openai_rejects_a_model_its_integration_does_not_know(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-123")
    with pytest.raises(KForgeError, match="does not know the model 'no-such-model'"):
        build("openai:no-such-model")


def test_openai_like_needs_a_base_url_and_uses_chat_completions():
    with pytest.raises(KForgeError, match="base_url"):
        build("openai-like:qwen")
    llm = build("openai-like:qwen", base_url="http://127.0.0.1:8000/v1")
    assert llm.api_base == "http://127.0.0.1:8000/v1" and llm.metadata.is_chat_model and llm.max_retries == 0


def test_anthropic_and_ollama_are_built_from_their_integrations(monkeypatch):
    # both are in the dev extra, so CI runs this; an environment without these optional extras skips it
    anthropic = pytest.importorskip("llama_index.llms.anthropic")
    ollama = pytest.importorskip("llama_index.llms.ollama")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-123")
    llm = build("anthropic:claude-sonnet-4-5", max_output_tokens=2048)
    assert type(llm) is anthropic.Anthropic and llm.model == "claude-sonnet-4-5" and llm.max_tokens == 2048
    assert llm.max_retries == 0
    llm = build("ollama:qwen2.5-coder", base_url="http://127.0.0.1:11434")
    assert type(llm) is ollama.Ollama and llm.model == "qwen2.5-coder" and llm.base_url == "http://127.0.0.1:11434"


def test_two_replay_specs_of_one_file_share_its_order(tmp_path):
    script = tmp_path / "s.jsonl"
    script.write_text('{"reply": "one"}\n{"reply": "two"}\n{"reply": "three"}\n')
    spec = parse_model_spec(f"replay:{script}")
    generation, analysis = build_agent_llms(spec, spec, LLMSettings(), replies_received={f"replay:{script}": 1})
    assert isinstance(generation, ReplayLLM) and (generation.agent, analysis.agent) == ("generation", "analysis")
    assert generation.complete("x").text == "two"  # a resumed run starts after the replies it has
    assert analysis.complete("x").text == "three"
