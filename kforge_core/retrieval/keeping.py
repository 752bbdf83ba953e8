"""Keeping the index current: a finished run adds its best kernel; ``kforge index`` rebuilds from the store."""

from __future__ import annotations

from pathlib import Path

from ..store import RunStore
from .index_store import KernelIndexStore
from .sources import Gathered, kernel_of_run, kernels_of_folder, kernels_of_runs

RUNS_ORIGIN = "runs"


def remember_run(store: RunStore, run_id: str) -> str:
    """Index the best kernel of run ``run_id`` (replacing what was indexed for it); says what was done."""
    found = kernel_of_run(store, run_id)
    if isinstance(found, str):
        return f"kernel index: nothing added ({found})"
    with KernelIndexStore(store.runs_dir) as index:
        index.put([found], RUNS_ORIGIN)
    return f"kernel index: added the best kernel of run {run_id} ({found.figures()})"


def rebuild_runs(store: RunStore) -> Gathered:
    """Index again the best kernel of every run in the store."""
    gathered = kernels_of_runs(store)
    with KernelIndexStore(store.runs_dir) as index:
        index.drop(RUNS_ORIGIN)
        index.put(gathered.kernels, RUNS_ORIGIN)
    return gathered


def add_folder(runs_dir: Path, folder: Path, backend: str, problems_dir: Path) -> Gathered:
    """Index (again) the solutions in ``folder``, written for ``backend``, of the problems under ``problems_dir``."""
    gathered = kernels_of_folder(folder, backend, problems_dir)
    origin = str(Path(folder).resolve())
    with KernelIndexStore(runs_dir) as index:
        index.drop(origin)
        index.put(gathered.kernels, origin)
    return gathered
