"""The candidate's ``ModelNew``, built once per candidate in a worker and shared by verify, timing and profile.

``ModelNew`` is built from the same seed and constructor arguments as the reference's ``Model``; then the
reference's parameters and buffers are copied into it wherever a name and a shape match, so that a candidate that
keeps the reference's layers (``self.linear = nn.Linear(...)``) gets the same weights. The notes say what was
copied and what was not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ...candidate_module import import_candidate
from ...device import Device
from ...devices import make_device
from ...records import Backend, Candidate, StageContext
from ...settings import HarnessSettings
from .reference import ReferenceData, build_model, reference_data


@dataclass
class CandidateInstance:
    model: Any
    notes: tuple[str, ...]


_instances: dict[tuple[str, str], CandidateInstance] = {}


def harness_settings(context: StageContext) -> HarnessSettings:
    settings = context.settings
    if isinstance(settings, HarnessSettings):
        return settings
    return getattr(settings, "harness", None) or HarnessSettings()


def device_of(backend: Backend, context: StageContext) -> Device:
    """The worker's device (``context.device``); one made for ``backend`` where a caller gave none."""
    if context.device is not None:
        return context.device
    return make_device(backend)


def reference_for(backend: Backend, context: StageContext) -> ReferenceData:
    """The problem's reference data on the backend's device (computed once per worker)."""
    return reference_data(context.problem, device_of(backend, context), harness_settings(context),
                          backend.default_tolerance)


def candidate_instance(backend: Backend, candidate: Candidate, context: StageContext) -> CandidateInstance:
    """``ModelNew(*init_inputs)`` for this candidate with the reference's weights; raises what its code raises."""
    key = (str(context.workdir), candidate.digest)
    if key not in _instances:
        reference = reference_for(backend, context)
        module = import_candidate(candidate, context.workdir)
        model = build_model(module.ModelNew, reference.init_inputs, reference.seed, reference.device)
        _instances[key] = CandidateInstance(model, copy_reference_weights(reference, model))
    return _instances[key]


def copy_reference_weights(reference: ReferenceData, model: Any) -> tuple[str, ...]:
    """Copy the reference's parameters and buffers into ``model`` where names and shapes match; say so."""
    if not isinstance(model, torch.nn.Module):
        return ("ModelNew is not an nn.Module: no weights were copied from Model",)
    own_parameters = dict(model.named_parameters())
    own_buffers = dict(model.named_buffers())
    lines = []
    for kind, theirs, ours in (("parameters", reference.fresh_parameters, own_parameters),
                               ("buffers", reference.fresh_buffers, own_buffers)):
        copied, skipped = [], []
        with torch.no_grad():
            for name, value in theirs.items():
                target = ours.get(name)
                if target is not None and tuple(target.shape) == tuple(value.shape):
                    target.copy_(value)
                    copied.append(name)
                else:
                    skipped.append(name)
        if theirs:
            line = f"copied {len(copied)} of {len(theirs)} {kind} from Model into ModelNew (same name and shape)"
            if skipped:
                line += f"; not copied: {', '.join(skipped[:8])}{' ...' if len(skipped) > 8 else ''}"
            lines.append(line)
    if not lines:
        lines.append("Model has no parameters or buffers: nothing to copy into ModelNew")
    return tuple(lines)
