"""The worker's harness-level steps around the stage hooks: timing the candidate and checking what it left
behind in the process. Runs inside workers only."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any


from ...records import Backend, Candidate, Flag, StageContext
from ...settings import HarnessSettings
from .. import flags as F
from ..protocol import FinishReport, TimingOutcome
from ...timing.timed_runs import pool_index
from .candidate import candidate_instance
from .integrity import ProcessSnapshot, changes_since, put_back_environment
from ..precision_switches import switch_computes_in
from .reference import ProblemData
from .samples import sampled
from .shipping import TIMED, ask_check, call_candidate, pack, send_all
from .run_timing import Kept, TimedRuns, time_runs, timing_method

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice


def time_candidate(backend: Backend, candidate: Candidate, context: StageContext, reference: ProblemData,
                   device: HarnessDevice, runs: tuple[int, int] | None = None,
                   timers: tuple[str, ...] = ()) -> TimingOutcome:
    """Time the candidate's ``ModelNew`` (the timed runs ``runs``, all by default, one block of several interleaved
    with the baselines'). Every timed call is checked: once it returned, the KForge process draws which elements of
    its outputs go to the referee (:func:`shipping.ask_check`, all of a small output), they are taken from the copy
    made as it returned, and the block's are shipped once its last call is timed, so that nothing but the KForge
    process's draw runs between two timed calls (the referee's work would share the device and the host's cores).
    The referee's conclusion comes after the last block. ``timers``: those measured (every one the device has
    when empty)."""
    settings: HarnessSettings = context.settings
    model = candidate_instance(backend, candidate, context).model
    block = range(*runs) if runs is not None else range(settings.repetitions)
    drawn: list[tuple[str, int, int, list[Any], tuple[Any, ...]]] = []

    def returned(run: int, label: str, kept: Kept) -> None:
        seed = reference.pool_seeds[pool_index(run, settings, len(reference.pool))]
        sample_seed = ask_check(label, seed)
        drawn.append((label, seed, sample_seed, sampled(kept.leaves, sample_seed, settings.timed_check_elements),
                      kept.structure))

    timed = time_runs(lambda *args: call_candidate(model, list(args)), reference, device, settings,
                      timer=context.timer, runs=block, returned=returned, timers=timers, series="candidate")
    packed = []
    while drawn:  # each call's drawn elements written, and freed, before the next's
        label, seed, sample_seed, leaves, structure = drawn.pop(0)
        packed.append(pack(label, TIMED, seed, leaves, structure, {}, context.workdir, sample_seed))
        del leaves
    send_all(packed)  # one message each way for the block; the referee's conclusion says what it found
    flags = [*timed.flags, *hidden_work_flags(timed, settings)]
    method = timing_method(device, settings, reference, timers).noted(timed.hold_note())
    return TimingOutcome(tuple(timed.samples_ms[method.headline]), method, tuple(flags), figures=timed.figures(),
                         device_streams=timed.device_streams, launch_bound=timed.launch_bound())


HIDDEN_SHARE = 0.5  # events that see under half the device's busy time: work the caller's stream never waited for
HIDDEN_FLOOR_MS = 1.0  # and at least this much of it: below, the two timers' own overheads differ by more than that


def hidden_work_flags(timed: TimedRuns, settings: HarnessSettings) -> list[Flag]:
    """Work moved to a side stream that the caller's stream does not wait for is invisible to the events timer but
    not to the device's own records: when the events see less than half of it, the timing is not to be trusted."""
    events, busy = timed.samples_ms.get("events"), timed.samples_ms.get("device")
    if not events or not busy:
        return []
    seen, done = statistics.median(events), statistics.median(busy)
    if seen >= HIDDEN_SHARE * done or done - seen < HIDDEN_FLOOR_MS:
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
    below, within = _judged_switches(changes.precision, settings)
    flags.extend(below)
    notes = [f"changed global state: {c}" for c in changes.state]
    notes += [f"changed a precision switch within the {settings.contract.name} contract: {c}" for c in within]
    notes += [f"left a thread running: {name}" for name in changes.threads]
    clean = not (flags or notes)
    put_back = put_back_environment(snapshot.environment)
    if put_back:  # put back: the worker stays clean for the next candidate
        notes.append("changed environment variables, put back for the next candidate: " + ", ".join(put_back))
    return FinishReport(tuple(flags), clean, tuple(notes), switches=within)


def blocking_switch_flags(snapshot: ProcessSnapshot | None, settings: HarnessSettings) -> list[Flag]:
    """After verification: precision switches the candidate turned below the contract, where the policy makes
    that block, so that a candidate already rejected is not timed (its finish report says the same again)."""
    if snapshot is None:
        return []
    below, _ = _judged_switches(changes_since(snapshot).precision, settings)
    return [flag for flag in below if flag.blocking]


def _judged_switches(changed: list[tuple[str, Any, Any]], settings: HarnessSettings
                     ) -> tuple[list[Flag], tuple[str, ...]]:
    """The switch changes below the contract (one flag), and those within it (described)."""
    contract = settings.contract
    judged = [(f"{name}: {was!r} -> {now!r}", contract.permits(switch_computes_in(name, now)))
              for name, was, now in changed]
    below = [change for change, permitted in judged if not permitted]
    within = tuple(change for change, permitted in judged if permitted)
    if not below:
        return [], within
    return [F.raise_flag(F.PRECISION_DOWNGRADE, f"the candidate changed precision switches below the "
                         f"{contract.name} contract ({contract.computes_in}): " + "; ".join(below), settings)], within
