"""``ModelNew`` built (as verification will use it) and called once on the first trial's inputs, then the GPU
drained: what a shader compiled in ``__init__`` or on the first call needs to be compiled in the compile stage."""

from __future__ import annotations

from kforge_core.harness.worker.candidate import candidate_instance, device_of, reference_for
from kforge_core.harness.worker.reference import clone_values
from kforge_core.records import Backend, Candidate, StageContext


def run_first_forward(backend: Backend, candidate: Candidate, context: StageContext) -> None:
    import torch

    reference = reference_for(backend, context)
    model = candidate_instance(backend, candidate, context).model
    with torch.no_grad():
        model(*clone_values(reference.trials[0].inputs))
    device_of(backend, context).synchronize()
