"""Where indexed kernels come from: the best kernel of each run in the run store, and folders of solutions laid out
as KernelBench is (``level1/19_ReLU.py`` beside a problem of the same name)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import KForgeError
from ..records import SourceFile
from ..store import RunStore
from .entry import IndexedKernel
from .sketch import sketch_problem


@dataclass
class Gathered:
    """Kernels read from one source, and what was passed over and why."""

    kernels: list[IndexedKernel] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def kernel_of_run(store: RunStore, run_id: str) -> IndexedKernel | str:
    """The run's best kernel, described; or why the run has none to give."""
    from ..report import RunReport

    report = RunReport.from_store(store, run_id)
    best, run = report.best, report.run
    if best is None or best.candidate is None or best.outcome is None:
        return f"run {run_id}: no correct candidate"
    path = Path(run.problem_path)
    if not path.is_file():
        return f"run {run_id}: its problem file {path} is gone"
    sketch = sketch_problem(path)
    if sketch.digest != run.problem_digest:
        return f"run {run_id}: its problem file {path} changed since the run"
    return IndexedKernel(
        key=f"run:{run_id}", problem=sketch, backend=run.backend, precision=run.precision, verdict="correct",
        files=best.candidate.files, entry=best.candidate.entry, runtime_ms=best.outcome.runtime_ms,
        speedup=best.outcome.best_speedup)


def kernels_of_runs(store: RunStore) -> Gathered:
    gathered = Gathered()
    for run in store.list_runs():
        if run.status == "running" and run.alive:
            continue
        found = kernel_of_run(store, run.id)
        (gathered.skipped if isinstance(found, str) else gathered.kernels).append(found)  # type: ignore[arg-type]
    return gathered


def kernels_of_folder(folder: Path, backend: str, problems_dir: Path) -> Gathered:
    """Each ``*.py`` under ``folder`` is a solution of the problem with the same relative path (or, failing that,
    the same file name) under ``problems_dir``."""
    folder, problems_dir = Path(folder).resolve(), Path(problems_dir).resolve()
    for directory, what in ((folder, "--extra"), (problems_dir, "--problems")):
        if not directory.is_dir():
            raise KForgeError(f"{what} {directory} is not a directory")
    by_name: dict[str, Path] = {}
    for problem in sorted(problems_dir.rglob("*.py")):
        by_name.setdefault(problem.name, problem)
    gathered = Gathered()
    for solution in sorted(folder.rglob("*.py")):
        relative = solution.relative_to(folder)
        problem = problems_dir / relative if (problems_dir / relative).is_file() else by_name.get(solution.name)
        if problem is None:
            gathered.skipped.append(f"{relative}: no problem of that name under {problems_dir}")
            continue
        gathered.kernels.append(IndexedKernel(
            key=f"extra:{solution}", problem=sketch_problem(problem), backend=backend, precision="",
            verdict="published", files=(SourceFile(solution.name, solution.read_text()),), entry=solution.name))
    return gathered
