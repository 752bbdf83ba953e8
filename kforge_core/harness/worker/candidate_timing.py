"""The worker's harness-level steps around the stage hooks: timing the candidate and checking what it left
behind in the process. Runs inside workers only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...records import Backend, Candidate, StageContext
from ...settings import HarnessSettings
from .. import flags as F
from ..protocol import FinishReport, TimingOutcome
from ..timed_runs import checked_timed_runs
from .candidate import candidate_instance
from .integrity import ProcessSnapshot, changes_since
from .reference import ReferenceData
from .timing import check_timed_outputs, time_runs, timing_method

if TYPE_CHECKING:
    from ...device import Device


def time_candidate(backend: Backend, candidate: Candidate, context: StageContext, reference: ReferenceData,
                   device: Device) -> TimingOutcome:
    """Time the candidate's ``ModelNew`` and check the outputs of some timed runs against the reference."""
    settings: HarnessSettings = context.settings
    model = candidate_instance(backend, candidate, context).model
    runs = time_runs(model, reference, device, settings, keep=tuple(checked_timed_runs(settings)))
    flags = [*runs.flags, *check_timed_outputs(runs, reference, settings)]
    return TimingOutcome(tuple(runs.samples_ms), timing_method(device, settings, reference), tuple(flags))


def finish_report(snapshot: ProcessSnapshot | None, settings: HarnessSettings) -> FinishReport:
    """Tampering and precision switches as flags; anything else the candidate changed makes the worker unclean."""
    if snapshot is None:
        return FinishReport(clean=False, notes=("the worker had no snapshot of its state to compare with",))
    changes = changes_since(snapshot)
    flags = []
    if changes.tampered:
        shown = ", ".join(changes.tampered[:10]) + (" ..." if len(changes.tampered) > 10 else "")
        flags.append(F.raise_flag(F.TAMPERING, f"the candidate replaced {shown}", settings))
    if changes.precision:
        flags.append(F.raise_flag(F.PRECISION_DOWNGRADE, "the candidate changed precision switches: "
                                  + "; ".join(changes.precision), settings))
    notes = [f"changed global state: {c}" for c in changes.state]
    notes += [f"left a thread running: {name}" for name in changes.threads]
    clean = not (flags or notes)
    return FinishReport(tuple(flags), clean, tuple(notes))
