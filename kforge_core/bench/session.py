"""Starting and resuming a bench: the plan and the store, one job per problem, the executor, each result kept in
the store as it comes, and the report at the end."""

from __future__ import annotations

import dataclasses
import functools
import json
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from ..app import App
from ..errors import KForgeError
from ..llm import build_agent_llms, parse_model_spec
from ..loop.plan import absolute_model_spec
from ..records import Backend
from ..redacting_stream import OutputClosed
from ..settings import Settings
from ..store import BenchInfo, BenchStore, RunDirectory
from ..store.locks import held
from ..codec import record_from_json, to_json
from ..devices import device_class_of
from .agent import run_agent
from .describer import Describer
from .local import LocalExecutor
from .plan import BenchPlan, absolute_settings
from .ray_executor import RayExecutor, SlotSpec
from .results import NO_SOLUTION, ProblemJob, ProblemResult
from .report import VERDICT, BenchReport, problem_dir, read_bench_outputs, write_bench_outputs
from .slot import DeviceSlot, ProblemLoader
from .solutions import open_solutions, require_a_match
from .suite import SuiteProblem, discover
from ..plural import counted

Report = Callable[[str], None]  # where a line about the bench's progress goes


@dataclass(frozen=True)
class ExecutorChoice:
    """Where the problems run: ``local`` with one slot per device index (None: the device as this process sees
    it), or ``ray`` at ``ray_address`` (None: a local cluster started for the bench)."""

    kind: str = "local"
    devices: tuple[int | None, ...] = (None,)
    ray_address: str | None = None

    def describe(self, backend: Backend) -> str:
        if self.kind == "ray":
            return f"ray at {self.ray_address or 'a local cluster'}"
        return "local, " + ", ".join(slot_label(backend, index) for index in self.devices)


def slot_label(backend: Backend, index: int | None) -> str:
    if index is None:
        return backend.device
    return f"{backend.device} slot {index}" if device_class_of(backend).host_cpu else f"{backend.device}:{index}"


def new_bench_id() -> str:
    """``bench-`` and the start time, with a few random characters."""
    return f"bench-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def plan_bench(settings: Settings, suite: Path, *, filters: tuple[str, ...], solutions: Path | None, entry: str,
               measure: bool) -> BenchPlan:
    """What the bench will evaluate, fixed before it starts (model specs checked, paths made absolute)."""
    problems = discover(suite, filters)
    if solutions is None:
        llm = settings.llm
        model = absolute_model_spec(parse_model_spec(llm.model, setting="llm.model (--llm)"))
        analyst = llm.analyst_model and absolute_model_spec(
            parse_model_spec(llm.analyst_model, setting="llm.analyst_model (--analyst-llm)"))
        settings = dataclasses.replace(settings, llm=dataclasses.replace(llm, model=model, analyst_model=analyst))
    elif not solutions.exists():
        raise KForgeError(f"solutions not found: {solutions}")
    else:
        require_a_match(solutions, problems, entry=entry)
    return BenchPlan(suite.resolve(), filters, settings.backend, solutions.resolve() if solutions else None, entry,
                     measure, absolute_settings(settings), tuple((p.key, p.digest) for p in problems))


def start_bench(app: App, plan: BenchPlan, choice: ExecutorChoice, report: Report,
                halt: threading.Event | None = None) -> BenchReport:
    """Run the bench; once ``halt`` is set, the problems in hand finish, no other starts, and the bench ends as
    interrupted (``--resume`` goes on)."""
    _get_ready(app, plan, choice)
    with BenchStore(plan.settings.runs_dir) as benches:
        info = benches.create_bench(new_bench_id(), suite_path=str(plan.suite), backend=plan.backend,
                                    source=plan.source, config=plan.to_json())
        with held(benches.runs_dir, "bench", info.id):
            outcome = _execute(app, benches, info, plan, choice, report, halt)
        benches.check_integrity()  # a candidate may have damaged it: never a success then
        return outcome


def resume_bench(app: App, runs_dir: Path, bench_id: str, choice: ExecutorChoice, report: Report,
                 halt: threading.Event | None = None) -> BenchReport:
    with BenchStore(runs_dir) as benches:
        benches.get_bench(bench_id)  # an unknown id is said before any lock is taken
        with held(benches.runs_dir, "bench", bench_id):
            info = benches.get_bench(bench_id)
            if info.alive:
                raise KForgeError(f"bench {bench_id} is still running (process {info.pid})")
            plan = BenchPlan.from_json(info.config, source=f"bench {bench_id}")
            if info.status == "finished":  # every problem has its result: shown, nothing written
                report(f"bench {bench_id} is finished ({counted(len(plan.keys), 'problem')}); nothing is resumed")
                return read_bench_outputs(info, plan, _results(benches, info, plan))
            _get_ready(app, plan, choice)
            benches.claim_bench(bench_id)
            outcome = _execute(app, benches, benches.get_bench(bench_id), plan, choice, report, halt)
        benches.check_integrity()
        return outcome


def _get_ready(app: App, plan: BenchPlan, choice: ExecutorChoice) -> None:
    """Mistakes found before any problem runs: an unknown or (here) unavailable backend, a model that cannot be
    reached (missing extra or credential)."""
    registered = app.backend(plan.backend)  # also builds the plugin manager before any slot's thread uses it
    options = plan.settings.backend_options(registered.backend)
    if choice.kind == "local":
        availability = app.registry.availability(plan.backend, options)
        if not availability.available:
            raise KForgeError(f"backend {plan.backend!r} is not available here: {availability.reason}")
    if plan.solutions is None:
        llm = plan.settings.llm
        build_agent_llms(parse_model_spec(llm.model), parse_model_spec(llm.analyst_model or llm.model), llm)


def _execute(app: App, benches: BenchStore, info: BenchInfo, plan: BenchPlan, choice: ExecutorChoice,
             report: Report, halt: threading.Event | None = None) -> BenchReport:
    rows = benches.problems(info.id)
    done = {key for key, row in rows.items() if row.status == "done" and row.result is not None}
    problems = _problems(plan, done)
    jobs = _jobs(plan, problems, done, rows)
    where = choice.describe(app.backend(plan.backend).backend)
    report(f"bench {info.id}: {counted(len(problems), 'problem')} of {plan.suite} on {plan.backend}, {plan.source}; "
           f"{where}; artifacts in {info.bench_dir}")
    if done:
        report(f"resuming: {len(done)} finished problems are kept, not evaluated again")
    keeper = _Keeper(benches, info, plan, jobs, report, total=len(problems), finished=len(done))
    unsolved = [job for job in jobs if plan.solutions is not None and job.candidate is None]
    start = time.perf_counter()
    try:
        for job in unsolved:
            keeper.keep(ProblemResult(job.key, False, NO_SOLUTION, "no solution was found for this problem"))
        _run(app, plan, info, choice, [job for job in jobs if job not in unsolved], keeper.keep, halt)
    except OutputClosed:  # nobody reads the output any more: not a failure, and the store stays as it is
        raise
    except BaseException as exc:
        status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        benches.finish_bench(info.id, status, "interrupted by the user" if status == "interrupted" else str(exc))
        _outputs(benches, info, plan, where, keeper, time.perf_counter() - start)
        raise
    if halt is not None and halt.is_set():
        benches.finish_bench(info.id, "interrupted", "stopped by the user after the problems in hand")
    else:
        benches.finish_bench(info.id, "finished")
    return _outputs(benches, info, plan, where, keeper, time.perf_counter() - start)


def _problems(plan: BenchPlan, done: set[str]) -> list[SuiteProblem]:
    """The bench's problems as it was started with them; a finished one whose file changed since stops it."""
    problems = []
    for key, digest in plan.digests:
        problem = SuiteProblem(key, plan.suite / f"{key}.py")
        if not problem.path.is_file():
            raise KForgeError(f"problem {key} of this bench is gone: {problem.path} does not exist")
        if key in done and problem.digest != digest:
            raise KForgeError(f"the problem file {problem.path} changed since the bench evaluated it",
                              hint="start a new bench")
        problems.append(problem)
    return problems


def _jobs(plan: BenchPlan, problems: list[SuiteProblem], done: set[str], rows: dict[str, Any]) -> list[ProblemJob]:
    solutions = open_solutions(plan.solutions, problems, entry=plan.entry) if plan.solutions is not None else None
    return [ProblemJob(p.key, p.path, solutions.candidate_for(p) if solutions is not None else None,
                       rows[p.key].run_id if p.key in rows else None)
            for p in problems if p.key not in done]


def _run(app: App, plan: BenchPlan, info: BenchInfo, choice: ExecutorChoice, jobs: list[ProblemJob],
         keep: Callable[[ProblemResult], None], halt: threading.Event | None) -> None:
    if not jobs:
        return
    backend = app.backend(plan.backend).backend
    options = plan.settings.backend_options(backend)
    if choice.kind == "ray":
        spec = SlotSpec(backend, plan.settings, app.plugin_selection, options, info.id, plan.solutions is None,
                        plan.measure)
        RayExecutor(spec, choice.ray_address).run(jobs, keep, halt)
        return
    # on an accelerator, the suite is described ahead in a process of its own (``describer.py``), but for the first
    # problem, which a slot waits for with nothing else to do: described here, without the child's start
    loader = ProblemLoader(None if device_class_of(backend).host_cpu else Describer())
    loader.ahead((job.path for job in jobs), here=1)

    slots: list[DeviceSlot] = []  # each asks the others whether a problem's build is done

    def make_slot(index: int | None) -> DeviceSlot:
        return DeviceSlot(backend=backend, settings=plan.settings, plugins=app.plugin_selection, options=options,
                          device_index=index, label=slot_label(backend, index), loader=loader, measure=plan.measure,
                          peers=slots)

    if plan.solutions is not None:
        # every later solution is queued to build ahead; harness.prebuild_jobs of them build at once
        work, lookahead = DeviceSlot.evaluate, len(jobs) if plan.settings.harness.prebuild_jobs else 0
    else:
        work = functools.partial(run_agent, app=app, settings=plan.settings, bench_id=info.id,
                                 console=Console(highlight=False, soft_wrap=True, stderr=True), lock=threading.Lock())
        lookahead = 0
    try:
        LocalExecutor(make_slot, list(choice.devices), lookahead).run(jobs, work, keep, halt)
    finally:
        loader.close()


class _Keeper:
    """Keeps each result as it comes: its files in the bench directory, its row in the store, a line on screen."""

    def __init__(self, benches: BenchStore, info: BenchInfo, plan: BenchPlan, jobs: list[ProblemJob],
                 report: Report, *, total: int, finished: int) -> None:
        self.benches, self.info, self.plan, self.report = benches, info, plan, report
        self.jobs = {job.key: job for job in jobs}
        self.total, self.finished, self.now = total, finished, 0

    def keep(self, result: ProblemResult) -> None:
        job = self.jobs.get(result.key)
        directory = RunDirectory(problem_dir(self.info.bench_dir, result.key))
        if result.verdict is not None:
            directory.write(VERDICT, json.dumps(result.verdict, indent=2, allow_nan=False))
        if job is not None and job.candidate is not None:
            directory.write_files("solution", job.candidate.files)
        stored = to_json(dataclasses.replace(result, verdict=None))
        self.benches.problem_done(self.info.id, result.key, stored, result.run_id)
        self.finished += 1
        self.now += result.failure != NO_SOLUTION  # evaluated in this invocation
        self.report(f"[{self.finished}/{self.total}] {result.key}: {describe(result)}")


def describe(result: ProblemResult) -> str:
    """One line: the verdict, the time and speedups (or the failure), where and how long."""
    where = f" ({result.device}, {result.seconds:.1f} s)" if result.device else ""
    if result.correct:
        timed = f", {result.runtime_ms:.3f} ms" if result.runtime_ms is not None else ""
        speedups = "".join(f", {value:.2f}x vs {name}" for name, value in result.speedups)
        missing = result.missing_words() if result.runtime_ms is not None else ""
        flags = f" [flags: {', '.join(result.flags)}]" if result.flags else ""
        return f"correct{timed}{speedups}{missing}{flags}{where}"
    first = result.message.strip().splitlines()[0] if result.message.strip() else ""
    return f"{result.failure}{': ' + first[:160] if first else ''}{where}"


def _outputs(benches: BenchStore, info: BenchInfo, plan: BenchPlan, where: str, keeper: _Keeper,
             wall_s: float) -> BenchReport:
    results = _results(benches, info, plan)
    evaluated = keeper.now
    run = {"executor": where, "wall_seconds": wall_s, "evaluated_now": evaluated,
           "seconds_per_problem": wall_s / evaluated if evaluated else None}
    return write_bench_outputs(benches.get_bench(info.id), plan, results, run)


def _results(benches: BenchStore, info: BenchInfo, plan: BenchPlan) -> list[ProblemResult]:
    """The results kept in the store, in the suite's order."""
    rows = benches.problems(info.id)
    return [record_from_json(ProblemResult, rows[key].result) for key in plan.keys
            if key in rows and rows[key].status == "done" and rows[key].result is not None]
