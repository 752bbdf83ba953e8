"""A candidate's whole evaluation in one call: the static check, its stages in a worker (``evaluation.py``), the
decision, the worker's release, the captured output, and the Verdict with the baselines timed beside it.

The Harness hands over what the evaluation needs of it (an :class:`EvaluationSetup`) and a worker; it gets the
Verdict back. Nothing a candidate does raises here: every fault is a Verdict with a Failure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, ContextManager

from ...records import Backend, Candidate, CompileResult, Failure, Problem, SourceCheck
from ...settings import HarnessSettings
from ...speed_of_light import SolBound
from ...tolerances import output_tolerances
from ..protocol import Reply
from ..verdict import OutsideFigure, PrecisionReached, RuntimeStats, TimingMethod, Verdict
from .cache_quota import Added, CacheWatch, Removed, Snapshot
from .cgroups import LimitCounts
from .deadline import StageTimeouts
from .evaluation import StageOutcomes, decide, message_for_agent, run_stages, runtime_of
from .interleave import Window
from .outside_clock import check_candidate
from .phases import Phases
from .process import WorkerProcess
from .referee import Referee
from .speed_of_light import floor_flags, with_speed_of_light
from .static_check import check_source
from .timed_checks import TimedCallChecks


@dataclass(frozen=True)
class EvaluationSetup:
    """What evaluating one candidate needs from its Harness.

    :param timeouts: the limits of the candidate's stages (they follow the reference's time: the referee is ready).
    :param source_checks: the backend plugin's own static-check patterns.
    :param referee: judges the outputs the candidate's worker ships.
    :param timing_guard: keeps what else the harness runs quiet while the candidate is timed.
    :param release: hands a worker back to the pool, ``reusable`` or not; True when it was replaced.
    :param planned_method: the method timing would use, for candidates that were not timed.
    :param get_baselines_ready: starts the baseline worker getting ready, while the candidate is compiled.
    :param time_beside_baselines: times the candidate through its worker's call with the baselines beside it.
    :param baselines_after_verify: the baseline worker gets ready only once the candidate is verified (a problem
        large for the device: its copy of the inputs and its compiled baselines would sit beside the trials').
    :param bound: the problem's speed of light on the workers' device (``host/speed_of_light.py``); None: none.
    :param kept_under: where candidates' scratch directories lie when they are kept (``kforge eval --keep``: the
        captured output is copied into each); None: they are not kept.
    :param caches: what the candidate adds to the build caches is measured and cleared (None: not watched).
    """

    backend: Backend
    problem: Problem
    settings: HarnessSettings
    timeouts: StageTimeouts
    source_checks: tuple[SourceCheck, ...]
    referee: Referee
    timing_guard: Callable[[], ContextManager[None]]
    release: Callable[..., bool]
    planned_method: Callable[[], TimingMethod | None]
    get_baselines_ready: Callable[[], None]
    time_beside_baselines: Callable[[Callable[..., Reply]], Window]
    baselines_after_verify: bool = False
    bound: Callable[[], SolBound | None] = lambda: None
    kept_under: Path | None = None
    caches: CacheWatch | None = None


def evaluate_candidate(setup: EvaluationSetup, worker: WorkerProcess, candidate: Candidate, workdir: Path, *,
                       profile: bool, measure: bool, stop_at: float | None = None,
                       phases: Phases | None = None) -> Verdict:
    """Compile, verify and (with ``measure``) time ``candidate`` in ``worker``, profile it when asked and it is
    correct, and give its Verdict. The worker is released here, kept warm only when the candidate passed and the
    worker ended clean, before the candidate's captured output is read."""
    settings = setup.settings
    phases = phases or Phases()
    static_flags = check_source(candidate, setup.problem, settings.contract, setup.source_checks)
    after_verify = setup.baselines_after_verify  # then the baseline worker gets ready once the candidate is timed
    beside = _BesideBaselines(setup.time_beside_baselines, setup.get_baselines_ready if after_verify else None) \
        if measure and settings.baselines else None
    if beside is not None and not after_verify:  # the baseline worker gets ready while the candidate is verified
        setup.get_baselines_ready()
    with phases.phase("compile"):  # what the build caches hold now, and the worker's cgroup's counts
        before, counts = setup.caches.snapshot() if setup.caches is not None else None, worker.limit_counts()
    worker.calls.take()  # the calls it marked before this candidate are not this candidate's
    worker.checks = TimedCallChecks(settings) if measure else None
    out = run_stages(worker, candidate, workdir, settings, setup.timeouts, measure=measure, profile=profile,
                     timing_guard=setup.timing_guard, referee=setup.referee, stop_at=stop_at,
                     timing=beside.time if beside is not None else None, phases=phases)
    outside = _checked_from_outside(out, worker, beside.window if beside is not None else None, settings)
    bound = setup.bound()
    out.flags.extend(floor_flags(out, bound, settings))  # a figure below the physical floor: not the call's time
    with phases.phase("finish"):
        limit, reached, added = _limits_reached(out, worker, counts, setup.caches, before)
    flags, failure, message = decide(out, static_flags)
    if limit is not None:
        failure, message = limit, _limit_message(limit, reached, failure, message)
    with phases.phase("finish"):
        replaced = setup.release(worker, reusable=failure is None and out.clean)
        if added is not None and setup.caches is not None:  # the worker is idle or gone: nothing writes now
            _note_removed(out, setup.caches.remove(added, everything=bool(setup.caches.over_quota(added))))
    stdout, stderr = worker.output.candidate_output(settings.output_limit_kb)
    if setup.kept_under is not None:
        worker.output.keep(setup.kept_under, workdir)
    runtime, method = runtime_of(out)
    timed = failure is None and runtime is not None
    window = beside.window if timed and beside is not None else None
    figures = tuple((timer, RuntimeStats.from_samples(samples, runtime.statistic))
                    for timer, samples in out.timing.figures) \
        if timed else ()
    baselines, speedups, baseline_figures = _baselines_beside(window, runtime) if window is not None else ((), (), ())
    return with_speed_of_light(Verdict(
        candidate=candidate.label, candidate_digest=candidate.digest, backend=setup.backend.name,
        problem=setup.problem.name,
        compile=out.compile or CompileResult(ok=False, log=message, failure=failure or Failure.HARNESS),
        verify=out.verify, runtime=runtime if failure is None else None, baselines=baselines,
        speedups=speedups, flags=flags, failure=failure,
        message=message_for_agent(failure, message, stderr, flags),
        method=(method or setup.planned_method()) if measure else None,
        profile=out.profile, stdout=stdout, stderr=stderr, worker_replaced=replaced,
        baseline_errors=window.baselines.errors if window is not None else (),
        baseline_notes=window.baselines.notes if window is not None else (),
        precision=_precision(setup, out), figures=figures, baseline_figures=baseline_figures,
        baseline_sources=window.sources if window is not None else (),
        device_streams=out.timing.device_streams if timed else 0, phases=phases.record(),
        outside_clock=outside,
    ), bound)


def _checked_from_outside(out: StageOutcomes, worker: WorkerProcess, window: Window | None,
                          settings: HarnessSettings) -> tuple[OutsideFigure, ...]:
    """The candidate's timed calls as the KForge process saw them: every one checked (tampering where not), and
    its figures against this process's clock (``timing_mismatch`` where they disagree); the figures side by side."""
    checks, worker.checks = worker.checks, None
    calls = worker.calls.take()
    if checks is None or out.timing is None:
        return ()
    out.flags.extend(checks.conclude(calls))
    figures, flags = check_candidate(out.timing, calls, window.baseline_blocks if window is not None else (),
                                     settings)
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


def _limit_message(limit: Failure, reached: str, failure: Failure | None, message: str) -> str:
    """The verdict's message for a candidate that reached a limit: the limit first, then what it failed with."""
    if failure is limit:
        return message if reached in message else f"{reached}\n{message}"
    if limit is Failure.OUT_OF_MEMORY and failure in (Failure.EXIT, Failure.CRASH):
        return reached  # how the worker died, with the sandbox's init among the killed, says no more
    return f"{reached}\n(and: {message})" if failure is not None and message else reached


def _note_removed(out: StageOutcomes, removed: Removed) -> None:
    if removed.files and out.verify is not None:
        note = (f"removed {removed.files} file(s) ({removed.bytes / (1 << 20):.1f} MiB) the candidate left in the "
                f"build caches that are no build: {', '.join(removed.examples)}")
        out.verify = replace(out.verify, notes=(*out.verify.notes, note))


class _BesideBaselines:
    """Times the candidate with the baselines beside it, and keeps the window for the verdict."""

    def __init__(self, measure: Callable[[Callable[..., Reply]], Window],
                 get_ready: Callable[[], None] | None = None) -> None:
        self._measure = measure
        self._get_ready = get_ready  # the baseline worker getting ready, when it waits for timing
        self.window: Window | None = None

    def time(self, call: Callable[..., Reply]) -> Reply:
        if self._get_ready is not None:
            self._get_ready()
        self.window = self._measure(call)
        return self.window.failure or Reply(value=self.window.candidate)


def _baselines_beside(window: Window, runtime: RuntimeStats) -> tuple[tuple, tuple, tuple]:
    """The baselines' runtimes measured in the candidate's window (by the candidate's statistic), the candidate's
    speedup over each, and each baseline's figures by timer."""
    statistic = runtime.statistic
    baselines = tuple((name, RuntimeStats.from_samples(s, statistic)) for name, s in window.baselines.samples_ms)
    speedups = tuple((name, stats.figure / runtime.figure) for name, stats in baselines if runtime.figure > 0)
    baseline_figures = tuple((name, tuple((timer, RuntimeStats.from_samples(s, statistic)) for timer, s in by_timer))
                             for name, by_timer in window.baselines.figures)
    return baselines, speedups, baseline_figures


def _precision(setup: EvaluationSetup, out: StageOutcomes) -> PrecisionReached:
    """The contract the candidate was held to (with the tolerances the workers resolved), and what it reached."""
    settings = setup.settings
    return PrecisionReached(
        contract=settings.precision,
        bits=out.verify.precision_bits if out.verify is not None else None,
        switches=out.finish.switches if out.finish is not None else (),
        tolerances=output_tolerances(settings, (t.dtype for o in setup.problem.outputs for t in o.tensors()),
                                     setup.backend.default_tolerance),
    )
