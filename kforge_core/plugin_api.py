"""What a backend plugin may use of the core besides the hook contract: this module is the plugin's door.

A plugin's own code (``plugins/kforge_*/kforge_*/``) imports from the core only

* :mod:`kforge_core` (``hookimpl``, ``KForgeError``) and the contract: :mod:`kforge_core.hookspecs`, the records
  (:mod:`kforge_core.records`) and the device a vendor writes (:mod:`kforge_core.device`: ``Device``,
  ``DeviceClock``, ``MemoryStats``, ...);
* a language's shared package (``kforge_core.languages.*``), which every backend speaking that language shares;
* and this module, for everything else.

``tests/core/test_layout.py`` fails on any other core import from a plugin's code. The modules behind these names
change as the core does; the names here stay. A plugin's tests may import more of the core to build what they
check (a problem, a harness), but not the worker's internals (``kforge_core.harness.worker``).

In the worker, inside a stage hook (``kforge_compile``, ``kforge_verify``, ``kforge_profile``):

* :func:`candidate_traceback`: the failure as the generation agent should read it (the candidate's frames only);
* :func:`classify_exception`: the :class:`~kforge_core.records.Failure` an exception of candidate code is;
* :func:`limit_reached`: the sentence naming the worker's limit an exception met (its scratch space full, no
  process or thread left), or "": a stage that classifies failures itself gives those ``Failure.RESOURCE_LIMIT``;
* :func:`stage_device`: the worker's device for the backend;
* :func:`first_trial_inputs`: fresh copies of the problem's first verification inputs, on the device;
* :func:`verified_model`: the candidate's model as verification built it (same instance, same parameters);
* :func:`profile_with_torch`: the core's PyTorch-profiler profile of the candidate (its operators, its kernels);
* :class:`StageTimer`: ``context.timer``'s type, with which a stage marks its calls and builds for the limits.

The candidate's module, in the worker (and a plugin's own child process):

* :func:`import_for_compile`: the compile stage's import of the candidate, a build error as :class:`NotBuilt`;
  :func:`import_candidate`: the candidate's module imported from its scratch directory;
* :func:`candidate_class` (a :class:`CandidateClass`) and :func:`candidate_class_name`: the class the candidate
  defines (``ModelNew``, :data:`DEFAULT_CLASS`, else ``Model``).

The peaks a device states (``Device.stated_peaks``), in any process:

* :class:`DevicePeaks`, :class:`Peak` and :func:`peaks_of`: the device's bandwidth and FLOP/s per unit, each with
  its source.

Reading candidates and problems, in any process:

* :func:`candidate_lines`, :func:`innermost_candidate_line`, :class:`CandidateLine`: the candidate's own frames
  in a traceback; :func:`exception_line`: an exception's last line (``TypeError: message``);
* :func:`parsed_python_files`: the candidate's Python files with their syntax trees, without running them;
* :func:`import_problem_module`: a problem file imported as a module (in a plugin's own child process).

The problem's workload, for lowering and summaries:

* :func:`floor_bytes`: the bytes any forward must move (inputs and outputs once, parameters read once);
* :func:`problem_floor` and :class:`ProblemFloor`: those bytes, the reference's matrix FLOPs and the dtype they
  are measured in.

Records across a plugin's own process boundary:

* :func:`to_json` and :func:`record_from_json`: the core's JSON codec for frozen records.

Flag codes a stage may raise in its own records:

* :data:`BUILD_ERROR_CAUGHT`: a build failed, the candidate caught the error (as under PyTorch) and went on; the
  flag (never blocking) carries the build log for the agent.

In the KForge process, for summaries:

* :func:`compute_ops` and :func:`describe_ops`: the computing PyTorch operators among a profile's operator names,
  counted (work the candidate left to PyTorch), and a short text naming them.

Importing this module does not import torch (the functions that need the worker's reference or the profiler
import it when called), so a plugin may import it at the top of any module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .candidate_module import (
    DEFAULT_CLASS, CandidateClass, NotBuilt, candidate_class, candidate_class_name, import_candidate,
    import_for_compile,
)
from .candidate_source import parsed_python_files
from .codec import record_from_json, to_json
from .harness.flags import BUILD_ERROR_CAUGHT
from .harness.op_trace import compute_ops, describe_ops
from .harness.worker.faults import candidate_traceback, classify_exception
from .peaks import DevicePeaks, Peak, peaks_of
from .problem import import_problem_module
from .timing.stage_timer import StageTimer
from .tracebacks import CandidateLine, candidate_lines, exception_line, innermost_candidate_line
from .workload import ProblemFloor, floor_bytes, problem_floor
from .harness.worker.limit_hits import limit_reached

if TYPE_CHECKING:
    from .devices.harness_device import HarnessDevice
    from .records import Backend, Candidate, ProfileResult, StageContext

__all__ = [
    "BUILD_ERROR_CAUGHT", "DEFAULT_CLASS", "CandidateClass", "CandidateLine", "DevicePeaks", "NotBuilt", "Peak",
    "ProblemFloor", "StageTimer", "candidate_class", "candidate_class_name", "candidate_lines", "candidate_traceback",
    "classify_exception", "compute_ops", "describe_ops", "exception_line", "first_trial_inputs", "floor_bytes",
    "import_candidate", "import_for_compile", "import_problem_module", "innermost_candidate_line", "limit_reached",
    "parsed_python_files", "peaks_of", "problem_floor", "profile_with_torch", "record_from_json", "stage_device",
    "to_json", "verified_model",
]


def stage_device(backend: Backend, context: StageContext) -> HarnessDevice:
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


def profile_with_torch(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult:
    """The candidate's profile under the PyTorch profiler, as the core's generic profile stage takes it: the
    computing operators (``ops``, for the reference-call check), the kernels and the profiler's table. Imports
    torch."""
    from .builtin.torch_profile import profile_with_torch as profile

    return profile(backend, candidate, context)
