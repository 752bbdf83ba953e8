"""The worker's harness-level steps around the stage hooks: timing the candidate and checking what it left
behind in the process. Runs inside workers only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ...records import Backend, Candidate, StageContext
from ...settings import HarnessSettings
from ...values import flatten_output
from .. import flags as F
from ..protocol import FinishReport, TimingOutcome
from ..timed_runs import pool_index
from .candidate import candidate_instance
from .integrity import ProcessSnapshot, changes_since
from ..precision_switches import switch_computes_in
from .reference import ProblemData
from .shipping import TIMED, TimedChecks, call_candidate, conclude, ship
from .timing import time_runs, timing_method

if TYPE_CHECKING:
    from ...device import Device


def time_candidate(backend: Backend, candidate: Candidate, context: StageContext, reference: ProblemData,
                   device: Device) -> TimingOutcome:
    """Time the candidate's ``ModelNew``; the outputs of timed runs drawn at random after each returned are shipped
    to the referee, which checks them against the reference's for the same inputs."""
    settings: HarnessSettings = context.settings
    model = candidate_instance(backend, candidate, context).model
    checks = TimedChecks(settings.timing_checks, settings.repetitions)

    def returned(run: int, result: Any) -> None:
        if checks.draw():
            leaves, structure = flatten_output(result)
            plain = [o.detach().clone() if type(o) in (torch.Tensor, torch.nn.Parameter) else None for o in leaves]
            seed = reference.pool_seeds[pool_index(run, settings, len(reference.pool))]
            ship(f"timed run {run}", TIMED, seed, plain, structure, {}, context.workdir)

    runs = time_runs(lambda *args: call_candidate(model, list(args)), reference, device, settings,
                     timer=context.timer, returned=returned)
    flags = [*runs.flags, *conclude("timing").flags]
    return TimingOutcome(tuple(runs.samples_ms), timing_method(device, settings, reference), tuple(flags))


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
