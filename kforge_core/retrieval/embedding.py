"""An optional embedding model that re-ranks BM25's candidates, only where the user configures one
(``[retrieval] embed_model = "PROVIDER:MODEL"``); without one, retrieval is BM25 alone and needs no model.

The model sees the same normalised descriptions BM25 ranks; a candidate's score becomes its BM25 score (scaled so the
best is 1) plus the cosine similarity of its description to the query's. It re-ranks what BM25 found: a kernel that
shares no operator with the problem is still never shown.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING

from ..errors import KForgeError

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from .search import Hit

# provider -> (module, class, the package that provides it, the keyword that names the model, other arguments)
PROVIDERS = {
    "openai": ("llama_index.embeddings.openai", "OpenAIEmbedding", "llama-index-embeddings-openai", "model", {}),
    "ollama": ("llama_index.embeddings.ollama", "OllamaEmbedding", "llama-index-embeddings-ollama", "model_name",
               {"base_url": "http://localhost:11434"}),  # a local Ollama server, where its docs put it
    "huggingface": ("llama_index.embeddings.huggingface", "HuggingFaceEmbedding",
                    "llama-index-embeddings-huggingface", "model_name", {}),
}


def embedding_model(spec: str) -> BaseEmbedding:
    """The llama-index embedding model ``spec`` names (``ollama:nomic-embed-text``)."""
    provider, _, model = spec.partition(":")
    if provider not in PROVIDERS or not model:
        raise KForgeError(f"retrieval.embed_model {spec!r} is not PROVIDER:MODEL with a provider among "
                          f"{', '.join(PROVIDERS)}")
    module_name, class_name, package, keyword, extra = PROVIDERS[provider]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise KForgeError(f"retrieval.embed_model {spec!r} needs the package {package}",
                          hint=f"pip install {package}, or leave embed_model unset for BM25 alone") from None
    return getattr(module, class_name)(**{keyword: model}, **extra)


def rerank(hits: list[Hit], query: str, model: BaseEmbedding) -> list[Hit]:
    """``hits`` with scores that add the embedding similarity to the scaled BM25 score (order left to the caller)."""
    if not hits:
        return hits
    from llama_index.core.base.embeddings.base import similarity

    query_vector = model.get_query_embedding(query)
    vectors = model.get_text_embedding_batch([h.kernel.problem.words() for h in hits])
    best = max(h.score for h in hits)
    return [dataclasses.replace(h, score=h.score / best + similarity(query_vector, v)) for h, v in zip(hits, vectors)]
