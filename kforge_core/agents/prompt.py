"""A rendered prompt: what one agent sends, as text people can read and as llama-index chat messages."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..records import Image
from ..secrets import redact

if TYPE_CHECKING:
    from llama_index.core.base.llms.types import ChatMessage


_IMAGE_TOKENS = 2000


@dataclass(frozen=True)
class Prompt:
    """A system message, a user message and the images that go with the user message.

    :param agent: "generation" or "analysis".
    """

    agent: str
    system: str
    user: str
    images: tuple[Image, ...] = ()

    def messages(self) -> list[ChatMessage]:
        """Chat messages for any llama-index LLM; each image becomes an ``ImageBlock`` of the user message. The text is
        redacted of secrets (a candidate's output quoted in it could hold one it read)."""
        from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock

        blocks: list = [TextBlock(text=redact(self.user))]
        blocks += [ImageBlock(path=image.path, image_mimetype=image.mime) for image in self.images]
        return [
            ChatMessage(role=MessageRole.SYSTEM, content=redact(self.system)),
            ChatMessage(role=MessageRole.USER, blocks=blocks),
        ]

    @property
    def digest(self) -> str:
        """Hash of everything sent, image bytes included; a resumed run checks it to replay the same call."""
        h = hashlib.sha256()
        for part in (self.agent, self.system, self.user):
            h.update(part.encode() + b"\0")
        for image in self.images:
            h.update(image.path.read_bytes() if image.path.is_file() else str(image.path).encode())
        return h.hexdigest()[:16]

    def token_bound(self) -> int:
        """The most tokens this prompt can be as a model's input: a token of any byte-level tokenizer covers at least
        one byte of text, a message's framing takes a few tokens, and an image at most 2,000 at the major providers'
        sizes (OpenAI, Anthropic, Gemini). What a concurrent run reserves of its token budget per request."""
        text = sum(len(part.encode()) for part in (self.system, self.user))
        return text + 16 * 3 + _IMAGE_TOKENS * len(self.images)

    def as_markdown(self) -> str:
        images = "".join(f"\n[image: {image.path.name}] {image.caption}" for image in self.images)
        return f"<!-- system -->\n{self.system}\n<!-- user -->\n{self.user}{images}\n"
