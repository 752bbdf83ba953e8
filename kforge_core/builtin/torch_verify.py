"""The core's generic verification, for any backend whose outputs are torch tensors on a torch device.

Per trial: fresh seeded inputs (cloned: the reference computed its outputs on copies of its own, earlier, so no
memory it used can hold this trial's answer), freed memory poisoned, one call of ``ModelNew.forward``, a copy of
the outputs taken the moment it returns, then a device-wide wait and a join of threads it started. The outputs are
then checked for type, count, shape, dtype, NaN/Inf and tolerance, and for the cheats a single call can show.
After the trials: cheats that show across calls (cached, constant outputs), the precision the candidate achieved
against a float64 reference, and the PyTorch operators ``ModelNew.forward`` ran.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

import torch

from ..candidate_module import candidate_class_name
from ..device import Device
from ..harness import flags as F
from ..harness.op_trace import compute_ops, describe_ops, trace_ops
from ..harness.worker.candidate import device_of, harness_settings, initialisations, keep_instance, reference_for
from ..harness.worker.compare import Comparison, check_structure, compare_outputs, max_difference
from ..harness.worker.faults import candidate_traceback, classify_exception
from ..harness.worker.parameter_init import Initialised
from ..harness.worker.precision import precision_report
from ..harness.worker.reference import ReferenceData, Trial, clone_values
from ..harness.worker.threads import wait_for_threads
from ..records import Backend, Candidate, Failure, Flag, StageContext, TrialError, VerifyResult
from ..settings import HarnessSettings
from ..values import flatten_output, tensor_leaves

THREAD_JOIN_S = 30.0


@dataclass
class _Run:
    """What verification collected so far."""

    trials: list[TrialError] = field(default_factory=list)
    outputs: list[list[torch.Tensor]] = field(default_factory=list)  # copies, per trial with the right structure
    flags: list[Flag] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failure: Failure | None = None
    message: str = ""
    precision_bits: float | None = None

    def fail(self, failure: Failure, message: str) -> None:
        if self.failure is None:
            self.failure, self.message = failure, message


def verify_with_torch(backend: Backend, candidate: Candidate, context: StageContext) -> VerifyResult:
    settings = harness_settings(context)
    reference = reference_for(backend, context)
    device = device_of(backend, context)
    try:
        class_note, attempts = initialisations(backend, candidate, context)
        chosen = next(attempts)
    except Exception as exc:
        message = f"{candidate_class_name(context)}(*get_init_inputs()) raised:\n" + \
            candidate_traceback(exc, context.workdir)
        return VerifyResult(correct=False, failure=classify_exception(exc, device), message=message)
    run, chosen, parameters_note = _first_trial(chosen, attempts, reference, device, settings, context)
    instance_notes = tuple(n for n in (class_note, parameters_note) if n)
    keep_instance(candidate, context, chosen.model, instance_notes)
    run.notes[:0] = [*instance_notes, *reference.tolerance_notes]
    if run.outputs:  # the first trial ran to its comparison: the others run too
        for trial in reference.trials[1:]:
            if not _run_trial(chosen.model, trial, reference, device, settings, context, run):
                break
    if run.failure not in (Failure.RUNTIME, Failure.OUT_OF_MEMORY, Failure.DEVICE_FAULT, Failure.OUTPUT_TYPE):
        _check_across_trials(reference, settings, run)
    if run.failure is None:  # the operator check decides nothing for a candidate that failed already
        _check_operators(chosen.model, reference, settings, context, run)
    return _result(run)


def _first_trial(first: Initialised, others: Iterator[Initialised], reference: ReferenceData, device: Device,
                 settings: HarnessSettings, context: StageContext) -> tuple[_Run, Initialised, str]:
    """The first trial under the seeded construction; when its outputs are numerically wrong, again under each
    other initialisation of the parameters (``parameter_init``) until one passes. Returns the run kept (the first
    that passes, else the seeded construction's), its initialisation and the verdict's note on the parameters.
    Flags raised under any of them are kept."""
    run = _Run()
    _run_trial(first.model, reference.trials[0], reference, device, settings, context, run)
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
        _run_trial(other.model, reference.trials[0], reference, device, settings, context, retry)
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


def _run_trial(model: Any, trial: Trial, reference: ReferenceData, device: Device, settings: HarnessSettings,
               context: StageContext, run: _Run) -> bool:
    """One trial; False when verification cannot go on (an exception, outputs of the wrong kind)."""
    inputs = clone_values(trial.inputs)
    with context.timer.calling(f"forward (trial seed {trial.seed})"):  # until the device and its threads are done
        called = _call(model, inputs, trial, reference, device, settings, context, run)
    if called is None:
        return False
    outputs, structure, at_return = called
    comparison = compare_outputs(outputs, trial.outputs, reference.tolerances, structure)
    _record(run, trial, comparison)
    _check_single_call(outputs, at_return, inputs, trial, device, settings, run)
    run.outputs.append([o.detach().clone() for o in outputs])
    return True


def _call(model: Any, inputs: list[Any], trial: Trial, reference: ReferenceData, device: Device,
          settings: HarnessSettings, context: StageContext, run: _Run
          ) -> tuple[list[torch.Tensor], tuple[Any, ...], list[torch.Tensor]] | None:
    """Call forward on poisoned memory and wait for all it started; its outputs, how they nest, and a copy taken
    the moment it returned. None, with the failure recorded, when it raised or returned the wrong kind."""
    device.poison(reference.output_bytes)
    threads_before = set(threading.enumerate())
    try:
        with torch.no_grad():
            outputs, structure = flatten_output(model(*inputs))
    except Exception as exc:
        run.fail(classify_exception(exc, device), f"trial seed {trial.seed}: forward raised:\n"
                 + candidate_traceback(exc, context.workdir))
        return None
    finally:
        device.stop_poisoning()
    structural = check_structure(outputs, trial.outputs, structure=structure,
                                 reference_structure=reference.structure)
    if structural is not None:
        if any(isinstance(o, torch.Tensor) and type(o) not in (torch.Tensor, torch.nn.Parameter) for o in outputs):
            run.flags.append(F.raise_flag(F.TENSOR_SUBCLASS, structural.message, settings))
        _record(run, trial, structural)
        return None
    at_return = [o.detach().clone() for o in outputs]  # before waiting: what was ready when forward returned
    device.synchronize()
    still_running = wait_for_threads(threads_before, THREAD_JOIN_S, context.timer,
                                     f"forward (trial seed {trial.seed})")
    if still_running:
        run.notes.append(f"forward left {len(still_running)} thread(s) running")
    return outputs, structure, at_return


def _record(run: _Run, trial: Trial, comparison: Comparison) -> None:
    run.trials.append(TrialError(trial.seed, comparison.passed, comparison.max_abs_error, comparison.max_rel_error,
                                 comparison.message))
    if not comparison.passed:
        run.fail(comparison.failure or Failure.MISMATCH, f"trial seed {trial.seed}: {comparison.message}")


def _check_single_call(outputs: list[torch.Tensor], at_return: list[torch.Tensor], inputs: list[Any],
                       trial: Trial, device: Device, settings: HarnessSettings, run: _Run) -> None:
    """Cheats one call shows: unwritten (stale) output, work finishing after return, changed inputs."""
    poisoned = max(device.poisoned_fraction(o) for o in outputs)
    if poisoned >= 0.5:
        run.flags.append(F.raise_flag(F.STALE_OUTPUT, (
            f"{poisoned:.0%} of the output is the poison the harness wrote into freed memory just before the call: "
            "forward returned memory it never wrote (output taken from a recycled buffer)"), settings))
    elif poisoned > 0:
        run.notes.append(f"trial seed {trial.seed}: {poisoned:.2%} of the output was never written")
    if not all(_same_bits(a, b) for a, b in zip(at_return, outputs)):
        run.flags.append(F.raise_flag(F.ASYNC_OUTPUT, (
            "the output changed after forward returned: work continued on a side stream or thread that the "
            "caller's stream does not wait for, so a timer would miss it"), settings))
    changed = _changed_inputs(inputs, trial.inputs)
    if changed:
        expected = _changed_inputs(trial.inputs_after_reference, trial.inputs)
        after_reference = dict(tensor_leaves(trial.inputs_after_reference))
        now = dict(tensor_leaves(inputs))
        unexpected = [path for path in changed if path not in expected or path not in after_reference
                      or not _same_bits(now[path], after_reference[path].to(now[path].device))]
        if unexpected:
            run.flags.append(F.raise_flag(F.INPUT_MUTATION, (
                f"forward changed input(s) {_paths(unexpected)} in place"
                + ("" if not expected else f" (the reference changes {_paths(expected)}, differently)")), settings))


def _changed_inputs(now: list[Any], pristine: list[Any]) -> list[str]:
    """Where the tensors in ``now`` differ from those in ``pristine`` (their paths, ``[1][0]``), a tensor that is
    gone or new included."""
    before = dict(tensor_leaves(pristine))
    after = dict(tensor_leaves(now))
    return [path for path in dict.fromkeys([*before, *after])
            if path not in before or path not in after
            or not _same_bits(after[path], before[path].to(after[path].device))]


def _paths(paths: list[str]) -> str:
    """``[0], [2][1]``: where the inputs are, as indexing them would read."""
    return ", ".join(paths)


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    x, y = a.detach().contiguous().reshape(-1), b.detach().contiguous().reshape(-1)
    return bool(torch.equal(x.view(torch.uint8), y.view(torch.uint8)))


def _check_across_trials(reference: ReferenceData, settings: HarnessSettings, run: _Run) -> None:
    """Cached and constant outputs (several trials), an insensitive problem, and the precision achieved."""
    if reference.insensitive:
        run.flags.append(F.raise_flag(F.INSENSITIVE_PROBLEM, (
            f"the reference's output changes by at most {reference.sensitivity:.3g} between trials, within "
            "tolerance: a constant output would pass this problem's correctness check"), settings))
    refs = [t.outputs for t in reference.trials[:len(run.outputs)]]
    for t in range(1, len(run.outputs)):
        if (not run.trials[t].passed and max_difference(run.outputs[t], run.outputs[t - 1]) == 0
                and max_difference(refs[t], refs[t - 1]) > 0):
            run.flags.append(F.raise_flag(F.CACHED_OUTPUT, (
                f"trial seed {run.trials[t].seed} returned exactly the previous trial's output although its inputs "
                "differ: the output is cached across calls"), settings))
            break
    if len(run.outputs) > 1 and reference.sensitivity > 0:
        change = max(max_difference(out, run.outputs[0]) for out in run.outputs[1:])
        if change <= 0.01 * reference.sensitivity:
            run.flags.append(F.raise_flag(F.CONSTANT_OUTPUT, (
                f"the output changes by at most {change:.3g} across trials with different inputs, where the "
                f"reference's changes by {reference.sensitivity:.3g}: it does not depend on the input"), settings))
    if run.outputs and run.trials[0].passed:  # a wrong answer says nothing about precision
        report = precision_report(run.outputs[0], reference, settings)
        run.notes.extend(report.notes)
        run.flags.extend(report.flags)
        run.precision_bits = report.bits


def _check_operators(model: Any, reference: ReferenceData, settings: HarnessSettings, context: StageContext,
                     run: _Run) -> None:
    """Which PyTorch compute operators one extra call of forward runs (reference_call)."""
    inputs = clone_values(reference.trials[0].inputs)

    def call() -> Any:
        with context.timer.calling("forward (traced for the operators it runs)"):  # not the tracer's own start-up
            return model(*inputs)

    try:
        with torch.no_grad():
            _, names = trace_ops(call)
    except Exception as exc:
        run.notes.append(f"the operator trace could not run forward: {type(exc).__name__}: {exc}")
        return
    found = compute_ops(names)
    if found:
        shared = sorted(set(found) & set(reference.compute_ops))
        message = f"ModelNew.forward ran PyTorch compute operators: {describe_ops(found)}"
        if shared:
            message += f" ({', '.join(shared)} also run(s) in the reference)"
        run.flags.append(F.raise_flag(F.REFERENCE_CALL, message, settings))


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
        message = f"all {passed} trials passed"
    return VerifyResult(correct=failure is None, trials=tuple(run.trials), failure=failure, message=message,
                        flags=flags, notes=tuple(run.notes), precision_bits=run.precision_bits)

