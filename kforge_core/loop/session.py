"""Starting and resuming runs: everything ``kforge run`` puts together around the :class:`~kforge_core.loop.AgentLoop`:
the checks before a run starts, the store, the backend's lowering, the LLMs, the harness, and the outputs at the end.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents import AnalysisAgent, GenerationAgent, PrecisionTerms
from ..app import App
from ..codec import record_from_json, to_json
from ..errors import KForgeError
from ..llm import ChatClient, build_agent_llms, parse_model_spec
from ..problem import load_problem
from ..prompts import PromptTemplates
from ..records import Lowering, Problem
from ..registry import RegisteredBackend
from ..report import RunOutputs, read_outputs, write_outputs
from ..retrieval import remember_run
from ..settings import Settings
from ..tolerances import output_tolerances
from ..store import RunDirectory, RunInfo, RunStore
from ..store.locks import held
from ..store.attempts import Place
from .agent_loop import AgentLoop
from .best_at_shapes import time_best_at_shapes
from .budget import Budget, RunClock
from .evaluator import EvaluatorFactory, open_harness
from .journal import Journal
from .plan import RunPlan, plan_run
from .population import Activity
from .progress import Progress
from .run_record import RunRecord
from .steps import LoopSteps
from .user_images import user_images

__all__ = ["RunPlan", "RunResult", "new_run_id", "plan_run", "resume_run", "start_run"]


@dataclass(frozen=True)
class RunResult:
    run_id: str
    stop_reason: str
    outputs: RunOutputs

    @property
    def found_correct(self) -> bool:
        return self.outputs.report.best is not None


def new_run_id() -> str:
    """The start time and a few random characters: sortable, and unique enough for one runs directory."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


# --------------------------------------------------------------------------------------------- start / resume


@dataclass(frozen=True)
class _Ready:
    """What is checked before a run is created or claimed, so a mistake (a missing key, an unavailable backend)
    is reported without leaving a failed run behind."""

    problem: Problem
    backend: RegisteredBackend
    options: Any
    generation_llm: Any
    analysis_llm: Any


def _get_ready(app: App, plan: RunPlan, replies_received: dict[str, int] | None = None) -> _Ready:
    # what the user typed (the backend's name, a replay script, a credential) is checked before the problem loads
    registered = app.backend(plan.backend)
    generation_llm, analysis_llm = build_agent_llms(
        parse_model_spec(plan.model), parse_model_spec(plan.analyst_model), plan.settings.llm,
        replies_received=replies_received,
    )
    problem = load_problem(plan.problem_path)
    options = plan.settings.backend_options(registered.backend)
    availability = app.registry.availability(plan.backend, options)
    if not availability.available:
        raise KForgeError(f"backend {plan.backend!r} is not available here: {availability.reason}")
    return _Ready(problem, registered, options, generation_llm, analysis_llm)


def start_run(
    app: App, plan: RunPlan, store: RunStore, progress: Progress, *, evaluator_factory: EvaluatorFactory = open_harness,
    run_id: str | None = None,
) -> RunResult:
    """Start the run ``plan`` asks for, with ``run_id`` (by default a new one, see :func:`new_run_id`)."""
    ready = _get_ready(app, plan)
    problem = ready.problem
    run = store.create_run(
        run_id or new_run_id(), problem_name=problem.name, problem_path=str(problem.path),
        problem_digest=problem.digest, backend=plan.backend, model=plan.model, analyst_model=plan.analyst_model,
        config=plan.to_json(), precision=plan.settings.harness.precision,
    )
    with held(store.runs_dir, "run", run.id):
        result = _execute(app, store, run, plan, ready, progress, evaluator_factory, resumed=False)
    store.check_integrity()  # a candidate may have damaged it: never a success then
    return result


def resume_run(
    app: App, store: RunStore, run_id: str, progress: Progress, *, budget: dict[str, Any] | None = None,
    precision: str | None = None, evaluator_factory: EvaluatorFactory = open_harness,
) -> RunResult:
    """Continue run ``run_id`` as it was started. ``precision``: a contract the caller asks for (``--precision``);
    a run continues only under the contract it was started with, so another one is refused.

    A finished run resumed without a ``budget`` is only shown: there is nothing left to do in it. Otherwise the
    recorded steps are replayed and the run's record changes only once a new step begins (:class:`RunRecord`)."""
    run = store.get_run(run_id)  # an unknown id is said before any lock is taken
    if run.status == "finished" and not budget:
        _check_precision(run, precision)
        progress.event(f"run {run_id} is finished ({run.stop_reason}); nothing is resumed unless a budget is raised "
                       "(--optimization-rounds, --max-llm-calls, ...)")
        return RunResult(run_id, run.stop_reason, read_outputs(store, run_id))
    with held(store.runs_dir, "run", run_id):
        result = _resume(app, store, run_id, progress, budget, precision, evaluator_factory)
    store.check_integrity()
    return result


def _resume(app: App, store: RunStore, run_id: str, progress: Progress, budget: dict[str, Any] | None,
            precision: str | None, evaluator_factory: EvaluatorFactory) -> RunResult:
    run = store.get_run(run_id)
    if run.alive:
        raise KForgeError(f"run {run_id} is still running (process {run.pid})")
    _check_precision(run, precision)
    plan = RunPlan.from_json(run.config, source=f"run {run_id}", budget=budget or {})
    ready = _get_ready(app, plan, store.replies_received(run_id))
    if ready.problem.digest != run.problem_digest:
        raise KForgeError(f"the problem file {plan.problem_path} changed since run {run_id} started")
    return _execute(app, store, run, plan, ready, progress, evaluator_factory, resumed=True)


def _check_precision(run: RunInfo, precision: str | None) -> None:
    if precision is not None and precision != run.precision:
        raise KForgeError(
            f"run {run.id} was started under the {run.precision} precision contract; --resume continues it under "
            f"that contract, not {precision}",
            hint=f"start a new run with --precision {precision}: its speedups are not comparable with this run's")


def _execute(
    app: App, store: RunStore, run: RunInfo, plan: RunPlan, ready: _Ready, progress: Progress,
    evaluator_factory: EvaluatorFactory, *, resumed: bool,
) -> RunResult:
    record = RunRecord(store, run, resumed=resumed)
    journal = Journal(store, run.id, RunDirectory(run.run_dir), RunClock(), before_new_step=record.before_new_step)
    _announce(run, plan, journal, progress)
    try:
        stop_reason = _work(app, plan, ready, journal, progress, evaluator_factory, record)
    except KeyboardInterrupt:
        if record.changed:  # a stop during the replay leaves the run as it was
            store.finish(run.id, "interrupted", "interrupted by the user")
            write_outputs(store, run.id)
        raise
    except Exception as exc:
        if record.changed:
            store.finish(run.id, "failed",
                         str(exc) if isinstance(exc, KForgeError) else f"{type(exc).__name__}: {exc}")
            write_outputs(store, run.id)
        raise
    if record.unchanged_finish:  # a finished run whose replay reached its end again: nothing new to keep
        return RunResult(run.id, run.stop_reason, read_outputs(store, run.id))
    store.finish(run.id, "finished", stop_reason)
    _remember(store, run.id, progress)
    return RunResult(run.id, stop_reason, write_outputs(store, run.id))


def _remember(store: RunStore, run_id: str, progress: Progress) -> None:
    """Add the run's best kernel to the kernel index, so later runs can be shown it; a run's result stands even
    when the index cannot be written."""
    try:
        progress.event(remember_run(store, run_id))
    except KForgeError as exc:
        progress.event(f"kernel index: not updated: {exc}")


def _announce(run: RunInfo, plan: RunPlan, journal: Journal, progress: Progress) -> None:
    progress.event(f"run {run.id}: {run.problem_name} on {plan.backend}, {plan.settings.harness.precision} "
                   f"precision contract; artifacts in {run.run_dir}")
    models = {"generation": plan.model, "analysis": plan.analyst_model}
    for agent, spec in models.items():
        if spec.startswith("replay:"):
            progress.event(f"{agent} agent: REPLAY of {spec[len('replay:'):]} (scripted replies; no model is called)")
        elif spec.startswith("corpus:"):
            progress.event(f"{agent} agent: CORPUS of {spec[len('corpus:'):]} (stand-in kernels; no model is called)")
        else:
            progress.event(f"{agent} agent: {spec}")
    if journal.recorded_steps:
        progress.event(f"resuming: {journal.recorded_steps} recorded steps are replayed from the store, not redone; "
                       f"the run stays under the {plan.settings.harness.precision} precision contract it started with")


def _work(
    app: App, plan: RunPlan, ready: _Ready, journal: Journal, progress: Progress, evaluator_factory: EvaluatorFactory,
    record: RunRecord,
) -> str:
    settings, problem = plan.settings, ready.problem
    lowering = _lowering(app, journal, ready.backend, problem, ready.options, settings.cache_dir)
    _record_references(journal, plan, progress)
    templates = PromptTemplates(settings.prompts_dir)
    budget = Budget(settings.budget, journal.clock)
    precision = _precision_terms(settings, problem, ready.backend)
    factory_args = (ready.backend, problem, settings, ready.options, app.plugin_selection, None)
    began = time.monotonic()
    with contextlib.ExitStack() as stack:
        evaluators = [stack.enter_context(evaluator_factory(*factory_args, device))
                      for device in (settings.loop.devices or (None,))]
        steps = LoopSteps(
            journal=journal, run_dir=journal.run_dir,
            generation=GenerationAgent(templates, problem, lowering, plan.reference, precision=precision,
                                       candidate_class=settings.harness.candidate_class,
                                       references=plan.references,
                                       check_shapes=settings.harness.shapes != "off"),
            analysis=AnalysisAgent(templates, problem, lowering,
                                   user_images(journal.run_dir, settings.analysis.images), precision=precision),
            generation_client=ChatClient(ready.generation_llm, parse_model_spec(plan.model), settings.llm),
            analysis_client=ChatClient(ready.analysis_llm, parse_model_spec(plan.analyst_model), settings.llm),
            evaluators=evaluators, budget=budget, max_output_tokens=settings.llm.max_output_tokens,
        )
        activity = Activity()
        loop = AgentLoop(steps, settings.budget, progress, on_new_best=record.new_best, loop=settings.loop,
                         activity=activity)
        result = loop.run()
        if settings.harness.time_shapes and result.best is not None and problem.shapes.variants:
            time_best_at_shapes(journal, evaluators[0], result.best, problem, progress)
    if settings.loop.width > 1 or settings.loop.devices:
        progress.event(_search_line(activity, budget, time.monotonic() - began, len(evaluators)))
    progress.event(f"stopped: {result.stop_reason}")
    return result.stop_reason


def _search_line(activity: Activity, budget: Budget, elapsed_s: float, devices: int) -> str:
    """How busy the search kept the devices and the model, in this session."""
    busy = ", ".join(f"device {i} {s / elapsed_s:.0%}" for i, s in sorted(activity.busy_s.items())) if elapsed_s \
        else "-"
    return (f"search: {activity.evaluations} candidates evaluated on {devices} device(s) in this session "
            f"(busy: {busy or 'none'}); at most {budget.most_in_flight} LLM requests in flight")


def _precision_terms(settings: Settings, problem: Problem, registered: RegisteredBackend) -> PrecisionTerms:
    """The run's precision contract and the tolerances its candidates are held to, as the prompts state them."""
    harness = settings.harness
    return PrecisionTerms(harness.contract, output_tolerances(
        harness, (t.dtype for o in problem.outputs for t in o.tensors()), registered.backend.default_tolerance))


def _lowering(
    app: App, journal: Journal, registered: Any, problem: Problem, options: Any, cache_dir: Path
) -> Lowering:
    """The backend's lowering, asked once per run and kept, so a resumed run prompts exactly as before."""
    def work(artifact_dir: str) -> tuple[dict[str, Any], None]:
        lowering = app.registry.hooks(registered.name).caller("lower")(
            backend=registered.backend, problem=problem, options=options, cache_dir=cache_dir
        )
        if lowering is None:
            raise KForgeError(f"backend {registered.name!r} ({registered.distribution}) provides no kforge_lower")
        journal.run_dir.write(f"{artifact_dir}/lowering.json", json.dumps(to_json(lowering), indent=2))
        return to_json(lowering), None

    step = journal.step("lowering", registered.name, Place("setup"), "lowering", work)
    return record_from_json(Lowering, step.data)


def _record_references(journal: Journal, plan: RunPlan, progress: Progress) -> None:
    """The retrieved kernels the generation prompts show, in the journal (a run without any records nothing)."""
    if not plan.references:
        return

    def work(artifact_dir: str) -> tuple[dict[str, Any], None]:
        return {"references": [r.summary() for r in plan.references]}, None

    journal.step("references", "retrieval", Place("setup"), "references", work)
    for ref in plan.references:
        kind = "warm start" if ref.warm_start else "reference"
        progress.event(f"{kind}: {ref.label} ({ref.figures}), score {ref.score:.2f}")

