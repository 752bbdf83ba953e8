"""``PROVIDER:MODEL``: how a user names a model (``openai:gpt-4.1``, ``replay:examples/replay/cpu_demo.jsonl``,
``corpus:solutions/?latency=20&fail=0.3``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import KForgeError

PROVIDERS = ("openai", "anthropic", "ollama", "openai-like", "replay", "corpus")


@dataclass(frozen=True)
class ModelSpec:
    """A provider and a model name (for ``replay``, the model is the script's path; for ``corpus``, a directory of
    kernels and its options, ``kforge_core.llm.corpus``)."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def parse_model_spec(text: str, *, setting: str = "llm.model") -> ModelSpec:
    """Split ``PROVIDER:MODEL``; an empty, malformed or unknown spec is a KForgeError naming ``setting``."""
    if not text:
        raise KForgeError(
            f"no model chosen ({setting} is empty)",
            hint="pass --llm PROVIDER:MODEL (for example openai:gpt-4.1) or set [llm] model in kforge.toml",
        )
    provider, sep, model = text.partition(":")
    if not sep or not model:
        raise KForgeError(f"{setting} = {text!r} is not PROVIDER:MODEL", hint=f"providers: {', '.join(PROVIDERS)}")
    if provider not in PROVIDERS:
        raise KForgeError(f"{setting}: unknown provider {provider!r} in {text!r}", hint=f"providers: {', '.join(PROVIDERS)}")
    return ModelSpec(provider, model)
