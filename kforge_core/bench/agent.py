"""``kforge bench --llm``: the agent loop on one problem, as a normal run in the run store, evaluated by the slot's
warm harness; and the problem's result read back from that run."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from rich.console import Console

from ..app import App
from ..errors import KForgeError
from ..loop.progress import LoopStatus
from ..loop.session import new_run_id, plan_run, resume_run, start_run
from ..problem import ProblemError
from ..report import RunReport
from ..settings import Settings
from ..store import BenchStore, RunStore
from .results import INVALID_PROBLEM, NO_SOLUTION, ProblemJob, ProblemResult, Usage
from .slot import MESSAGE_LIMIT, DeviceSlot

RUN_ERROR = "run_error"  # the agent loop stopped with an error (a provider refusing, a replay script broken, ...)


class PrefixedProgress:
    """The loop's event lines, each prefixed with the problem's key; several slots print through one lock."""

    def __init__(self, console: Console, key: str, lock: threading.Lock) -> None:
        self.console, self.key, self.lock = console, key, lock

    def status(self, status: LoopStatus) -> None:  # no live line: several problems run at once
        pass

    def event(self, text: str) -> None:
        with self.lock:
            self.console.print(f"{self.key}: {text}", markup=False, highlight=False)


def run_agent(slot: DeviceSlot, job: ProblemJob, *, app: App, settings: Settings, bench_id: str,
              console: Console, lock: threading.Lock) -> ProblemResult:
    """The agent loop on ``job``'s problem (or the continuation of its unfinished run), as a run in the store."""
    start = time.perf_counter()
    progress = PrefixedProgress(console, job.key, lock)
    factory = _slot_evaluator(slot)
    with RunStore(settings.runs_dir) as store, BenchStore(settings.runs_dir) as benches:
        run_id = job.resume_run if job.resume_run and _exists(store, job.resume_run) else None
        try:
            if run_id is None:
                run_id = new_run_id()
                benches.problem_started(bench_id, job.key, run_id)
                start_run(app, plan_run(settings, job.path, store=store), store, progress, evaluator_factory=factory,
                          run_id=run_id)
            elif store.get_run(run_id).status != "finished":
                resume_run(app, store, run_id, progress, evaluator_factory=factory)
        except ProblemError as exc:
            return ProblemResult(job.key, False, INVALID_PROBLEM, str(exc)[:MESSAGE_LIMIT], device=slot.label,
                                 seconds=time.perf_counter() - start, run_id=None)
        except KForgeError as exc:
            if not _exists(store, run_id):
                raise
            return result_of_run(job.key, RunReport.from_store(store, run_id), slot.label,
                                 time.perf_counter() - start, error=str(exc))
        return result_of_run(job.key, RunReport.from_store(store, run_id), slot.label, time.perf_counter() - start)


def result_of_run(key: str, report: RunReport, device: str, seconds: float, error: str = "") -> ProblemResult:
    """The problem's result: the run's best candidate, or the failure of its last evaluated attempt."""
    usage = _usage(report)
    best = report.best
    if best is not None and best.outcome is not None:
        o = best.outcome
        return ProblemResult(key, True, None, runtime_ms=o.runtime_ms, baselines_ms=o.baselines_ms,
                             speedups=o.speedups, flags=tuple(f.code for f in o.flags),
                             precision_bits=o.precision_bits, device=device,
                             seconds=seconds, candidate_digest=o.candidate_digest, run_id=report.run.id, usage=usage,
                             timer=o.timer, figures_ms=o.figures_ms, baseline_sources=o.baseline_sources,
                             sol_ms=o.sol_ms, sol_binds=o.sol_binds, sol_fraction=o.sol_fraction,
                             baseline_fractions=o.baseline_fractions, sol_score=o.sol_score)
    evaluated = [a.outcome for a in report.attempts if a.outcome is not None]
    if evaluated:
        last = evaluated[-1]
        failure = last.failure or ("cheat" if any(f.blocking for f in last.flags) else RUN_ERROR)
        message = last.message
    else:
        failure = RUN_ERROR if error else NO_SOLUTION
        message = error or "no reply held a candidate"
    return ProblemResult(key, False, failure, message[:MESSAGE_LIMIT], device=device, seconds=seconds,
                         run_id=report.run.id, usage=usage)


def _usage(report: RunReport) -> Usage:
    costs = [u.cost_usd for u in report.usage]
    return Usage(calls=sum(u.calls for u in report.usage), input_tokens=sum(u.input_tokens for u in report.usage),
                 output_tokens=sum(u.output_tokens for u in report.usage),
                 cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None))


def _exists(store: RunStore, run_id: str | None) -> bool:
    if run_id is None:
        return False
    try:
        store.get_run(run_id)
    except KForgeError:
        return False
    return True


def _slot_evaluator(slot: DeviceSlot) -> Any:
    """An evaluator factory (see ``loop.evaluator``) that lends the run the slot's warm harness, not a new one."""

    @contextlib.contextmanager
    def lend(backend: Any, problem: Any, settings: Any, options: Any, plugins: Any,
             scratch_root: Path | None, device_index: int | None = None) -> Iterator[Any]:
        yield slot.harness_for(problem)

    return lend
