"""Remembering what worked: an index of accepted kernels (each run's best, and folders of published solutions),
searched with BM25 over what each kernel's problem computes, so a new run can be shown related working kernels.

``sketch`` and ``operators`` describe a problem; ``entry`` is one indexed kernel; ``index_store`` keeps them in
``RUNS_DIR/retrieval.db``; ``search`` ranks them; ``references`` picks a run's references; ``keeping`` and
``sources`` fill the index.
"""

from .entry import IndexedKernel
from .index_store import KernelIndexStore, index_path
from .keeping import add_folder, rebuild_runs, remember_run
from .references import REFERENCE_MODES, RetrievedReference, retrieve_references
from .search import Hit, search
from .sketch import ProblemSketch, sketch_problem, sketch_source

__all__ = [
    "REFERENCE_MODES", "Hit", "IndexedKernel", "KernelIndexStore", "ProblemSketch", "RetrievedReference",
    "add_folder", "index_path", "rebuild_runs", "remember_run", "retrieve_references", "search", "sketch_problem",
    "sketch_source",
]
