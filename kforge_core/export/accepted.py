"""The accepted kernels of a run (its best correct candidate) or of a bench (each correct problem's), read from the
run store with the figures that accepted them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bench.plan import BenchPlan
from ..bench.report import VERDICT, problem_dir
from ..bench.solutions import open_solutions
from ..bench.suite import discover
from ..errors import KForgeError
from ..records import Candidate
from ..report import RunReport
from ..store import RunStore
from ..store.bench_store import BenchStore


@dataclass(frozen=True)
class AcceptedKernel:
    """One accepted candidate and the verdict that accepted it.

    :param problem: the problem's key in its suite, or its file's stem for a run.
    :param problem_path: the reference program's file.
    :param run_id: the run that found it (None for a bench of existing solutions).
    :param bench_id: the bench it belongs to, if any.
    :param precision: the precision contract it was held to.
    :param speedups: ``(baseline, speedup)``; the smallest is the headline.
    :param tolerances: ``(dtype, atol, rtol)`` its outputs were held to.
    :param timing: the timing method of its figures (``TimingMethod`` as JSON), None where not recorded.
    """

    problem: str
    problem_path: str
    run_id: str | None
    bench_id: str | None
    backend: str
    precision: str
    candidate: Candidate
    runtime_ms: float | None
    speedups: tuple[tuple[str, float], ...]
    baselines_ms: tuple[tuple[str, float], ...]
    precision_bits: float | None
    tolerances: tuple[tuple[str, float, float], ...]
    timing: dict[str, Any] | None

    @property
    def best_speedup(self) -> float | None:
        return min(value for _, value in self.speedups) if self.speedups else None

    @property
    def origin(self) -> str:
        """``run 2026-..``, ``bench 2026-.., run 2026-..`` or ``bench 2026-.., existing solution``."""
        run = f"run {self.run_id}" if self.run_id else "existing solution"
        return f"bench {self.bench_id}, {run}" if self.bench_id else run


def split_reference(reference: str, runs_dir: Path) -> tuple[Path, str]:
    """A run or bench id in ``runs_dir``, or a run's or bench's directory (its parent holds the store)."""
    path = Path(reference)
    if path.is_dir() and (path.parent / "kforge.db").is_file():
        return path.resolve().parent, path.name
    return runs_dir, reference


def accepted_kernels(runs_dir: Path, reference: str) -> list[AcceptedKernel]:
    """The accepted kernels of run or bench ``reference``. A run without a correct candidate, or a bench without a
    correct problem, is a KForgeError."""
    runs_dir, ident = split_reference(reference, runs_dir)
    with BenchStore(runs_dir) as store:
        if any(run.id == ident for run in store.list_runs()):
            return [_from_run(store, ident)]
        if any(bench.id == ident for bench in store.list_benches()):
            return _from_bench(store, ident)
    raise KForgeError(f"no run or bench {ident!r} in {runs_dir}",
                      hint="`kforge runs` lists the runs")


def _from_run(store: RunStore, run_id: str, bench_id: str | None = None, problem: str | None = None) -> AcceptedKernel:
    report = RunReport.from_store(store, run_id)
    best = report.best
    if best is None or best.candidate is None or best.outcome is None:
        raise KForgeError(f"run {run_id} has no correct candidate to export")
    outcome, run = best.outcome, report.run
    return AcceptedKernel(
        problem=problem or run.problem_name, problem_path=run.problem_path, run_id=run_id, bench_id=bench_id,
        backend=run.backend, precision=run.precision, candidate=best.candidate, runtime_ms=outcome.runtime_ms,
        speedups=outcome.speedups, baselines_ms=outcome.baselines_ms, precision_bits=outcome.precision_bits,
        tolerances=outcome.tolerances, timing=_timing_of_run(store, run_id, best.pass_kind, best.round, best.attempt),
    )


def _timing_of_run(store: RunStore, run_id: str, pass_kind: str, round_: int, attempt: int) -> dict[str, Any] | None:
    run_dir = store.get_run(run_id).run_dir
    for step in store.steps(run_id):
        if (step.kind, step.pass_kind, step.round, step.attempt) == ("evaluation", pass_kind, round_, attempt):
            verdict = run_dir / step.artifact_dir / "verdict.json"
            if verdict.is_file():
                return json.loads(verdict.read_text()).get("method")
    return None


def _from_bench(store: BenchStore, bench_id: str) -> list[AcceptedKernel]:
    info = store.get_bench(bench_id)
    plan = BenchPlan.from_json(info.config, source=f"bench {bench_id}")
    problems = {p.key: p for p in discover(plan.suite, plan.filters)}
    solutions = open_solutions(plan.solutions, list(problems.values()), entry=plan.entry) if plan.solutions else None
    kernels = []
    for key, row in sorted(store.problems(bench_id).items()):
        result = row.result or {}
        if row.status != "done" or not result.get("correct") or result.get("runtime_ms") is None:
            continue
        if row.run_id:
            kernels.append(_from_run(store, row.run_id, bench_id, key))
            continue
        candidate = solutions.candidate_for(problems[key]) if solutions is not None and key in problems else None
        if candidate is None or candidate.digest != result.get("candidate_digest"):
            raise KForgeError(f"bench {bench_id}: the solution of {key} is no longer the one it accepted",
                              hint=f"the solutions in {plan.solutions} changed since; run the bench again")
        verdict = result.get("verdict") or _stored_verdict(info.bench_dir, key)
        kernels.append(AcceptedKernel(
            problem=key, problem_path=str(problems[key].path), run_id=None, bench_id=bench_id, backend=info.backend,
            precision=plan.settings.harness.precision, candidate=candidate, runtime_ms=result["runtime_ms"],
            speedups=tuple(tuple(s) for s in result.get("speedups", ())),  # type: ignore[misc]
            baselines_ms=tuple(tuple(b) for b in result.get("baselines_ms", ())),  # type: ignore[misc]
            precision_bits=result.get("precision_bits"),
            tolerances=tuple(tuple(t)  # type: ignore[misc]
                             for t in (verdict.get("precision") or {}).get("tolerances", ())),
            timing=verdict.get("method"),
        ))
    if not kernels:
        raise KForgeError(f"bench {bench_id} has no correct, timed problem to export")
    return kernels


def _stored_verdict(bench_dir: Path, key: str) -> dict[str, Any]:
    """The verdict document a bench keeps beside each problem's results (the store keeps the figures only)."""
    path = problem_dir(bench_dir, key) / VERDICT
    return json.loads(path.read_text()) if path.is_file() else {}
