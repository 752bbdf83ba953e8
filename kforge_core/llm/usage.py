"""Token usage as each llama-index integration reports it, and what it cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .spec import ModelSpec


@dataclass(frozen=True)
class Usage:
    """Tokens one call consumed. ``reported`` is False when the provider said nothing (counted as 0)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reported: bool = True

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


def _field(obj: Any, *names: str) -> int | None:
    for name in names:
        value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
    return None


def usage_of(response: Any) -> Usage:
    """Usage from a ``ChatResponse``: OpenAI puts it in ``additional_kwargs``, Anthropic and Ollama in ``raw``."""
    candidates = [response.additional_kwargs or {}]
    raw = response.raw
    nested = raw.get("usage") if isinstance(raw, Mapping) else getattr(raw, "usage", None)
    if nested is not None:
        candidates.append(nested)
    for source in candidates:
        tokens_in = _field(source, "input_tokens", "prompt_tokens")
        tokens_out = _field(source, "output_tokens", "completion_tokens")
        if tokens_in is not None or tokens_out is not None:
            return Usage(tokens_in or 0, tokens_out or 0)
    return Usage(reported=False)


def cost_usd(usage: Usage, spec: ModelSpec, prices: Mapping[str, tuple[float, float]]) -> float | None:
    """USD for ``usage`` from ``[llm] prices`` (keyed by full spec or bare model name); None when unpriced."""
    price = prices.get(str(spec)) or prices.get(spec.model)
    if price is None:
        return None
    per_million_in, per_million_out = price
    return (usage.input_tokens * per_million_in + usage.output_tokens * per_million_out) / 1e6
