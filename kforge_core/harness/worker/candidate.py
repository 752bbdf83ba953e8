"""The candidate's model, built in a worker and shared by verify, timing and profile.

The class is ``harness.candidate_class`` (``ModelNew``; a candidate that defines none but a ``Model`` is
evaluated as that ``Model``, and the verdict's notes say so). Its parameters are initialised as
:mod:`~kforge_core.harness.worker.parameter_init` says: verification decides which initialisation the candidate keeps
(:func:`keep_instance`), and timing and profile use that instance; before verification has run, the seeded
construction is what they get.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from ...candidate_module import candidate_class, candidate_class_name, import_candidate
from ...devices.harness_device import HarnessDevice
from ...devices import make_device
from ...records import Backend, Candidate, StageContext
from ...settings import HarnessSettings
from .parameter_init import FALLBACKS, Initialised, seeded
from .reference import ProblemData, reference_data


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


def device_of(backend: Backend, context: StageContext) -> HarnessDevice:
    """The worker's device (``context.device``); one made for ``backend`` where a caller gave none."""
    if context.device is not None:
        return context.device
    return make_device(backend)


def reference_for(backend: Backend, context: StageContext) -> ProblemData:
    """The problem's inputs and model on the backend's device (made once per worker; no reference output)."""
    return reference_data(context.problem, device_of(backend, context), harness_settings(context), backend)


def initialisations(backend: Backend, candidate: Candidate, context: StageContext
                    ) -> tuple[str, Iterator[Initialised]]:
    """The note on which class is evaluated, and the candidate built under each initialisation in turn (seeded
    construction first, then the fallbacks that change something), each built only when asked for. Building
    raises what the candidate's constructor raises."""
    reference = reference_for(backend, context)
    found = candidate_class(import_candidate(candidate, context.workdir), candidate_class_name(context))

    def built() -> Iterator[Initialised]:
        what = f"{found.cls.__name__}(*get_init_inputs())"
        with context.timer.building(what):  # a constructor may build (load_inline in __init__)
            first = seeded(found.cls, reference)
        yield first
        for fallback in FALLBACKS:
            with context.timer.building(what):
                other = fallback(found.cls, reference)
            if other is not None:
                yield other

    return found.note, built()


def keep_instance(candidate: Candidate, context: StageContext, model: Any, notes: tuple[str, ...]) -> None:
    """What verification decided: timing and profile use this model."""
    _instances[(str(context.workdir), candidate.digest)] = CandidateInstance(model, notes)


def forget_instances() -> None:
    """Drop every candidate model this process keeps (moving on to another problem)."""
    _instances.clear()


def candidate_instance(backend: Backend, candidate: Candidate, context: StageContext) -> CandidateInstance:
    """The candidate's model as verification kept it (the seeded construction before that); raises what its
    code raises."""
    key = (str(context.workdir), candidate.digest)
    if key not in _instances:
        note, attempts = initialisations(backend, candidate, context)
        first = next(attempts)
        notes = (note, f"parameters: {first.how} ({first.detail})")
        _instances[key] = CandidateInstance(first.model, tuple(n for n in notes if n))
    return _instances[key]
