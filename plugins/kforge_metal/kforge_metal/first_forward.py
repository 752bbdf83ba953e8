"""``ModelNew`` built (as verification will use it) and called once on the first trial's inputs, then the GPU
drained: what a shader compiled in ``__init__`` or on the first call needs to be compiled in the compile stage."""

from __future__ import annotations

from kforge_core.plugin_api import first_trial_inputs, stage_device, verified_model
from kforge_core.records import Backend, Candidate, StageContext


def run_first_forward(backend: Backend, candidate: Candidate, context: StageContext) -> None:
    import torch

    model = verified_model(backend, candidate, context)
    with torch.no_grad(), context.timer.calling("the first forward"):  # the call's time limit, not the build's
        model(*first_trial_inputs(backend, context))
        stage_device(backend, context).synchronize()
