"""LLM access through llama-index's own provider integrations (and ``replay:`` scripts for offline runs)."""

from .client import ChatClient, LLMReply
from .errors import NoMoreReplies, ProviderError
from .providers import build_agent_llms
from .spec import ModelSpec, parse_model_spec
from .usage import Usage

__all__ = [
    "ChatClient", "LLMReply", "ModelSpec", "NoMoreReplies", "ProviderError", "Usage", "build_agent_llms",
    "parse_model_spec",
]
