"""One candidate from its build ahead to its Verdict, in order, in one function (:func:`evaluate_candidate`), as
pytest's ``runtestprotocol`` owns a test's setup, call and teardown: the source read, the build ahead waited for, the
referee ready with the problem's reference, a worker, the static check, the stages in the worker (``evaluation.py``)
with the baselines timed beside the candidate (``baselines_window.py``), the checks from outside the worker, the
limits it reached, the decision, the worker's release, the captured output, and the Verdict (``verdict_parts.py``).

The Harness hands over the parts an evaluation uses (an :class:`EvaluationSetup`: its workers, referee, builds
ahead, baselines' window, ...) and gets the Verdict back. Nothing a candidate does raises here: every fault is a
Verdict with a Failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from ...candidate_module import syntax_error
from ...records import Backend, Candidate, CompileResult, Failure, Problem, SourceCheck
from ...settings import HarnessSettings
from ..verdict import OutsideFigure, Verdict
from .cache_quota import Added, CacheWatch, Removed, Snapshot
from .cgroups import LimitCounts
from .deadline import StageTimeouts
from .evaluation import StageOutcomes, run_stages
from .baselines_window import BaselinesWindow, CandidateBeside
from .outside_clock import check_candidate
from .phases import Phases
from .pool import WorkerPool
from .prebuild import Prebuilder
from .process import WorkerProcess
from .quiet import QuietForTiming
from .referee import Referee
from .speed_of_light import Bounds, floor_flags, with_speed_of_light
from .static_check import check_source
from .timed_checks import TimedCallChecks
from .verdict_parts import (
    baselines_beside, decide, figures_of, launch_bound_of, limit_message, message_for_agent, planned_method,
    precision, runtime_of, unparsed_verdict,
)


@dataclass(frozen=True)
class EvaluationSetup:
    """The parts of a Harness that evaluating one candidate of its current problem uses.

    :param problem: the problem, as the harness knows it; :param seen: as its workers find it (``scratch_layout``).
    :param source_checks: the backend plugin's own static-check patterns.
    :param prebuilder: the builds ahead; the candidate's is waited for.
    :param referee: judges the outputs the candidate's worker ships; its reference gives the stages' limits.
    :param workers: the worker pool: the candidate's worker comes from it and goes back to it (or is replaced).
    :param baselines: the baselines' window, measured beside the candidate's timed runs.
    :param quiet: keeps what else the harness runs quiet while the candidate is timed.
    :param bounds: each problem's speed of light on the workers' device.
    :param statistic: the device's headline statistic (``Device.headline_statistic``), for a method not used.
    :param numbers: numbers the candidates' scratch directories, in the order they are evaluated.
    :param kept_under: where candidates' scratch directories lie when they are kept (``kforge eval --keep``: the
        captured output is copied into each); None: they are not kept.
    :param caches: what the candidate adds to the build caches is measured and cleared (None: not watched).
    """

    backend: Backend
    problem: Problem
    seen: Problem
    settings: HarnessSettings
    source_checks: tuple[SourceCheck, ...]
    prebuilder: Prebuilder
    referee: Referee
    workers: WorkerPool
    baselines: BaselinesWindow
    quiet: QuietForTiming
    bounds: Bounds
    statistic: str
    numbers: Iterator[int]
    kept_under: Path | None = None
    caches: CacheWatch | None = None


def evaluate_candidate(setup: EvaluationSetup, candidate: Candidate, *, profile: bool, measure: bool,
                       stop_at: float | None = None, phases: Phases | None = None) -> Verdict:
    """Compile, verify and (with ``measure``) time ``candidate``, profile it when asked and it is correct, and give
    its Verdict. ``stop_at`` (a ``time.monotonic()`` time: a problem's budget) ends a stage still running then as a
    timeout; ``phases`` gets the seconds of each phase and tells its observer each step. The worker is released
    here, kept warm only when the candidate passed and the worker ended clean, before the captured output is read.
    """
    settings, workers = setup.settings, setup.workers
    phases = phases or Phases()
    unparsed = syntax_error(candidate)
    if unparsed is not None:  # said at once: no worker, reference or baseline is needed to read the source
        return unparsed_verdict(candidate, unparsed, backend=setup.backend, problem=setup.problem.name,
                                contract=settings.precision,
                                tolerances=precision(settings, setup.problem, setup.backend).tolerances,
                                method=planned_method(workers.facts, settings, setup.statistic) if measure else None)
    if measure and settings.baselines:  # its start and the model's construction overlap the referee's and the
        setup.baselines.build_on_host(setup.seen)  # candidate's; the model reaches the device with get_ready
    if not workers.large(setup.problem):
        workers.start_ahead()  # the candidate's worker starts beside the referee
    with phases.phase("prebuild"):
        ahead = setup.prebuilder.wait(candidate)  # its compile stage then finds what was built ahead
    with phases.phase("reference"):  # the stages' limits follow the reference: the referee is ready first
        setup.referee.ready()
        timeouts = StageTimeouts.derive(settings, setup.referee.reference_s or 0.0)
        # a problem large for the device: the baseline worker gets ready once the candidate is verified (its copy
        # of the inputs and its compiled baselines would sit beside the trials')
        after_verify = workers.large(setup.problem)
    with phases.phase("worker"):
        worker = workers.acquire_for_candidate()
    workdir = _scratch_dir(candidate, worker, next(setup.numbers))
    static_flags = check_source(candidate, setup.problem, settings.contract, setup.source_checks)
    beside = setup.baselines.beside(setup.seen, timeouts, phases, ready_first=after_verify, calls=worker.calls) \
        if measure and settings.baselines else None
    if beside is not None and not after_verify:  # the baseline worker gets ready while the candidate is verified
        setup.baselines.get_ready(setup.seen)
    with phases.phase("compile"):  # what the build caches hold now, and the worker's cgroup's counts
        before, counts = setup.caches.snapshot() if setup.caches is not None else None, worker.limit_counts()
    worker.calls.take()  # the calls it marked before this candidate are not this candidate's
    worker.checks = TimedCallChecks(settings) if measure else None
    setup.referee.on_judged = phases.trials(settings.seed, settings.trials)
    try:
        out = run_stages(worker, candidate, workdir, settings, timeouts, measure=measure, profile=profile,
                         timing_guard=setup.quiet, referee=setup.referee, stop_at=stop_at,
                         timing=beside.time if beside is not None else None, phases=phases)
    finally:
        setup.referee.on_judged = None
    outside = _checked_from_outside(out, worker, beside, settings)
    bound = setup.bounds.of(setup.problem, workers.facts)
    out.flags.extend(floor_flags(out, bound, settings))  # a figure below the physical floor: not the call's time
    with phases.phase("finish"):
        limit, reached, added = _limits_reached(out, worker, counts, setup.caches, before)
    flags, failure, message = decide(out, static_flags)
    if limit is not None:
        failure, message = limit, limit_message(limit, reached, failure, message)
    with phases.phase("finish"):
        replaced = workers.release(worker, reusable=failure is None and out.clean)
        if added is not None and setup.caches is not None:  # the worker is idle or gone: nothing writes now
            _note_removed(out, setup.caches.remove(added, everything=bool(setup.caches.over_quota(added))))
    stdout, stderr = worker.output.candidate_output(settings.output_limit_kb)
    if setup.kept_under is not None:
        worker.output.keep(setup.kept_under, workdir)
    verdict = _verdict(setup, candidate, out, beside, flags, failure, message, measure=measure, stdout=stdout,
                       stderr=stderr, replaced=replaced, outside=outside, phases=phases)
    verdict = with_speed_of_light(verdict, bound)
    return replace(verdict, built_ahead=ahead.describe()) if ahead is not None else verdict


def _scratch_dir(candidate: Candidate, worker: WorkerProcess, number: int) -> Path:
    """The candidate's scratch directory, in its worker's home: the only place of the scratch root that worker
    writes (``scratch_layout``)."""
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", candidate.label)[:40] or "candidate"
    return worker.home / "candidates" / f"{number:04d}-{label}-{candidate.digest[:8]}"


def _checked_from_outside(out: StageOutcomes, worker: WorkerProcess, beside: CandidateBeside | None,
                          settings: HarnessSettings) -> tuple[OutsideFigure, ...]:
    """The candidate's timed calls as the KForge process saw them: every one checked (tampering where not), and
    its figures against this process's clock (``timing_mismatch`` where they disagree), with baseline calls held
    as long as its own where the window's looked too short to tell; the figures side by side."""
    checks, worker.checks = worker.checks, None
    calls = worker.calls.take()
    if checks is None or out.timing is None:
        return ()
    out.flags.extend(checks.conclude(calls))
    window = beside.window if beside is not None else None
    figures, flags = check_candidate(out.timing, calls, window.baseline_blocks if window is not None else (),
                                     settings, beside.held_calls if beside is not None else None)
    out.flags.extend(flags)
    return figures


def _limits_reached(out: StageOutcomes, worker: WorkerProcess, counts: LimitCounts, caches: CacheWatch | None,
                    before: Snapshot | None) -> tuple[Failure | None, str, Added | None]:
    """The limit the candidate reached, as its failure and a sentence naming it (None and "" for none), and what
    it added to the build caches. ``resource_limit``: its worker's cgroup refused a fork, the worker found a
    scratch tmpfs left full, the candidate added more than the cache quota; ``out_of_memory``: the cgroup's memory
    limit killed a process (the worker's exit says so too when it was the worker). A worker that reached one is
    not reused."""
    pids, memory = worker.limits_hit_since(counts)
    reached = [pids, out.finish.limit if out.finish is not None else ""]
    added = caches.added_since(before) if caches is not None and before is not None else None
    if added is not None and caches is not None:
        reached.append(caches.over_quota(added))
    sentence = "; ".join(part for part in reached if part)
    if sentence or memory:
        out.clean = False
    if sentence:
        return Failure.RESOURCE_LIMIT, sentence, added
    return (Failure.OUT_OF_MEMORY, memory, added) if memory else (None, "", added)


def _note_removed(out: StageOutcomes, removed: Removed) -> None:
    if removed.files and out.verify is not None:
        note = (f"removed {removed.files} file(s) ({removed.bytes / (1 << 20):.1f} MiB) the candidate left in the "
                f"build caches that are no build: {', '.join(removed.examples)}")
        out.verify = replace(out.verify, notes=(*out.verify.notes, note))


def _verdict(setup: EvaluationSetup, candidate: Candidate, out: StageOutcomes, beside: CandidateBeside | None,
             flags: tuple, failure: Failure | None, message: str, *, measure: bool, stdout: str, stderr: str,
             replaced: bool, outside: tuple[OutsideFigure, ...], phases: Phases) -> Verdict:
    """The Verdict: what the stages gave, with the baselines of the candidate's window where it was timed."""
    timed = failure is None and out.timing is not None and bool(out.timing.samples_ms)
    window = beside.window if timed and beside is not None else None
    runtime, method = runtime_of(out, window)
    bound = launch_bound_of(out.timing, window) if timed else ()
    figures = figures_of(out, bound) if timed else ()
    baselines, speedups, baseline_figures = baselines_beside(window, runtime, out.timing, bound) \
        if window is not None else ((), (), ())
    return Verdict(
        candidate=candidate.label, candidate_digest=candidate.digest, backend=setup.backend.name,
        problem=setup.problem.name,
        compile=out.compile or CompileResult(ok=False, log=message, failure=failure or Failure.HARNESS),
        verify=out.verify, runtime=runtime if failure is None else None, baselines=baselines,
        speedups=speedups, flags=flags, failure=failure, message=message_for_agent(failure, message, stderr, flags),
        method=(method or planned_method(setup.workers.facts, setup.settings, setup.statistic)) if measure else None,
        profile=out.profile, stdout=stdout, stderr=stderr, worker_replaced=replaced,
        baseline_errors=window.baselines.errors if window is not None else (),
        baseline_notes=window.baselines.notes if window is not None else (),
        precision=precision(setup.settings, setup.problem, setup.backend, out), figures=figures,
        baseline_figures=baseline_figures, baseline_sources=window.sources if window is not None else (),
        device_streams=out.timing.device_streams if timed else 0, phases=phases.record(),
        outside_clock=outside,
    )
