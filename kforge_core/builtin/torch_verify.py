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
from typing import Any

import torch

from ..device import Device
from ..harness import flags as F
from ..harness.op_trace import compute_ops, describe_ops, trace_ops
from ..harness.worker.candidate import candidate_instance, device_of, harness_settings, reference_for
from ..harness.worker.compare import Comparison, as_outputs, check_structure, compare_outputs, max_difference
from ..harness.worker.faults import candidate_traceback, classify_exception
from ..harness.worker.precision import precision_report
from ..harness.worker.reference import ReferenceData, Trial, clone_values
from ..harness.worker.threads import join_threads, new_threads
from ..records import Backend, Candidate, Failure, Flag, StageContext, TrialError, VerifyResult
from ..settings import HarnessSettings

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
    run = _Run()
    try:
        instance = candidate_instance(backend, candidate, context)
    except Exception as exc:
        message = "ModelNew(*get_init_inputs()) raised:\n" + candidate_traceback(exc, context.workdir)
        return VerifyResult(correct=False, failure=classify_exception(exc, device), message=message)
    run.notes.extend(instance.notes)
    for trial in reference.trials:
        if not _run_trial(instance.model, trial, reference, device, settings, context, run):
            break
    if run.failure not in (Failure.RUNTIME, Failure.OUT_OF_MEMORY, Failure.DEVICE_FAULT, Failure.OUTPUT_TYPE):
        _check_across_trials(reference, settings, run)
    if run.failure is None:  # the operator check decides nothing for a candidate that failed already
        _check_operators(instance.model, reference, settings, context, run)
    return _result(run)


def _run_trial(model: Any, trial: Trial, reference: ReferenceData, device: Device, settings: HarnessSettings,
               context: StageContext, run: _Run) -> bool:
    """One trial; False when verification cannot go on (an exception, outputs of the wrong kind)."""
    inputs = clone_values(trial.inputs)
    device.poison(reference.output_bytes)
    threads_before = set(threading.enumerate())
    try:
        with torch.no_grad():
            outputs = as_outputs(model(*inputs))
    except Exception as exc:
        run.fail(classify_exception(exc, device), f"trial seed {trial.seed}: forward raised:\n"
                 + candidate_traceback(exc, context.workdir))
        return False
    finally:
        device.stop_poisoning()
    structural = check_structure(outputs, trial.outputs)
    if structural is not None:
        if any(isinstance(o, torch.Tensor) and type(o) not in (torch.Tensor, torch.nn.Parameter) for o in outputs):
            run.flags.append(F.raise_flag(F.TENSOR_SUBCLASS, structural.message, settings))
        _record(run, trial, structural)
        return False
    at_return = [o.detach().clone() for o in outputs]  # before waiting: what was ready when forward returned
    device.synchronize()
    still_running = join_threads(new_threads(threads_before), THREAD_JOIN_S)
    if still_running:
        run.notes.append(f"forward left {len(still_running)} thread(s) running")
    comparison = compare_outputs(outputs, trial.outputs, reference.tolerances)
    _record(run, trial, comparison)
    _check_single_call(outputs, at_return, inputs, trial, device, settings, run)
    run.outputs.append([o.detach().clone() for o in outputs])
    return True


def _record(run: _Run, trial: Trial, comparison: Comparison) -> None:
    run.trials.append(TrialError(trial.seed, comparison.passed, comparison.max_abs_error, comparison.max_rel_error,
                                 comparison.message))
    if not comparison.passed:
        run.fail(comparison.failure or Failure.MISMATCH, f"trial seed {trial.seed}: {comparison.message}")


def _check_single_call(outputs: tuple[torch.Tensor, ...], at_return: list[torch.Tensor], inputs: list[Any],
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
    changed = [i for i, (now, pristine) in enumerate(zip(inputs, trial.inputs))
               if isinstance(now, torch.Tensor) and not _same_bits(now, pristine)]
    if changed:
        expected = [i for i, (after, pristine) in enumerate(zip(trial.inputs_after_reference, trial.inputs))
                    if isinstance(after, torch.Tensor) and not _same_bits(after.to(pristine.device), pristine)]
        unexpected = [i for i in changed if i not in expected or not _same_bits(
            inputs[i], trial.inputs_after_reference[i].to(inputs[i].device))]
        if unexpected:
            run.flags.append(F.raise_flag(F.INPUT_MUTATION, (
                f"forward changed input(s) {unexpected} in place"
                + ("" if not expected else f" (the reference changes {expected}, differently)")), settings))


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
    try:
        with torch.no_grad():
            _, names = trace_ops(lambda: model(*inputs))
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
        failure, message = Failure.CHEAT, "; ".join(f"{f.code}: {f.message}" for f in blocking)
    if failure is None and not run.trials:
        failure, message = Failure.HARNESS, "no trial ran"
    passed = sum(t.passed for t in run.trials)
    if failure is None:
        message = f"all {passed} trials passed"
    return VerifyResult(correct=failure is None, trials=tuple(run.trials), failure=failure, message=message,
                        flags=flags, notes=tuple(run.notes), precision_bits=run.precision_bits)

