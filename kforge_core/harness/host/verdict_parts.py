"""What a candidate's evaluation comes to, from what its stages reported: the decision (its flags, its failure and
the message for the agent), the limits it reached, its runtime and the baselines measured beside it, the precision
it reached; the method timing would have used, for a candidate that was not timed; and the verdict of a candidate
whose source does not parse. Plain functions of the outcomes: nothing here talks to a process."""

from __future__ import annotations

import dataclasses
import re

from ...records import Backend, Candidate, CompileResult, Failure, Flag, Problem
from ...settings import HarnessSettings
from ...tolerances import output_tolerances
from .. import flags as F
from ..captured import tail_lines
from ..protocol import DeviceFacts, TimingOutcome
from ...timing.launch_bound import FASTEST, launch_bound_timers, statistic_of
from ...timing.launch_bound import note as launch_bound_note
from ...timing.timed_runs import CHECKS_NOTE
from ..verdict import PrecisionReached, RuntimeStats, TimingMethod, Verdict
from .evaluation import StageOutcomes
from .baselines_window import Window


def decide(out: StageOutcomes, static_flags: tuple[Flag, ...]) -> tuple[tuple[Flag, ...], Failure | None, str]:
    """All flags, the failure (None when correct) and the message for the agent."""
    flags = F.merge_flags([*out.flags, *static_flags])
    if out.failure is not None:
        return flags, out.failure, out.message
    tampering = next((f for f in flags if f.code == F.TAMPERING and f.blocking), None)
    if tampering is not None:  # the harness's own checks may have been fooled: nothing else can be trusted
        return flags, Failure.CHEAT, f"rejected: tampering: {tampering.message} (no other result can be trusted)"
    if out.compile is not None and not out.compile.ok:
        return flags, out.compile.failure, f"{out.compile.failure.value}: {out.compile.log}"
    if out.verify is not None and not out.verify.correct:
        return flags, out.verify.failure, out.verify.message
    blocking = [f for f in flags if f.blocking]
    if blocking:
        return flags, Failure.CHEAT, "rejected: " + F.describe_blocking(blocking)
    if out.verify is None:
        return flags, Failure.HARNESS, "the candidate was not verified"
    return flags, None, out.verify.message


def message_for_agent(failure: Failure | None, message: str, stderr: str, flags: tuple[Flag, ...]) -> str:
    """One paragraph: what went wrong (or right), the last words on stderr for crashes, the flags."""
    parts = [message.strip()]
    if failure in (Failure.CRASH, Failure.EXIT, Failure.TIMEOUT, Failure.OUT_OF_MEMORY, Failure.DEVICE_FAULT,
                   Failure.RESOURCE_LIMIT) \
            and stderr.strip():
        parts.append(_stderr_excerpt(_without_profiler_noise(stderr)))
    others = [f for f in flags if f.code not in message]
    if others:
        parts.append("flags: " + "; ".join(f"{f.code}{' (blocking)' if f.blocking else ''}: {f.message}"
                                           for f in others))
    return "\n".join(p for p in parts if p)


def _stderr_excerpt(stderr: str) -> str:
    """For a crash, Python's fault handler dump (most recent call first: the candidate's frame is at the top);
    otherwise the last lines."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Fatal Python error"):
            return "stderr (Python's fault handler):\n" + "\n".join(lines[i:i + 12])
    return "stderr ends with:\n" + tail_lines(stderr, 15)


def _without_profiler_noise(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not re.match(r"^(USDT|STAGE):", line))


def runtime_of(out: StageOutcomes, window: Window | None = None) -> tuple[RuntimeStats | None, TimingMethod | None]:
    """The candidate's headline runtime and the method it was timed by: the method's statistic, or the fastest run
    where the headline timer's figure counted the host's launch on either side of the window
    (``timing/launch_bound.py``, which the method's notes then quote)."""
    if out.timing is None or not out.timing.samples_ms:
        return None, None
    method = out.timing.method
    if method.headline in launch_bound_of(out.timing, window):
        method = dataclasses.replace(method, statistic=FASTEST)
    method = method.noted(launch_bound_note(out.timing.launch_bound,
                                            window.baselines.launch_bound if window is not None else ()))
    return RuntimeStats.from_samples(out.timing.samples_ms, method.statistic), method


def launch_bound_of(timing: TimingOutcome, window: Window | None) -> tuple[str, ...]:
    """The timers whose figure counted the host's launch on either side of ``window`` (``timing/launch_bound.py``):
    taken at their fastest run on both."""
    return launch_bound_timers(timing.launch_bound, window.baselines.launch_bound if window is not None else ())


def figures_of(out: StageOutcomes, bound: tuple[str, ...]) -> tuple[tuple[str, RuntimeStats], ...]:
    """The candidate's figure under each timer: by the device's statistic, or the fastest run under a timer of
    ``bound`` (:func:`launch_bound_of`)."""
    return tuple((timer, RuntimeStats.from_samples(samples, statistic_of(timer, out.timing.method.statistic, bound)))
                 for timer, samples in out.timing.figures)


def limit_message(limit: Failure, reached: str, failure: Failure | None, message: str) -> str:
    """The verdict's message for a candidate that reached a limit: the limit first, then what it failed with."""
    if failure is limit:
        return message if reached in message else f"{reached}\n{message}"
    if limit is Failure.OUT_OF_MEMORY and failure in (Failure.EXIT, Failure.CRASH):
        return reached  # how the worker died, with the sandbox's init among the killed, says no more
    return f"{reached}\n(and: {message})" if failure is not None and message else reached


def baselines_beside(window: Window, runtime: RuntimeStats, timing: TimingOutcome, bound: tuple[str, ...]
                     ) -> tuple[tuple, tuple, tuple]:
    """The baselines' runtimes measured in the candidate's window (by the candidate's headline statistic), the
    candidate's speedup over each, and each baseline's figures by timer (by the statistic the candidate's figure
    under that timer was taken by: the fastest run under a timer of ``bound``, :func:`figures_of`)."""
    statistic = runtime.statistic
    baselines = tuple((name, RuntimeStats.from_samples(s, statistic)) for name, s in window.baselines.samples_ms)
    speedups = tuple((name, stats.figure / runtime.figure) for name, stats in baselines if runtime.figure > 0)
    baseline_figures = tuple((name, tuple((timer, RuntimeStats.from_samples(s, statistic_of(
        timer, timing.method.statistic, bound))) for timer, s in by_timer)) for name, by_timer in window.baselines.figures)
    return baselines, speedups, baseline_figures


def precision(settings: HarnessSettings, problem: Problem, backend: Backend,
              out: StageOutcomes | None = None) -> PrecisionReached:
    """The contract the candidate was held to (with the tolerances the workers resolved), and what it reached."""
    return PrecisionReached(
        contract=settings.precision,
        bits=out.verify.precision_bits if out is not None and out.verify is not None else None,
        switches=out.finish.switches if out is not None and out.finish is not None else (),
        tolerances=output_tolerances(settings, (t.dtype for o in problem.outputs for t in o.tensors()),
                                     backend.default_tolerance),
    )


def planned_method(facts: DeviceFacts | None, settings: HarnessSettings, statistic: str) -> TimingMethod | None:
    """The method timing would use on the device ``facts`` describe (None before a worker said), for verdicts of
    candidates that were not timed; ``statistic``: ``Device.headline_statistic``."""
    if facts is None:
        return None
    return TimingMethod(
        device=facts.device, warmup=settings.warmup, repetitions=settings.repetitions,
        l2_flush_bytes=facts.flush_bytes, synchronize=facts.synchronize, timer=facts.timer, fresh_inputs=True,
        notes=f"not timed; {CHECKS_NOTE.format(elements=settings.timed_check_elements)}",
        statistic=statistic,
    )


def unparsed_verdict(candidate: Candidate, error: str, *, backend: Backend, problem: str, contract: str,
                     tolerances: tuple[tuple[str, float, float], ...] = (), method: TimingMethod | None = None
                     ) -> Verdict:
    """The verdict of a candidate whose source does not parse (``error``, from ``syntax_error``), as its compile
    stage would give it; nothing was run for it."""
    failure = Failure.SYNTAX
    return Verdict(
        candidate=candidate.label, candidate_digest=candidate.digest, backend=backend.name, problem=problem,
        compile=CompileResult(ok=False, log=error, failure=failure), verify=None, runtime=None, baselines=(),
        speedups=(), flags=(), failure=failure, message=f"{failure.value}: {error}", method=method, profile=None,
        stdout="", stderr="", worker_replaced=False, precision=PrecisionReached(contract=contract,
                                                                               tolerances=tolerances),
    )


def device_ran_out(verdict: Verdict, patterns: tuple[str, ...]) -> str:
    """The line of the verdict's message where the device's runtime says it ran out of memory (its
    ``Device.out_of_memory_patterns``); "": the candidate did not run out of the device's own memory, if of a
    limit KForge set."""
    if verdict.failure is not Failure.OUT_OF_MEMORY:
        return ""
    return next((line.strip() for line in verdict.message.splitlines()
                 if any(pattern in line.lower() for pattern in patterns)), "")
