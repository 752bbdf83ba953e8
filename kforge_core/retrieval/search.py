"""BM25 over the kernels' problem descriptions (llama-index's BM25 retriever, on bm25s): no network, no model.

A hit carries its score and the reason it was chosen, in words a prompt and a person can read.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

from .embedding import rerank
from .entry import IndexedKernel
from .operators import ARITHMETIC, canonical, with_families
from .sketch import ProblemSketch

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding


@dataclass(frozen=True)
class Hit:
    kernel: IndexedKernel
    score: float
    shared: tuple[str, ...]  # operators the query and the kernel's problem both have
    same_problem: bool  # the kernel solves the very problem asked about (same source)


def bm25_search(kernels: list[IndexedKernel], query: str, limit: int) -> list[tuple[IndexedKernel, float]]:
    """The ``limit`` best kernels for ``query`` (words), best first; kernels that share no word are left out."""
    if not kernels or not query.split():
        return []
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    nodes = [TextNode(text=k.problem.words(), id_=str(i)) for i, k in enumerate(kernels)]
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=min(limit, len(nodes)),
                                            skip_stemming=True)
    found = retriever.retrieve(query)
    return [(kernels[int(n.node.node_id)], float(n.score or 0.0)) for n in found if (n.score or 0.0) > 0.0]


def search(kernels: list[IndexedKernel], query: ProblemSketch | str, *, backend: str | None = None,
           limit: int = 10, embed: BaseEmbedding | None = None) -> list[Hit]:
    """Kernels for a problem (or free words), best first; with ``backend``, that backend's kernels come first.
    ``embed``: an embedding model that re-ranks BM25's best few (see :mod:`.embedding`)."""
    words = query.words() if isinstance(query, ProblemSketch) else " ".join(canonical(w) for w in query.split())
    digest = query.digest if isinstance(query, ProblemSketch) else ""
    query_ops = set(words.split())
    hits = [Hit(k, score, _shared(k, query_ops), bool(digest) and k.problem.digest == digest)
            for k, score in bm25_search(kernels, words, len(kernels))]
    hits = [h for h in hits if h.shared or h.same_problem]  # a shared dtype or name word alone is no relation
    if embed is not None:
        hits = rerank(hits[:max(20, 4 * limit)], words, embed)
    hits.sort(key=lambda h: (backend is not None and h.kernel.backend != backend, not h.same_problem, -h.score))
    return hits[:limit]


def _shared(kernel: IndexedKernel, query_words: set[str]) -> tuple[str, ...]:
    """The operators (and families) of the kernel's problem that the query has, named operators before
    arithmetic."""
    shared = [op for op in with_families((*kernel.problem.operators, *kernel.problem.traced)) if op in query_words]
    return tuple(sorted(shared, key=lambda op: op in ARITHMETIC))
