"""The ``corpus:`` provider as a llama-index LLM (the model itself is :class:`~kforge_core.llm.corpus.CorpusModel`)."""

from __future__ import annotations

from typing import Any, Sequence

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import Field, PrivateAttr

from .corpus import CorpusModel


class CorpusLLM(CustomLLM):
    """Answers from a :class:`CorpusModel`; the per-request temperature is taken and has no effect."""

    directory: str = Field(description="The corpus directory.")
    max_tokens: int = Field(default=8192, description="The most tokens an answer is counted as.")
    _model: CorpusModel = PrivateAttr()

    def __init__(self, model: CorpusModel, max_tokens: int = 8192, **kwargs: Any) -> None:
        super().__init__(directory=str(model.directory), max_tokens=max_tokens, **kwargs)
        self._model = model

    @classmethod
    def class_name(cls) -> str:
        return "kforge_corpus"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=f"corpus:{self.directory}", is_chat_model=True)

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        system = "\n".join(m.content or "" for m in messages if m.role == MessageRole.SYSTEM)
        user = "\n".join(m.content or "" for m in messages if m.role != MessageRole.SYSTEM)
        answer = self._model.answer(system, user, max_tokens=self.max_tokens)
        raw = {"usage": {"input_tokens": answer.input_tokens, "output_tokens": answer.output_tokens}}
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=answer.text), raw=raw)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        response = self.chat([ChatMessage(role=MessageRole.USER, content=prompt)])
        return CompletionResponse(text=response.message.content or "", raw=response.raw)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        response = self.complete(prompt, formatted=formatted)
        yield CompletionResponse(text=response.text, delta=response.text, raw=response.raw)
