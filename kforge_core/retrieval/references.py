"""The retrieved kernels a run shows its generation agent: chosen before the run starts, kept with its plan (a
resumed run prompts as before), recorded in its journal and report."""

from __future__ import annotations

from pathlib import Path

from ..agents import RetrievedReference
from .embedding import embedding_model
from .index_store import KernelIndexStore, index_path
from .search import Hit, search
from .sketch import ProblemSketch, sketch_problem

REFERENCE_MODES = ("auto", "none")


def retrieve_references(runs_dir: Path, problem_path: Path, backend: str, precision: str,
                        limit: int, embed_model: str | None = None) -> tuple[RetrievedReference, ...]:
    """Up to ``limit`` kernels for the problem at ``problem_path``: the same backend's first, then other backends'
    as cross-platform references, re-ranked by ``embed_model`` when one is named. Nothing (and no file created)
    when the runs directory has no index."""
    if limit < 1 or not index_path(runs_dir).is_file():
        return ()
    with KernelIndexStore(runs_dir) as store:
        kernels = store.kernels()
    if not kernels:
        return ()
    query = sketch_problem(problem_path)
    embed = embedding_model(embed_model) if embed_model else None
    hits = search(kernels, query, backend=backend, limit=limit, embed=embed)
    return tuple(_reference(hit, query, backend, precision) for hit in hits)


def _reference(hit: Hit, query: ProblemSketch, backend: str, precision: str) -> RetrievedReference:
    kernel = hit.kernel
    same_backend = kernel.backend == backend
    if hit.same_problem and same_backend:
        why = f"It solves this same problem on {backend}: a warm start, to improve on rather than a hint."
    elif hit.same_problem:
        why = (f"It solves this same problem on {kernel.backend}: a cross-platform reference; carry its algorithm "
               f"over to {backend}'s programming model.")
    else:
        shared = ", ".join(hit.shared[:6]) or "related operators"
        where = f"on {backend}" if same_backend else f"on {kernel.backend} (a cross-platform reference)"
        why = f"It solves a related problem ({kernel.problem.name}) {where}; both compute {shared}."
    if kernel.precision and kernel.precision != precision:
        why += f" It was held to the {kernel.precision} contract; this run's is {precision}."
    return RetrievedReference(
        key=kernel.key, problem_name=kernel.problem.name, backend=kernel.backend, score=hit.score,
        warm_start=hit.same_problem and same_backend, why=why, figures=kernel.figures(), files=kernel.files,
        entry=kernel.entry)
