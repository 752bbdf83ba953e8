"""What a backend plugin may use of the harness: this module, and nothing under ``kforge_core.harness``.

The harness's own modules (``harness.worker.*``, ``harness.host.*``) change as the harness does; the names here
stay. Besides this module a plugin uses the hook contract (:mod:`kforge_core.hookspecs`), the records
(:mod:`kforge_core.records`), the device base class (:mod:`kforge_core.device`), the candidate's module
(:mod:`kforge_core.candidate_module`) and a language's shared module (``kforge_core.languages.*``).

In the worker, inside a stage hook (``kforge_compile``, ``kforge_verify``, ``kforge_profile``):

* :func:`candidate_traceback`: the failure as the generation agent should read it (the candidate's frames only);
* :func:`classify_exception`: the :class:`~kforge_core.records.Failure` an exception of candidate code is;
* :func:`limit_reached`: the sentence naming the worker's limit an exception met (its scratch space full, no
  process or thread left), or "": a stage that classifies failures itself gives those ``Failure.RESOURCE_LIMIT``;
* :func:`stage_device`: the worker's device for the backend;
* :func:`first_trial_inputs`: fresh copies of the problem's first verification inputs, on the device;
* :func:`verified_model`: the candidate's model as verification built it (same instance, same parameters).

Flag codes a stage may raise in its own records:

* :data:`BUILD_ERROR_CAUGHT`: a build failed, the candidate caught the error (as under PyTorch) and went on; the
  flag (never blocking) carries the build log for the agent.

In the KForge process, for summaries:

* :func:`compute_ops` and :func:`describe_ops`: the computing PyTorch operators among a profile's operator names,
  counted (work the candidate left to PyTorch), and a short text naming them.

Importing this module does not import torch (the functions that need the worker's reference import it when
called), so a plugin may import it at the top of any module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .harness.flags import BUILD_ERROR_CAUGHT
from .harness.op_trace import compute_ops, describe_ops
from .harness.worker.faults import candidate_traceback, classify_exception
from .harness.worker.limit_hits import limit_reached

if TYPE_CHECKING:
    from .device import Device
    from .records import Backend, Candidate, StageContext

__all__ = ["BUILD_ERROR_CAUGHT", "candidate_traceback", "classify_exception", "compute_ops", "describe_ops", "first_trial_inputs",
           "limit_reached", "stage_device", "verified_model"]


def stage_device(backend: Backend, context: StageContext) -> Device:
    """The worker's device (``context.device``), or one made for ``backend`` where the caller gave none."""
    from .harness.worker.candidate import device_of

    return device_of(backend, context)


def first_trial_inputs(backend: Backend, context: StageContext) -> list[Any]:
    """Fresh copies of the inputs of the problem's first verification trial, on the backend's device: what a
    stage calls ``forward`` on to build, warm up or profile the candidate."""
    from .harness.worker.candidate import reference_for
    from .harness.worker.reference import clone_values

    return clone_values(reference_for(backend, context).trials[0].inputs)


def verified_model(backend: Backend, candidate: Candidate, context: StageContext) -> Any:
    """The candidate's model as verification uses it (built once per candidate in the worker); raises what the
    candidate's constructor raises."""
    from .harness.worker.candidate import candidate_instance

    return candidate_instance(backend, candidate, context).model
