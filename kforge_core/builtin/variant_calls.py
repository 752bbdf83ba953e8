"""The candidate's one call at each of the problem's shape variants, in verification, after its trials passed.

Each call goes through the harness's one call path (``shipping.call_candidate``) on the variant's seeded inputs,
with the memory it should write poisoned first, and its outputs leave at once to be judged by the referee, as a
trial's do (for a problem small for its device, judged while the next variant is called). What the referee cannot
see is said here: a call that raised, or returned what is not tensors, is this worker's own claim of a failure
there (it can only make the verdict worse: ``harness/shape_findings.py``).
"""

from __future__ import annotations

from typing import Any

import torch

from ..devices.harness_device import HarnessDevice
from ..harness.call_kinds import VARIANT
from ..harness.worker.compare import plain_tensors
from ..harness.worker.faults import candidate_traceback, classify_exception
from ..harness.worker.reference import ProblemData, Trial, output_bytes
from ..harness.problem_size import large_for_device
from ..harness.protocol import Shipped
from ..harness.worker.shipping import call_candidate, pack, send, send_ahead
from ..records import Failure, ShapeCheck, StageContext, VariantOutcome
from ..settings import HarnessSettings
from ..values import flatten_output


def call_at_variants(model: Any, reference: ProblemData, device: HarnessDevice, settings: HarnessSettings,
                     context: StageContext) -> ShapeCheck | None:
    """Call ``model`` once at each variant and ship its outputs; the failures only this process saw, as a check
    (every other variant ``not_run`` in it: the referee's conclusion says how those went). None: no variant."""
    if not reference.variants:
        return None
    overlap = not large_for_device(context.problem, device.memory().total)
    claims, waiting = [], None
    for trial in reference.variants:
        failed, shipment = _call(model, trial, device, context)
        if waiting is not None:  # the previous call's judgement, read before this one is shipped
            waiting()
            waiting = None
        if shipment is not None:
            if overlap:  # judged while the next variant is called: a problem small for its device has room
                waiting = send_ahead(shipment)
            else:
                send(shipment)
        assert trial.variant is not None
        claims.append(failed or VariantOutcome(trial.variant.name, "not_run"))
    if waiting is not None:
        waiting()
    return ShapeCheck(settings.shapes, reference.problem.shapes, tuple(claims))


def _call(model: Any, trial: Trial, device: HarnessDevice, context: StageContext
          ) -> tuple[VariantOutcome | None, Shipped | None]:
    """One call at ``trial``'s variant and its outputs written to be judged; or the failure when it raised or
    returned no tensors."""
    variant = trial.variant
    assert variant is not None
    label = f"shape variant {variant.name} (seed {trial.seed})"
    inputs = trial.inputs
    device.poison(output_bytes(variant.outputs))
    try:
        with context.timer.calling(f"forward ({label})"), torch.no_grad():
            outputs, structure = flatten_output(call_candidate(model, inputs))
            device.synchronize()
    except Exception as exc:
        return VariantOutcome(variant.name, "failed", classify_exception(exc, device),
                              "forward raised:\n" + candidate_traceback(exc, context.workdir)), None
    finally:
        device.stop_poisoning()
    wrong_kind = plain_tensors(outputs, structure)
    if wrong_kind is not None:
        return VariantOutcome(variant.name, "failed", wrong_kind.failure or Failure.OUTPUT_TYPE,
                              wrong_kind.message), None
    return None, pack(label, VARIANT, trial.seed, [o.detach() for o in outputs], structure, {}, context.workdir,
                      variant=variant.name)
