"""The replay provider: a real llama-index LLM that answers from a script, in order, and checks expectations."""

from __future__ import annotations

import json

import pytest
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock
from llama_index.core.llms import LLM

from kforge_core.errors import KForgeError
from kforge_core.llm import NoMoreReplies
from kforge_core.llm.replay import ReplayLLM, ReplayScript
from kforge_core.llm.usage import usage_of


def script(tmp_path, *entries, raw: str = ""):
    path = tmp_path / "script.jsonl"
    path.write_text(raw or "".join(json.dumps(e) + "\n\n" for e in entries))
    return path


def ask(llm, text="write it", images=()):
    blocks = [TextBlock(text=text)] + [ImageBlock(path=p, image_mimetype="image/png") for p in images]
    return llm.chat([ChatMessage(role="system", content="sys"), ChatMessage(role="user", blocks=blocks)])


def test_replies_come_in_order_with_their_usage(tmp_path):
    path = script(tmp_path, {"reply": "first", "usage": {"input_tokens": 10, "output_tokens": 3}},
                  {"reply": ["line 1", "line 2"], "note": "a list of lines is joined"})
    llm = ReplayLLM(ReplayScript.load(path), "generation")
    assert isinstance(llm, LLM)
    first = ask(llm)
    assert first.message.content == "first"
    assert (usage_of(first).input_tokens, usage_of(first).output_tokens) == (10, 3)
    second = ask(llm)
    assert second.message.content == "line 1\nline 2" and not usage_of(second).reported
    with pytest.raises(NoMoreReplies, match="has no reply left"):
        ask(llm)


def test_expectations_are_checked(tmp_path, png):
    path = script(tmp_path, {"reply": "a", "agent": "analysis"}, {"reply": "b", "expect": {"contains": ["TypingError"]}},
                  {"reply": "c", "expect": {"images": 1}})
    shared = ReplayScript.load(path)
    generation, analysis = ReplayLLM(shared, "generation"), ReplayLLM(shared, "analysis")
    with pytest.raises(KForgeError, match="line 1: the analysis agent was expected to ask, but the generation"):
        ask(generation)
    ask(analysis)
    with pytest.raises(KForgeError, match="line 3: the generation prompt does not contain 'TypingError'"):
        ask(generation, "all good")
    ask(generation, "numba TypingError: ...")
    with pytest.raises(KForgeError, match="carries 0 image"):
        ask(generation)
    assert ask(generation, images=[png]).message.content == "c"


def test_expected_images_are_named_in_order_and_must_be_readable(tmp_path, png):
    shot = tmp_path / "screenshot.png"
    shot.write_bytes(png.read_bytes())
    path = script(tmp_path, *[{"reply": r, "expect": {"images": ["roofline", "screenshot"]}} for r in "abc"],
                  {"reply": "d"})
    llm = ReplayLLM(ReplayScript.load(path), "analysis")
    with pytest.raises(KForgeError, match="line 1: image 1 of the prompt is 'screenshot.png', the script expects a "
                                          "name with 'roofline'"):
        ask(llm, images=[shot, png])
    with pytest.raises(KForgeError, match="carries 1 image"):
        ask(llm, images=[png])
    assert ask(llm, images=[png, shot]).message.content == "a"
    gone = tmp_path / "deleted.png"
    gone.write_bytes(png.read_bytes())
    blocks = [TextBlock(text="t")] + [ImageBlock(path=p, image_mimetype="image/png") for p in (png, gone)]
    gone.unlink()  # removed after the prompt was made: what the provider would send is gone
    with pytest.raises(KForgeError, match="line 3: image 2 of the prompt cannot be read"):
        llm.chat([ChatMessage(role="user", blocks=blocks)])


@pytest.mark.parametrize("raw, message", [
    ("not json\n", "line 1: not valid JSON"),
    ('{"reply": "x", "expect": {"images": "two"}}\n', '"expect.images" must be'),
    ('{"text": "x"}\n', 'with a "reply"'),
    ('{"reply": "x", "agent": "critic"}\n', '"agent" must be one of'),
    ('{"reply": "x", "usage": {"input_tokens": "many"}}\n', '"usage" must be'),
    ('{"reply": "x", "colour": 1}\n', "unknown key"),
])
def test_a_broken_script_is_reported_with_its_line(tmp_path, raw, message):
    with pytest.raises(KForgeError, match=message):
        ReplayScript.load(script(tmp_path, raw=raw))


def test_a_missing_script_is_a_clear_error(tmp_path):
    with pytest.raises(KForgeError, match="replay script not found"):
        ReplayScript.load(tmp_path / "nope.jsonl")
