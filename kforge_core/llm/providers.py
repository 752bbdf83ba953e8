"""Building a llama-index LLM for a ``PROVIDER:MODEL`` spec, with the provider's own integration, unchanged.

Integrations are imported only when their provider is asked for, so a missing extra is a clear error naming the
``pip install`` that fixes it. Credentials are read from the provider's usual environment variable and handed to
the client; they are never copied anywhere else. Every client is built with its own retries off: the loop's
:mod:`~kforge_core.llm.retry` retries within the run's budget and counts each request.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..errors import KForgeError
from ..settings import LLMSettings
from .spec import ModelSpec

if TYPE_CHECKING:
    from llama_index.core.llms import LLM

    from .replay import ReplayScript


def _integration(spec: ModelSpec, module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise KForgeError(
            f"the {spec.provider!r} provider needs the {module} integration, which is not installed ({exc})",
            hint=f"pip install 'kforge-core[{extra}]'",
        ) from None


def _credential(spec: ModelSpec, variable: str) -> str:
    value = os.environ.get(variable, "")
    if not value:
        raise KForgeError(
            f"{spec} needs an API key: the environment variable {variable} is not set",
            hint=f"export {variable}=... (KForge passes it to the provider only; it is never stored)",
        )
    return value


def _openai(spec: ModelSpec, settings: LLMSettings) -> LLM:
    api_key = _credential(spec, "OPENAI_API_KEY")
    module = _integration(spec, "llama_index.llms.openai", "openai")
    llm = module.OpenAI(
        model=spec.model,
        api_key=api_key,
        api_base=settings.base_url or None,
        temperature=settings.temperature,
        max_tokens=settings.max_output_tokens,
        timeout=settings.request_timeout_s,
        max_retries=0,
    )
    try:
        llm.metadata  # the integration knows only the model names it was released with
    except ValueError:
        raise KForgeError(
            f"llama-index-llms-openai does not know the model {spec.model!r}",
            hint="upgrade llama-index-llms-openai, or use openai-like:MODEL with [llm] base_url",
        ) from None
    return llm


def _openai_like(spec: ModelSpec, settings: LLMSettings) -> LLM:
    module = _integration(spec, "llama_index.llms.openai_like", "openai-like")
    if not settings.base_url:
        raise KForgeError(
            f"{spec} needs the server's address in [llm] base_url",
            hint="for example base_url = \"http://localhost:8000/v1\" (or KFORGE_LLM__BASE_URL)",
        )
    return module.OpenAILike(
        model=spec.model,
        api_base=settings.base_url,
        api_key=os.environ.get("OPENAI_API_KEY") or "unused",  # local servers usually take any key
        is_chat_model=True,
        temperature=settings.temperature,
        max_tokens=settings.max_output_tokens,
        timeout=settings.request_timeout_s,
        max_retries=0,
    )


def _anthropic(spec: ModelSpec, settings: LLMSettings) -> LLM:
    api_key = _credential(spec, "ANTHROPIC_API_KEY")
    module = _integration(spec, "llama_index.llms.anthropic", "anthropic")
    return module.Anthropic(
        model=spec.model,
        api_key=api_key,
        base_url=settings.base_url or None,
        temperature=settings.temperature,
        max_tokens=settings.max_output_tokens,
        timeout=settings.request_timeout_s,
        max_retries=0,
    )


def _ollama(spec: ModelSpec, settings: LLMSettings) -> LLM:
    module = _integration(spec, "llama_index.llms.ollama", "ollama")
    extra = {"base_url": settings.base_url} if settings.base_url else {}
    return module.Ollama(
        model=spec.model, temperature=settings.temperature, request_timeout=settings.request_timeout_s, **extra
    )


def _corpus(spec: ModelSpec, settings: LLMSettings) -> LLM:
    from .corpus import CorpusModel, parse_corpus

    directory, options = parse_corpus(spec.model)
    model = CorpusModel(directory, options)  # a missing directory is said before llama-index is imported
    try:
        from .corpus_llm import CorpusLLM
    except ImportError as exc:
        raise KForgeError(f"corpus needs llama-index-core ({exc})",
                          hint="pip install 'kforge-core[openai-like]'") from None
    return CorpusLLM(model, max_tokens=settings.max_output_tokens)


_BUILDERS: dict[str, Callable[[ModelSpec, LLMSettings], LLM]] = {
    "openai": _openai,
    "openai-like": _openai_like,
    "anthropic": _anthropic,
    "ollama": _ollama,
}


def build_agent_llms(
    generation: ModelSpec,
    analysis: ModelSpec,
    settings: LLMSettings,
    *,
    replies_received: Mapping[str, int] | None = None,
) -> tuple[LLM, LLM]:
    """The two agents' LLMs. Two ``replay:`` specs naming one file share its script, so replies stay in order.

    :param replies_received: per spec, the replies a resumed run already has; a replay script starts after them.
    """
    received = replies_received or {}
    scripts: dict[Path, ReplayScript] = {}

    def build(spec: ModelSpec, agent: str) -> LLM:
        if spec.provider == "corpus":
            return _corpus(spec, settings)
        if spec.provider != "replay":
            return _BUILDERS[spec.provider](spec, settings)
        path = Path(spec.model).resolve()
        if not path.is_file():  # said before llama-index takes seconds to import
            raise KForgeError(f"replay script not found: {path}")
        try:
            from .replay import ReplayLLM, ReplayScript
        except ImportError as exc:
            raise KForgeError(f"replay needs llama-index-core ({exc})",
                              hint="pip install 'kforge-core[openai-like]'") from None

        if path not in scripts:
            position = sum(n for name, n in received.items() if _replay_path(name) == path)
            scripts[path] = ReplayScript.load(path, position)
        return ReplayLLM(scripts[path], agent)

    return build(generation, "generation"), build(analysis, "analysis")


def _replay_path(spec_text: str) -> Path | None:
    provider, _, model = spec_text.partition(":")
    return Path(model).resolve() if provider == "replay" else None
