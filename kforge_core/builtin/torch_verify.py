"""The core's generic verification, for any backend whose outputs are torch tensors on a torch device.

Per trial: the trial's seeded inputs, made afresh, freed memory poisoned, one call of ``ModelNew.forward`` through the
harness's one call path (``shipping.call_candidate``), a copy of the outputs taken the moment it returns, then a
device-wide wait and a join of threads it started. The copies leave the process at once (``shipping.pack``) and are
judged by the referee, a process that never imports candidate code and alone knows the expected outputs, while this
process holds none of the call's device memory (``shipping.send``); its answer says whether the trial passed. After
the first trial, a problem small for its device has each trial judged while the next one runs (``send_ahead``).
Here, only what one call shows: outputs that are not plain tensors, unwritten (stale) output, work finishing after
return, an output that aliases the previous call's. Once every trial passed, one call at each of the problem's shape
variants (``variant_calls.py``). After that: the referee's conclusion across calls (cached, constant outputs, changed
inputs, the precision reached, the shape variants), and the PyTorch operators ``ModelNew.forward`` ran.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from ..candidate_module import candidate_class_name
from ..devices.harness_device import HarnessDevice
from ..harness import flags as F
from ..harness.op_trace import compute_ops, describe_ops, trace_ops
from ..harness.protocol import Judged, Shipped
from ..harness.worker.candidate import device_of, harness_settings, initialisations, keep_instance, reference_for
from ..harness.worker.compare import Comparison, plain_tensors, same_bits
from ..harness.worker.faults import candidate_traceback, classify_exception
from ..harness.worker.parameter_init import Initialised
from ..harness.worker.reference import ProblemData, Trial
from ..harness.problem_size import large_for_device
from ..harness.worker.shipping import (
    TRACED, TRIAL, LocalReferee, call_candidate, conclude, judged_elsewhere, pack, send, send_ahead, ship,
    use_referee,
)
from ..harness.worker.memory import hand_back_idle_cache
from ..harness.worker.rejection import blocking_now
from ..harness.worker.threads import wait_for_threads
from ..harness.shape_findings import held_words, merged_check, shape_findings, with_shape_flag
from ..records import Backend, Candidate, Failure, Flag, ShapeCheck, StageContext, TrialError, VerifyResult
from .variant_calls import call_at_variants
from ..settings import HarnessSettings
from ..timing.timed_runs import TRIAL_CALL
from ..values import flatten_output, tensor_leaves
from ..plural import counted

THREAD_JOIN_S = 30.0


@dataclass
class _Run:
    """What verification collected so far."""

    trials: list[TrialError] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failure: Failure | None = None
    message: str = ""
    precision_bits: float | None = None
    previous: list[tuple[int, StorageWeakRef]] = field(default_factory=list)  # the last call's output buffers
    at_variants: ShapeCheck | None = None  # the failures at shape variants only this process saw
    shapes: ShapeCheck | None = None  # how it did at the shape variants, as concluded

    def fail(self, failure: Failure, message: str, *, earlier: bool = False) -> None:
        """Keep the first failure; ``earlier``: this one came from a trial before the one already kept (judged
        while that one ran)."""
        if self.failure is None or earlier:
            self.failure, self.message = failure, message


def verify_with_torch(backend: Backend, candidate: Candidate, context: StageContext) -> VerifyResult:
    settings = harness_settings(context)
    reference = reference_for(backend, context)
    device = device_of(backend, context)
    if not judged_elsewhere():  # the hook runs outside a harness worker (a plugin's own tool): judged here
        use_referee(LocalReferee(context.problem, device, settings, backend))
    try:
        class_note, attempts = initialisations(backend, candidate, context)
        chosen = next(attempts)
    except Exception as exc:
        message = f"{candidate_class_name(context)}(*get_init_inputs()) raised:\n" + \
            candidate_traceback(exc, context.workdir)
        return VerifyResult(correct=False, failure=classify_exception(exc, device), message=message)
    rejected = blocking_now()  # a switch below the precision contract turned by its constructor: no trial runs
    if rejected:
        return VerifyResult(correct=False, failure=Failure.CHEAT, message=F.describe_blocking(rejected),
                            flags=tuple(rejected), notes=("rejected once built, before its first trial",))
    run, chosen, parameters_note = _first_trial(chosen, attempts, reference, device, settings, context)
    instance_notes = tuple(n for n in (class_note, parameters_note) if n)
    keep_instance(candidate, context, chosen.model, instance_notes)
    run.notes[:0] = list(instance_notes)
    if run.trials:  # the first trial ran to its comparison: the others run too
        if large_for_device(context.problem, device.memory().total):
            for trial in reference.trials[1:]:
                if not _run_trial(chosen.model, trial, "", reference, device, settings, context, run):
                    break
        else:
            _run_judged_ahead(chosen.model, reference.trials[1:], reference, device, settings, context, run)
    if run.trials and run.failure is None and not any(f.blocking for f in run.flags):
        # every trial passed and showed no cheat: one call at each shape variant
        run.at_variants = call_at_variants(chosen.model, reference, device, settings, context)
    if run.failure not in (Failure.RUNTIME, Failure.OUT_OF_MEMORY, Failure.DEVICE_FAULT, Failure.OUTPUT_TYPE,
                           Failure.RESOURCE_LIMIT):
        _conclude(run, settings)
    if run.failure is None:  # the operator check decides nothing for a candidate that failed already
        _check_operators(chosen.model, reference, settings, context, run)
    return _result(run)


def _first_trial(first: Initialised, others: Iterator[Initialised], reference: ProblemData, device: HarnessDevice,
                 settings: HarnessSettings, context: StageContext) -> tuple[_Run, Initialised, str]:
    """The first trial under the seeded construction; when its outputs are numerically wrong, again under each
    other initialisation of the parameters (``parameter_init``) until one passes. Returns the run kept (the first
    that passes, else the seeded construction's), its initialisation and the verdict's note on the parameters.
    Flags raised under any of them are kept."""
    run = _Run()
    _run_trial(first.model, reference.trials[0], "", reference, device, settings, context, run)
    note = f"parameters: {first.how} ({first.detail})"
    if run.failure is not Failure.MISMATCH:
        return run, first, note
    failed, flags = [], list(run.flags)
    while True:
        try:
            other = next(others)
        except StopIteration:
            break
        except Exception:  # noqa: BLE001 - it was built once already; a constructor failing now changes nothing
            break
        retry = _Run()
        _run_trial(other.model, reference.trials[0], f" ({other.how})", reference, device, settings, context, retry)
        flags.extend(retry.flags)
        if retry.trials and retry.trials[0].passed:
            retry.flags = flags
            return retry, other, (f"parameters: {other.how} ({other.detail}), after trial seed {reference.seed} "
                                  f"failed with {', then '.join([first.how, *failed])}")
        failed.append(f"{other.how} ({other.detail})")
    run.flags = flags
    if failed:
        note += f"; trial seed {reference.seed} failed with {' and with '.join(failed)} too"
    return run, first, note


def _run_trial(model: Any, trial: Trial, how: str, reference: ProblemData, device: HarnessDevice,
               settings: HarnessSettings, context: StageContext, run: _Run) -> bool:
    """One trial; False when verification cannot go on (an exception, outputs of the wrong kind)."""
    shipment = _called_and_packed(model, trial, how, reference, device, settings, context, run)
    if shipment is None:
        return False
    _record(run, trial, send(shipment))
    return True


def _run_judged_ahead(model: Any, trials: list[Trial], reference: ProblemData, device: HarnessDevice,
                      settings: HarnessSettings, context: StageContext, run: _Run) -> None:
    """The trials in order, each judged while the next one runs (the referee's work and this process's overlap:
    a problem small for the device has room for both); what the verdict says is what one trial at a time says."""
    waiting: tuple[Trial, Callable[[], Judged]] | None = None
    try:
        for trial in trials:
            failed_before = run.failure is not None
            shipment = _called_and_packed(model, trial, "", reference, device, settings, context, run)
            if waiting is not None:
                earlier, judgement = waiting
                waiting = None
                _record(run, earlier, judgement(), earlier=not failed_before and run.failure is not None)
            if shipment is None:
                return
            waiting = (trial, send_ahead(shipment))
    finally:
        if waiting is not None:  # every answer asked for is read here, whatever ended the trials
            _record(run, waiting[0], waiting[1]())


def _called_and_packed(model: Any, trial: Trial, how: str, reference: ProblemData, device: HarnessDevice,
                       settings: HarnessSettings, context: StageContext, run: _Run) -> Shipped | None:
    """One trial's call, its checks, and its outputs written to be judged; None when verification cannot go on
    (an exception, outputs of the wrong kind)."""
    inputs = trial.inputs
    with context.timer.calling(TRIAL_CALL.format(seed=trial.seed)):  # until the device and its threads are done
        called = _call(model, inputs, trial, reference, device, settings, context, run)
    if called is None:
        return None
    outputs, structure, at_return = called
    del called
    _check_single_call(outputs, at_return, trial, device, settings, run)
    del at_return  # gone before the pristine inputs are made again: the trial holds one call's worth at most
    changed = _changed_inputs(inputs, trial.inputs)  # the same seed makes the same inputs again
    shipment = pack(f"trial seed {trial.seed}{how}", TRIAL, trial.seed, outputs, structure, changed, context.workdir)
    del outputs, inputs, changed  # the referee reads the files: while it judges, this process holds none of the call
    # nor a large cache beside the referee's float64 reference, nor any cache where the problem is large
    hand_back_idle_cache(device, large=large_for_device(context.problem, device.memory().total))
    return shipment


def _call(model: Any, inputs: list[Any], trial: Trial, reference: ProblemData, device: HarnessDevice,
          settings: HarnessSettings, context: StageContext, run: _Run
          ) -> tuple[list[torch.Tensor], tuple[Any, ...], list[torch.Tensor]] | None:
    """Call forward on poisoned memory and wait for all it started; its outputs, how they nest, and a copy taken
    the moment it returned. None, with the failure recorded, when it raised or returned the wrong kind."""
    device.poison(reference.output_bytes)
    threads_before = set(threading.enumerate())
    try:
        with torch.no_grad():
            outputs, structure = flatten_output(call_candidate(model, inputs))
    except Exception as exc:
        run.fail(classify_exception(exc, device), f"trial seed {trial.seed}: forward raised:\n"
                 + candidate_traceback(exc, context.workdir))
        return None
    finally:
        device.stop_poisoning()
    structural = plain_tensors(outputs, structure)
    if structural is not None:
        if any(isinstance(o, torch.Tensor) and type(o) not in (torch.Tensor, torch.nn.Parameter) for o in outputs):
            run.flags.append(F.raise_flag(F.TENSOR_SUBCLASS, structural.message, settings))
        _record(run, trial, _as_judged(structural))
        return None
    at_return = [o.detach().clone() for o in outputs]  # before waiting: what was ready when forward returned
    device.synchronize()
    still_running = wait_for_threads(threads_before, THREAD_JOIN_S, context.timer,
                                     f"forward (trial seed {trial.seed})")
    if still_running:
        run.notes.append(f"forward left {len(still_running)} thread(s) running")
    return outputs, structure, at_return


def _as_judged(comparison: Comparison) -> Judged:
    return Judged(comparison.passed, comparison.failure, comparison.message, comparison.max_abs_error,
                  comparison.max_rel_error)


def _record(run: _Run, trial: Trial, judged: Judged, *, earlier: bool = False) -> None:
    run.trials.append(TrialError(trial.seed, judged.passed, judged.max_abs_error, judged.max_rel_error,
                                 judged.message))
    if not judged.passed:
        run.fail(judged.failure or Failure.MISMATCH, f"trial seed {trial.seed}: {judged.message}", earlier=earlier)


def _check_single_call(outputs: list[torch.Tensor], at_return: list[torch.Tensor], trial: Trial, device: HarnessDevice,
                       settings: HarnessSettings, run: _Run) -> None:
    """Cheats one call shows: unwritten (stale) output, work finishing after return; and an output that is the
    previous call's buffer again (state the candidate keeps, overwritten by each call)."""
    poisoned = max(device.poisoned_fraction(o) for o in outputs)
    if poisoned >= 0.5:
        run.flags.append(F.raise_flag(F.STALE_OUTPUT, (
            f"{poisoned:.0%} of the output is the poison the harness wrote into freed memory just before the call: "
            "forward returned memory it never wrote (output taken from a recycled buffer)"), settings))
    elif poisoned > 0:
        run.notes.append(f"trial seed {trial.seed}: {poisoned:.2%} of the output was never written")
    if not all(same_bits(a, b) for a, b in zip(at_return, outputs)):
        run.flags.append(F.raise_flag(F.ASYNC_OUTPUT, (
            "the output changed after forward returned: work continued on a side stream or thread that the "
            "caller's stream does not wait for, so a timer would miss it"), settings))
    if _shares_storage(outputs, run.previous):
        run.flags.append(F.raise_flag(F.PERSISTENT_OUTPUT, (
            f"trial seed {trial.seed} returned the same buffer as the call before it: the output aliases state the "
            "candidate keeps, and the next call overwrites it (each output was judged as it was when its call "
            "returned)"), settings))
    run.previous = _storages(outputs)


def _storages(outputs: list[torch.Tensor]) -> list[tuple[int, StorageWeakRef]]:
    """Where each output's memory is, and a weak reference to it: the previous call's outputs are not held (for
    a large problem they are a call's worth of device memory), yet a buffer the candidate keeps is still told
    from a fresh allocation that reuses a freed address."""
    return [(o.untyped_storage().data_ptr(), StorageWeakRef(o.untyped_storage())) for o in outputs if o.numel()]


def _shares_storage(outputs: list[torch.Tensor], previous: list[tuple[int, StorageWeakRef]]) -> bool:
    """Whether an output lies in a buffer the previous call returned, still alive (so not freed and reused)."""
    mine = {o.untyped_storage().data_ptr() for o in outputs if o.numel()}
    return any(pointer in mine and not alive.expired() for pointer, alive in previous)


def _changed_inputs(now: list[Any], pristine: list[Any]) -> dict[str, torch.Tensor]:
    """The tensors in ``now`` that differ from those in ``pristine``, by path (``[1][0]``); the referee compares
    them with what the reference does to its own inputs."""
    before = dict(tensor_leaves(pristine))
    return {path: tensor for path, tensor in tensor_leaves(now)
            if path not in before or not same_bits(tensor, before[path].to(tensor.device))}


def _conclude(run: _Run, settings: HarnessSettings) -> None:
    """The referee's conclusion over the trials: cheats across calls, changed inputs, the precision reached, how it
    did at the shape variants (with the failures there only this process saw)."""
    conclusion = conclude("verify")
    run.flags.extend(conclusion.flags)
    run.notes.extend(conclusion.notes)
    run.precision_bits = conclusion.precision_bits
    if conclusion.failure is not None:
        run.fail(conclusion.failure, conclusion.message)
    run.shapes = merged_check(conclusion.shapes, run.at_variants)
    run.flags = with_shape_flag(run.flags, run.shapes, settings)
    _, failure, message = shape_findings(run.shapes, settings)
    if failure is not None and not any(f.blocking and f.code != F.SHAPE_SPECIFIC for f in run.flags):
        run.fail(failure, message)  # a cheat, where there is one, is what the verdict says


def _check_operators(model: Any, reference: ProblemData, settings: HarnessSettings, context: StageContext,
                     run: _Run) -> None:
    """Which PyTorch compute operators one extra call of forward runs (reference_call). Its output is judged like
    a trial's: a candidate that answers differently while it is traced is caught."""
    trial = reference.trials[0]
    inputs = trial.inputs

    def call() -> Any:
        with context.timer.calling("forward (traced for the operators it runs)"):  # not the tracer's own start-up
            return call_candidate(model, inputs)

    try:
        with torch.no_grad():
            result, names = trace_ops(call)
            outputs, structure = flatten_output(result)
    except Exception as exc:
        run.notes.append(f"the operator trace could not run forward: {type(exc).__name__}: {exc}")
        return
    if plain_tensors(outputs, structure) is None:
        judged = ship(f"trial seed {trial.seed} (traced)", TRACED, trial.seed, [o.detach().clone() for o in outputs],
                      structure, {}, context.workdir)
        if not judged.passed:
            run.flags.append(F.raise_flag(F.TAMPERING, (
                f"forward answered wrongly while its operators were traced ({judged.message}), rightly otherwise: "
                "it behaves differently when it is watched"), settings))
    found = compute_ops(names)
    if found:
        run.flags.append(F.raise_flag(F.REFERENCE_CALL, (
            f"ModelNew.forward ran PyTorch compute operators: {describe_ops(found)}"), settings))


def _result(run: _Run) -> VerifyResult:
    flags = F.merge_flags(run.flags)
    failure, message = run.failure, run.message
    blocking = [f for f in flags if f.blocking]
    if failure is None and blocking:
        failure, message = Failure.CHEAT, F.describe_blocking(blocking)
    if failure is None and not run.trials:
        failure, message = Failure.HARNESS, "no trial ran"
    passed = sum(t.passed for t in run.trials)
    if failure is None:
        message = f"all {counted(passed, 'trial')} passed{held_words(run.shapes)}"
    return VerifyResult(correct=failure is None, trials=tuple(run.trials), failure=failure, message=message,
                        flags=flags, notes=tuple(run.notes), precision_bits=run.precision_bits, shapes=run.shapes)

