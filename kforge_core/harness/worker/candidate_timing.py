"""The worker's harness-level steps around the stage hooks: timing the candidate and checking what it left
behind in the process. Runs inside workers only."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from ...records import Backend, Candidate, Flag, StageContext
from ...settings import HarnessSettings
from .. import flags as F
from ..protocol import FinishReport, TimingOutcome
from ..timed_runs import checked_timed_runs
from .candidate import candidate_instance
from .integrity import ProcessSnapshot, changes_since
from ..precision_switches import switch_computes_in
from .reference import ReferenceData
from .timing import TimedRuns, check_timed_outputs, time_runs, timing_method

if TYPE_CHECKING:
    from ...device import Device


def time_candidate(backend: Backend, candidate: Candidate, context: StageContext, reference: ReferenceData,
                   device: Device, runs: tuple[int, int] | None = None) -> TimingOutcome:
    """Time the candidate's ``ModelNew`` (the timed runs ``runs``, all by default) and check the outputs of some
    timed runs against the reference."""
    settings: HarnessSettings = context.settings
    model = candidate_instance(backend, candidate, context).model
    timed = time_runs(model, reference, device, settings, keep=tuple(checked_timed_runs(settings)),
                      timer=context.timer, runs=range(*runs) if runs is not None else None)
    flags = [*timed.flags, *check_timed_outputs(timed, reference, settings), *hidden_work_flags(timed, settings)]
    method = timing_method(device, settings, reference)
    return TimingOutcome(tuple(timed.samples_ms[method.headline]), method, tuple(flags), figures=timed.figures())


HIDDEN_SHARE = 0.5  # events that see under half the device's busy time: work the caller's stream never waited for


def hidden_work_flags(timed: TimedRuns, settings: HarnessSettings) -> list[Flag]:
    """Work moved to a side stream that the caller's stream does not wait for is invisible to the events timer but
    not to the device's own records: when the events see less than half of it, the timing is not to be trusted."""
    events, busy = timed.samples_ms.get("events"), timed.samples_ms.get("device")
    if not events or not busy or statistics.median(events) >= HIDDEN_SHARE * statistics.median(busy):
        return []
    return [F.raise_flag(F.ASYNC_OUTPUT, (
        f"events on the caller's stream saw a median {statistics.median(events):.4g} ms per call, the device was "
        f"busy {statistics.median(busy):.4g} ms: work ran on a stream the caller's stream never waited for"),
        settings)]


def finish_report(snapshot: ProcessSnapshot | None, settings: HarnessSettings) -> FinishReport:
    """Tampering, and precision switches below the precision contract, as flags; anything else the candidate
    changed (switches within the contract included) makes the worker unclean."""
    if snapshot is None:
        return FinishReport(clean=False, notes=("the worker had no snapshot of its state to compare with",))
    changes = changes_since(snapshot)
    flags = []
    if changes.tampered:
        shown = ", ".join(changes.tampered[:10]) + (" ..." if len(changes.tampered) > 10 else "")
        flags.append(F.raise_flag(F.TAMPERING, f"the candidate replaced {shown}", settings))
    contract = settings.contract
    judged = [(f"{name}: {was!r} -> {now!r}", contract.permits(switch_computes_in(name, now)))
              for name, was, now in changes.precision]
    below = [change for change, permitted in judged if not permitted]
    within = tuple(change for change, permitted in judged if permitted)
    if below:
        flags.append(F.raise_flag(F.PRECISION_DOWNGRADE, f"the candidate changed precision switches below the "
                                  f"{contract.name} contract ({contract.computes_in}): " + "; ".join(below), settings))
    notes = [f"changed global state: {c}" for c in changes.state]
    notes += [f"changed a precision switch within the {contract.name} contract: {c}" for c in within]
    notes += [f"left a thread running: {name}" for name in changes.threads]
    clean = not (flags or notes)
    return FinishReport(tuple(flags), clean, tuple(notes), switches=within)
