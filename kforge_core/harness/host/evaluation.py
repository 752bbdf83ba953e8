"""One candidate's stages through one worker: compile, verify, time, profile, finish.

Every step that can go wrong in the worker comes back as a failure class; nothing a candidate does raises here.
What the outcomes come to is ``verdict_parts.py``'s.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, ContextManager

from ...records import Candidate, CompileResult, Failure, Flag, ProfileResult, VerifyResult
from ...settings import HarnessSettings
from .. import flags as F
from ..op_trace import compute_ops, describe_ops
from ..protocol import Begin, Finish, FinishReport, Reply, RunStage, Time, TimingOutcome
from .deadline import StageTimeouts
from .phases import Phases
from .process import WorkerFault, WorkerProcess
from .referee import Referee, trusted_verify

_BEGIN_TIMEOUT_S = 60.0
_FINISH_TIMEOUT_S = 60.0


@dataclass
class StageOutcomes:
    """What the worker reported, stage by stage, and the first fault that ended the evaluation."""

    compile: CompileResult | None = None
    verify: VerifyResult | None = None
    timing: TimingOutcome | None = None
    profile: ProfileResult | None = None
    finish: FinishReport | None = None
    flags: list[Flag] = field(default_factory=list)
    failure: Failure | None = None
    message: str = ""
    clean: bool = True

    def fault(self, failure: Failure, message: str) -> None:
        if self.failure is None:
            self.failure, self.message = failure, message
        self.clean = False


def run_stages(worker: WorkerProcess, candidate: Candidate, workdir: Path, settings: HarnessSettings,
               timeouts: StageTimeouts, *, measure: bool, profile: bool,
               timing_guard: Callable[[], ContextManager[None]], referee: Referee,
               stop_at: float | None = None,
               timing: Callable[[Callable[..., Reply]], Reply] | None = None,
               phases: Phases | None = None) -> StageOutcomes:
    """Drive the worker through the candidate's stages; a dead or hung worker ends them with its fault, and so
    does reaching ``stop_at`` (a monotonic time: the problem's budget). The outputs the worker ships are judged by
    ``referee``, whose conclusions replace the worker's own. ``timing`` times the candidate through the worker's
    ``call`` (by default, one ``Time`` request for all its timed runs). ``phases`` gets the seconds of each."""
    out = StageOutcomes()
    phases = phases or Phases()
    call = functools.partial(worker.call, hard_stop=stop_at)  # (request, timeout_s, what, waits)
    worker.wait_notes.clear()
    worker.output.begin_candidate()
    referee.begin(workdir)
    worker.referee = referee.answer
    try:
        with phases.phase("compile"):
            _expect(worker.call(Begin(candidate, workdir), _BEGIN_TIMEOUT_S, "preparing the scratch directory"), out)
        if out.failure is None:
            _stages(call, settings, timeouts, out, measure=measure, profile=profile, timing_guard=timing_guard,
                    referee=referee, timing=timing, phases=phases)
        if worker.alive:
            with phases.phase("finish"):
                out.finish = _expect(worker.call(Finish(), _FINISH_TIMEOUT_S, "checking the process"), out)
    except WorkerFault as fault:
        out.fault(fault.failure, fault.message)
        if fault.failure is Failure.CHEAT:  # a forged reply: tampering with the harness itself
            out.flags.append(F.raise_flag(F.TAMPERING, fault.message, settings))
    if worker.wait_notes and out.verify is not None:  # calls allowed past their limit while compiling
        out.verify = replace(out.verify, notes=(*out.verify.notes, *worker.wait_notes))
    if out.finish is not None:
        out.flags.extend(out.finish.flags)
        out.clean = out.clean and out.finish.clean
        if out.finish.notes and out.verify is not None:  # what the candidate left in its process, and what was done
            out.verify = replace(out.verify, notes=(*out.verify.notes, *(f"after the candidate: {note}"
                                                                          for note in out.finish.notes)))
    else:
        out.clean = False
    return out


def _stages(call: Callable[..., Reply], settings: HarnessSettings, timeouts: StageTimeouts, out: StageOutcomes, *,
            measure: bool, profile: bool, timing_guard: Callable[[], ContextManager[None]], referee: Referee,
            timing: Callable[[Callable[..., Reply]], Reply] | None = None, phases: Phases) -> None:
    waits = timeouts.waits
    with phases.phase("compile"):
        out.compile = _expect(call(RunStage("compile"), timeouts.compile_s, "compile", timeouts.compile_waits), out)
    if out.compile is None or not out.compile.ok:
        return
    out.flags.extend(out.compile.flags)
    if any(flag.blocking for flag in out.flags):  # rejected once built (a switch below the contract at import)
        return
    with phases.phase("verify"):
        out.verify = _expect(call(RunStage("verify"), timeouts.verify_s, "verify", waits), out)
    if out.verify is None:
        return
    out.verify = trusted_verify(out.verify, referee.conclude("verify"), settings)
    out.flags.extend(out.verify.flags)
    if not out.verify.correct or any(flag.blocking for flag in out.flags):  # rejected already: no time spent on it
        return
    if measure:
        with phases.phase("timing"), contextlib.ExitStack() as quiet:  # what else the harness runs stays quiet
            with phases.phase("quiet"):  # while it is timed: the wait for that to finish or stop, said apart
                quiet.enter_context(timing_guard())
            reply = timing(call) if timing is not None else call(Time(), timeouts.timing_s, "timing", waits)
            out.timing = _expect(reply, out)
        if out.timing is not None:
            out.flags.extend(out.timing.flags)
            timed = referee.conclude("timing")  # the checked runs, as the referee saw them
            out.flags.extend(timed.flags)
            if timed.failure is not None and out.failure is None:  # just outside the tolerance: not a cheat
                out.failure, out.message = timed.failure, timed.message
    if profile and out.failure is None:
        with phases.phase("profile"):
            out.profile = _expect(call(RunStage("profile"), timeouts.profile_s, "profile", waits), out)
        if out.profile is not None:
            out.flags.extend(_profile_flags(out.profile, settings))


def _expect(reply: Reply, out: StageOutcomes) -> Any:
    """The reply's value, or None after recording its failure."""
    if reply.failure is not None:
        out.fault(reply.failure, reply.message)
        return None
    return reply.value


def _profile_flags(profile: ProfileResult, settings: HarnessSettings) -> list[Flag]:
    """The profiler's view of which PyTorch operators ran (the dynamic reference_call check's second source)."""
    found = compute_ops(profile.ops)
    if not found:
        return []
    return [F.raise_flag(F.REFERENCE_CALL, f"the profiler saw PyTorch compute operators run: {describe_ops(found)}",
                         settings)]
