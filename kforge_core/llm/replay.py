"""``replay:FILE.jsonl``: a llama-index LLM that answers with scripted replies, in order.

It lets the whole loop run offline (tests, demos) through exactly the code path a real model takes. Each line of
the script is one JSON object::

    {"agent": "generation", "reply": "```python\\n...```", "usage": {"input_tokens": 900, "output_tokens": 350},
     "expect": {"contains": ["TypingError"], "images": 0}, "note": "repairs the typing error"}

``reply`` (a string, or a list of lines joined with newlines) is required. ``agent`` ("generation" or "analysis")
says which agent must be the one asking; ``expect.contains`` lists text the prompt must hold and ``expect.images``
how many images it must carry, or a list with one entry per image, in order, naming part of the image file's name
(``["metal_profile", "screenshot"]``). Every image must be readable, as a provider would send it. A broken
expectation stops the run with the script's line number, so a script doubles as a check of what the loop sent.
``note`` is for people.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    ImageBlock,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import Field, PrivateAttr

from ..errors import KForgeError
from .errors import NoMoreReplies

AGENTS = ("generation", "analysis")
_KEYS = {"reply", "agent", "usage", "expect", "note"}
_EXPECT_KEYS = {"contains", "images"}


@dataclass(frozen=True)
class ScriptedReply:
    """One line of a replay script."""

    line: int
    text: str
    agent: str | None = None
    usage: tuple[int, int] | None = None
    contains: tuple[str, ...] = ()
    images: int | tuple[str, ...] | None = None


def _parse_line(path: Path, number: int, text: str) -> ScriptedReply:
    def fail(message: str) -> KForgeError:
        return KForgeError(f"replay script {path}, line {number}: {message}")

    try:
        item = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON: {exc.msg}") from None
    if not isinstance(item, dict) or "reply" not in item:
        raise fail('each line must be a JSON object with a "reply"')
    unknown = set(item) - _KEYS
    if unknown:
        raise fail(f"unknown key(s) {sorted(unknown)}; known: {sorted(_KEYS)}")
    reply = item["reply"]
    if isinstance(reply, list) and all(isinstance(part, str) for part in reply):
        reply = "\n".join(reply)
    if not isinstance(reply, str):
        raise fail('"reply" must be a string or a list of strings')
    agent = item.get("agent")
    if agent is not None and agent not in AGENTS:
        raise fail(f'"agent" must be one of {AGENTS}, got {agent!r}')
    expect = item.get("expect", {})
    if not isinstance(expect, dict) or set(expect) - _EXPECT_KEYS:
        raise fail(f'"expect" must be an object with keys among {sorted(_EXPECT_KEYS)}')
    usage = item.get("usage")
    if usage is not None:
        if not isinstance(usage, dict) or not all(isinstance(usage.get(k), int) for k in ("input_tokens", "output_tokens")):
            raise fail('"usage" must be {"input_tokens": INT, "output_tokens": INT}')
        usage = (usage["input_tokens"], usage["output_tokens"])
    contains = expect.get("contains", [])
    if isinstance(contains, str):
        contains = [contains]
    images = expect.get("images")
    if isinstance(images, list) and all(isinstance(name, str) for name in images):
        images = tuple(images)
    elif images is not None and (not isinstance(images, int) or isinstance(images, bool)):
        raise fail('"expect.images" must be a number of images or a list of parts of their file names')
    return ScriptedReply(number, reply, agent, usage, tuple(contains), images)


class ReplayScript:
    """The replies of one script file and the position of the next one, shared by both agents' LLMs."""

    def __init__(self, path: Path, replies: Sequence[ScriptedReply], position: int = 0) -> None:
        self.path = path
        self.replies = tuple(replies)
        self.position = position

    @classmethod
    def load(cls, path: Path, position: int = 0) -> ReplayScript:
        """Read and check every line; ``position`` skips the replies a resumed run already received."""
        if not path.is_file():
            raise KForgeError(f"replay script not found: {path}")
        replies = [
            _parse_line(path, number, text)
            for number, text in enumerate(path.read_text().splitlines(), start=1)
            if text.strip()
        ]
        return cls(path, replies, position)

    @property
    def remaining(self) -> int:
        return max(0, len(self.replies) - self.position)

    def answer(self, agent: str, messages: Sequence[ChatMessage]) -> ScriptedReply:
        """The next reply, after checking it was meant for ``agent`` and for a prompt like ``messages``."""
        if self.position >= len(self.replies):
            raise NoMoreReplies(f"replay script {self.path} has no reply left ({len(self.replies)} used)")
        scripted = self.replies[self.position]
        where = f"replay script {self.path}, line {scripted.line}"
        if scripted.agent is not None and scripted.agent != agent:
            raise KForgeError(f"{where}: the {scripted.agent} agent was expected to ask, but the {agent} agent asked")
        prompt = "\n".join(message.content or "" for message in messages)
        for text in scripted.contains:
            if text not in prompt:
                raise KForgeError(f"{where}: the {agent} prompt does not contain {text!r}")
        _check_images(where, [b for m in messages for b in m.blocks if isinstance(b, ImageBlock)], scripted.images)
        self.position += 1
        return scripted


def _check_images(where: str, blocks: list[ImageBlock], expected: int | tuple[str, ...] | None) -> None:
    """Every image block can be read as a provider reads it; their number (and names) are what the script says."""
    for number, block in enumerate(blocks, start=1):
        try:
            block.resolve_image()
        except Exception as exc:
            raise KForgeError(f"{where}: image {number} of the prompt cannot be read ({exc})") from None
    if expected is None:
        return
    count = expected if isinstance(expected, int) else len(expected)
    if len(blocks) != count:
        raise KForgeError(f"{where}: the prompt carries {len(blocks)} image(s), the script expects {count}")
    if isinstance(expected, tuple):
        names = [Path(str(block.path or "")).name for block in blocks]
        for number, (part, name) in enumerate(zip(expected, names), start=1):
            if part not in name:
                raise KForgeError(f"{where}: image {number} of the prompt is {name!r}, the script expects a name "
                                  f"with {part!r}")


class ReplayLLM(CustomLLM):
    """A llama-index LLM serving one agent from a :class:`ReplayScript`."""

    script_path: str = Field(description="The replay script (JSON lines).")
    agent: str = Field(description="The agent this LLM serves: generation or analysis.")
    _script: ReplayScript = PrivateAttr()

    def __init__(self, script: ReplayScript, agent: str, **kwargs: Any) -> None:
        super().__init__(script_path=str(script.path), agent=agent, **kwargs)
        self._script = script

    @classmethod
    def class_name(cls) -> str:
        return "kforge_replay"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=f"replay:{self.script_path}", is_chat_model=True)

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        scripted = self._script.answer(self.agent, messages)
        raw: dict[str, Any] = {"replay_line": scripted.line}
        if scripted.usage is not None:
            raw["usage"] = {"input_tokens": scripted.usage[0], "output_tokens": scripted.usage[1]}
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=scripted.text), raw=raw)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        response = self.chat([ChatMessage(role=MessageRole.USER, content=prompt)])
        return CompletionResponse(text=response.message.content or "", raw=response.raw)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        response = self.complete(prompt, formatted=formatted)
        yield CompletionResponse(text=response.text, delta=response.text, raw=response.raw)
