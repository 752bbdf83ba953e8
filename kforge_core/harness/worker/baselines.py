"""The baselines a candidate is compared with: the problem's ``Model`` as it is ("eager") and under
``torch.compile`` ("compile"), timed exactly like candidates, from the same seeded input sets. Runs inside the
baseline worker only (it never runs candidate code).

A baseline is built (and compiled) once per problem and kept, so that its timed runs can be asked for in blocks,
interleaved with the candidate's in another worker; a request for no runs only builds it, ahead of need. The model
every baseline wraps can be built on the host earlier still (:func:`build_on_host`): its constructor is CPU work
that needs no device.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

import torch

from ...settings import HarnessSettings
from ...timing.stage_timer import StageTimer
from ...tracebacks import exception_line
from ..protocol import BaselineResults
from .reference import ProblemData, build_model, fresh_inputs, model_on
from .run_timing import time_runs, timing_method

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice

_built: dict[str, Any] = {}  # baseline name -> its callable, for the reference in _built_for
_MODEL = "the model"  # the key in _built of the model every baseline wraps
_HOST_MODEL = "the model, on the host"  # the same, built by build_on_host and not moved to the device yet
_built_for: list[ProblemData] = []


def measure_baselines(names: tuple[str, ...], reference: ProblemData, device: HarnessDevice,
                      settings: HarnessSettings, runs: tuple[int, int] | None = None,
                      timer: StageTimer | None = None, timers: tuple[str, ...] = (),
                      held_ms: float = 0.0) -> BaselineResults:
    """Time ``names`` over the timed runs ``runs`` (all by default); ``(0, 0)`` builds them only. With ``timer``,
    each timed call is marked as a candidate's is, so the KForge process times the baselines' calls from outside
    too: what its clock adds to theirs is what it allows a candidate's (``harness/host/outside_clock.py``).
    ``timers``: the timers measured (every one the device has when empty); ``held_ms``: each call sleeps that long
    after the baseline ran (:func:`held`)."""
    samples, figures, errors, launch_bound = [], [], [], []
    method = timing_method(device, settings, reference, timers)
    for name in names:
        try:
            call = _baseline(name, reference)
            if runs == (0, 0):
                continue
            if held_ms:
                call = held(call, held_ms)
            timed = time_runs(call, reference, device, settings, timer=timer,
                              runs=range(*runs) if runs is not None else None, timers=timers, series=name)
            samples.append((name, tuple(timed.samples_ms[method.headline])))
            figures.append((name, timed.figures()))
            if bound := timed.launch_bound():
                launch_bound.append((name, bound))
        except Exception as exc:  # a baseline that cannot be measured is reported, not fatal
            _built.pop(name, None)
            errors.append((name, f"{name} baseline failed: {exception_line(exc)}"))
    return BaselineResults(tuple(samples), tuple(errors), method, figures=tuple(figures),
                           launch_bound=tuple(launch_bound))


def held(call: Callable[..., Any], held_ms: float) -> Callable[..., Any]:
    """``call``, then a sleep of ``held_ms``, in each call: the KForge process waits through it as through a
    candidate's call of that length, and the worker's pool of threads has been idle as long when the outputs are
    copied after the call, as after a candidate's call that does not use it."""

    def then_a_wait(*inputs: Any) -> Any:
        outputs = call(*inputs)
        time.sleep(held_ms / 1e3)
        return outputs

    return then_a_wait


def build_on_host(reference: ProblemData) -> str:
    """Build the model every baseline of ``reference`` wraps on the host, where it is not built yet: what
    ``reference.model()`` does but its move to the device, which waits for the first baseline's build
    (:func:`_baseline`). The parameters are the same: the constructor runs on the host under the same seed either
    way. A constructor that fails leaves nothing: the baseline's own build fails the same way and says so. Says
    what it did."""
    _for(reference)
    if _MODEL in _built or _HOST_MODEL in _built:
        return "the model was built already"
    try:
        _built[_HOST_MODEL] = build_model(reference.module.Model, reference.init_inputs, reference.seed,
                                          torch.device("cpu"))
    except Exception as exc:  # said again, as the baseline's failure, when a baseline is built
        return f"the model was not built on the host: {exception_line(exc)}"
    return "the model was built on the host"


def _for(reference: ProblemData) -> None:
    """Keep what is built for ``reference``: a new problem drops the last one's baselines."""
    if not _built_for or _built_for[0] is not reference:
        _built.clear()
        _built_for[:] = [reference]


def _baseline(name: str, reference: ProblemData) -> Any:
    """Baseline ``name`` for ``reference``, built on first use. Every baseline wraps the one model (``torch.compile``
    keeps the module's own parameters; freezing them is not its default), so the weights are on the device once,
    not once per baseline."""
    _for(reference)
    if name not in _built:
        if _MODEL not in _built:
            on_host = _built.pop(_HOST_MODEL, None)
            _built[_MODEL] = reference.model() if on_host is None else model_on(on_host, reference.device)
        _built[name] = _prepared(name, _built[_MODEL], reference)
    return _built[name]


def _prepared(name: str, model: torch.nn.Module, reference: ProblemData):
    if name == "eager":
        return model
    if name == "compile":
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(*fresh_inputs(reference.pool, 0))  # compiling happens here, outside the timed runs
        return compiled
    raise ValueError(f"unknown baseline {name!r}")
