"""The referee: a worker that never imports candidate code, holds the reference's expected outputs and judges the
outputs candidates' workers ship. The verdict on correctness is its word, not the candidate's worker's.

A candidate's worker computes nothing that decides whether it passed: it makes the seeded inputs (problem code is
not secret), calls the candidate and ships the outputs the moment each call returns (``worker/shipping.py``). The
KForge process hands each shipped call to the referee and the answer back. After the stage, the referee's
conclusion replaces what the worker reported about trials, precision and the cheats seen across calls; the worker
can only make its verdict worse (a fault, a flag it raised itself), never better. The referee also times the
baselines: it is the worker that is never given candidate code, kept from one problem to the next.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ...records import Failure, VerifyResult
from ...settings import HarnessSettings
from .. import flags as F
from ..shape_findings import held_words, merged_check, shape_findings, unjudged, with_shape_flag
from ..protocol import (
    OUTPUTS_DIR, Conclude, Conclusion, Expect, JudgeBegin, Judged, JudgedBatch, Prepared, Shipped, ShippedBatch,
    WorkerInit,
)
from .pool import WorkerPool, WorkerStartError
from .process import WorkerFault, WorkerProcess
from ...plural import counted


class Referee:
    """:param pool: starts the referee's worker. :param settings: the harness settings.
    :param anchor: the directory candidates' scratch directories lie in (their workers' homes): shipped outputs are
        read only below it, with no link followed. :param make_init: what the referee's worker is told (in the
        sandbox, it writes ``anchor``, where it removes the files it read); None: what the pool's workers are."""

    def __init__(self, pool: WorkerPool, settings: HarnessSettings, anchor: Path | None = None,
                 make_init: Callable[[], WorkerInit] | None = None) -> None:
        self._pool = pool
        self._settings = settings
        self._anchor = anchor
        self._make_init = make_init
        self._worker: WorkerProcess | None = None
        self._expects: str | None = None  # digest of the problem whose expected outputs the worker holds
        self.reference_s: float | None = None  # the reference's median forward time on the device
        self.on_judged: Callable[[Shipped, Judged], None] | None = None  # told each shipment's judgement
        self.hosted: set[str] = set()  # digests of the problems whose expected outputs stay in host memory

    def start(self) -> None:
        """Start the referee's worker now, without waiting for it (it is told the problem and prepared when
        first needed, :meth:`ready`)."""
        if self._worker is None or not self._worker.alive:
            self._worker, self._expects = self._pool.start_own(self._make_init), None

    def ready(self) -> WorkerProcess:
        """The referee worker, prepared for the current problem (started first if there is none). Raises
        WorkerStartError when it cannot start or the reference cannot run; when that is for lack of memory, the
        idle workers are ended to free theirs and it is tried once more."""
        try:
            return self._ready()
        except WorkerStartError as error:
            if error.failure is not Failure.OUT_OF_MEMORY:
                raise
            self._pool.close()
        return self._ready()

    def _ready(self) -> WorkerProcess:
        worker = self._worker
        if worker is None or not worker.alive:
            worker = self._worker = self._pool.acquire(fresh=True, make_init=self._make_init)
            self._expects = None
        else:
            self._take(self._pool.prepare, worker)
        problem = self._pool.problem
        assert problem is not None  # prepared for it above
        if self._expects != problem.digest:
            expect = Expect(problem, on_device=problem.digest not in self.hosted)
            reply = self._take(lambda w: w.call(expect, self._settings.startup_timeout_s,
                                                "computing the reference's expected outputs"), worker)
            if reply.failure is not None:
                self.discard()
                raise WorkerStartError(f"the reference of {problem.name} could not run: {reply.message}",
                                       failure=reply.failure, hint=_last_lines(reply.detail))
            assert isinstance(reply.value, Prepared)
            self.reference_s, self._expects = reply.value.reference_s, problem.digest
        return worker

    def begin(self, workdir: Path | None = None) -> None:
        """The outputs shipped from now on are a new candidate's, whose scratch directory is ``workdir``."""
        anchor = self._anchor
        if anchor is None or workdir is None or not workdir.is_relative_to(anchor):
            self._ask(JudgeBegin(), None)
        else:
            self._ask(JudgeBegin(anchor, str(workdir.relative_to(anchor) / OUTPUTS_DIR)), None)

    def answer(self, message: Shipped | ShippedBatch | Conclude) -> Judged | JudgedBatch | Conclusion:
        """The referee's answer to what a candidate's worker sent in the middle of a stage."""
        if isinstance(message, Shipped):
            judged = self._ask(message, Judged(False, Failure.HARNESS, f"{message.label} could not be judged"))
            if self.on_judged is not None:
                self.on_judged(message, judged)
            return judged
        if isinstance(message, ShippedBatch):
            batch = self._ask(message, JudgedBatch(tuple(
                Judged(False, Failure.HARNESS, f"{item.label} could not be judged") for item in message.items)))
            if self.on_judged is not None:
                for item, judged in zip(message.items, batch.items):
                    self.on_judged(item, judged)
            return batch
        return self._ask(message, Conclusion(failure=Failure.HARNESS, message="the referee could not conclude"))

    def conclude(self, kind: str) -> Conclusion:
        return self.answer(Conclude(kind))

    def discard(self) -> None:
        """Forget the referee worker (it failed); the next :meth:`ready` starts another."""
        if self._worker is not None:
            self._pool.release(self._worker, reusable=False)
        self._worker, self._expects = None, None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
        self._worker = None

    def _take(self, step: Any, worker: WorkerProcess) -> Any:
        try:
            return step(worker)
        except WorkerStartError:
            self._worker = self._expects = None
            raise
        except WorkerFault as fault:
            self.discard()
            raise WorkerStartError(f"the referee worker failed ({fault.message})", failure=fault.failure,
                                   hint=worker.worker_stderr_tail() or None) from None

    def _ask(self, message: Any, failed: Any) -> Any:
        """``message`` answered by the referee; ``failed`` (with the referee's message) when it cannot answer."""
        worker = self.ready()
        try:
            reply = worker.call(message, self._settings.startup_timeout_s, "judging a candidate's outputs")
        except WorkerFault as fault:
            self.discard()
            return _with_message(failed, f"the referee failed: {fault.message}")
        if reply.failure is not None:
            return _with_message(failed, f"the referee failed: {reply.message}")
        return reply.value


def trusted_verify(verify: VerifyResult, conclusion: Conclusion, settings: HarnessSettings) -> VerifyResult:
    """The worker's verify result with the referee's conclusion in its place: the trials, the precision, the cheats
    across calls and the shape variants are the referee's; a failure the worker reported stands (it can only have
    made the candidate look worse), and the candidate passes only when the referee says so too."""
    shapes = merged_check(conclusion.shapes, verify.shapes)  # the referee's, with the worker's own failures there
    flags = with_shape_flag([*verify.flags, *conclusion.flags], shapes, settings)
    failure, message = verify.failure, verify.message
    if failure is None and conclusion.failure is not None:
        failure, message = conclusion.failure, conclusion.message
    judged = {t.seed for t in conclusion.trials}
    missing = [settings.seed + t for t in range(settings.trials) if settings.seed + t not in judged]
    if failure is None and missing:  # the worker says its trials passed, yet the referee never saw one
        failure, message = Failure.CHEAT, f"trial seed {missing[0]} never reached the referee"
        flags.append(F.raise_flag(F.TAMPERING, message, settings))
    cheats = [f for f in flags if f.blocking and f.code != F.SHAPE_SPECIFIC]
    if failure is None and cheats:  # a cheat is what the verdict says, before any shape it failed at
        failure, message = Failure.CHEAT, F.describe_blocking(F.merge_flags(cheats))
    _, shape_failure, shape_message = shape_findings(shapes, settings)
    if failure is None and shape_failure is not None:  # wrong at a shape variant, under harness.shapes = strict
        failure, message = shape_failure, shape_message
    unseen = unjudged(shapes)
    if failure is None and unseen:  # the worker says it held at every variant, yet the referee never saw one
        failure, message = Failure.CHEAT, f"the call at shape variant {unseen[0].variant} never reached the referee"
        flags.append(F.raise_flag(F.TAMPERING, message, settings))
    flags = F.merge_flags(flags)
    blocking = [f for f in flags if f.blocking]
    if failure is None and blocking:
        failure, message = Failure.CHEAT, F.describe_blocking(blocking)
    trials = conclusion.trials or verify.trials
    if failure is None and not trials:
        failure, message = Failure.HARNESS, "no trial reached the referee"
    if failure is None:
        message = f"all {counted(sum(t.passed for t in trials), 'trial')} passed{held_words(shapes)}"
    notes = tuple(dict.fromkeys([*verify.notes, *conclusion.notes]))
    return VerifyResult(correct=failure is None, trials=trials, failure=failure, message=message, flags=flags,
                        notes=notes, precision_bits=conclusion.precision_bits, shapes=shapes)


def _with_message(failed: Any, message: str) -> Any:
    if isinstance(failed, Judged):
        return Judged(False, Failure.HARNESS, message)
    if isinstance(failed, JudgedBatch):
        return JudgedBatch(tuple(Judged(False, Failure.HARNESS, message) for _ in failed.items))
    if isinstance(failed, Conclusion):
        return Conclusion(failure=Failure.HARNESS, message=message)
    return None


def _last_lines(text: str, count: int = 8) -> str | None:
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-count:]) or None
