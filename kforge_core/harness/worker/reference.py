"""The problem's side of an evaluation, computed in a worker before any candidate code is imported there.

Per worker and problem, once: the seeded inputs of every correctness trial and the reference's outputs for them,
the float64 reference for the precision estimate, and the distinct input sets the timed runs cycle through (and
the operators the reference runs, when a candidate first needs them). All of it stays alive on the device, so
comparisons run there; memory the reference freed is poisoned before each candidate call (``Device.poison``).
A warm worker serving several candidates of one problem computes all this once; a worker moved on to another
problem computes that problem's.
"""

from __future__ import annotations

import copy
import functools
import statistics
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import torch

from ...problem import import_problem_module
from ...records import Backend, Problem
from ...settings import HarnessSettings
from ...tolerances import tolerance_in_effect
from ...values import flatten_output, map_tensors, tensor_bytes
from ..op_trace import compute_ops, trace_ops
from ..timed_runs import checked_timed_runs, pool_index
from .compare import max_difference, within_tolerance

WARMUP_SEED_OFFSET = 10_000
TIMING_SEED_OFFSET = 20_000

if TYPE_CHECKING:
    from ...device import Device


@dataclass
class Trial:
    """One correctness trial: pristine inputs (never handed to anyone) and the reference's outputs."""

    seed: int
    inputs: list[Any]
    outputs: list[torch.Tensor]  # the leaves of the reference's result (values.flatten_output)
    inputs_after_reference: list[Any]  # what the reference left in its own copy of the inputs


@dataclass
class ReferenceData:
    problem: Problem
    module: ModuleType
    device: torch.device
    seed: int
    init_inputs: list[Any]
    fresh_parameters: dict[str, torch.Tensor]  # Model's parameters before any forward
    fresh_buffers: dict[str, torch.Tensor]  # and its buffers
    trials: list[Trial]
    structure: tuple[Any, ...]  # how the reference's outputs nest (values.flatten_output)
    tolerances: list[tuple[float, float]]  # per output leaf
    tolerance_notes: list[str]  # per output dtype: the tolerance in effect and where it came from
    fresh_model: Any  # a copy of Model before any forward, for the operator trace
    float64_outputs: list[torch.Tensor] | None  # trial 0 computed in float64, for the precision estimate
    float64_note: str
    forward_s: float = 0.0  # the median time of the reference's forward over the trials, on the device
    pool: list[list[Any]] = field(default_factory=list)  # distinct input sets for warm-up and timed runs
    pool_seeds: list[int] = field(default_factory=list)
    checked_runs: dict[int, list[torch.Tensor]] = field(default_factory=dict)  # timed run -> reference outputs
    sensitivity: float = 0.0  # largest change of the reference output between trials
    _ops: list[str] | None = None

    @property
    def output_bytes(self) -> list[int]:
        return [t.numel() * t.element_size() for t in self.trials[0].outputs]

    @property
    def ops(self) -> list[str]:
        """Every operator the reference's forward runs, traced on first use (the trace is not free: the
        dispatch mode loads torch._dynamo, so a worker pays for it only when a candidate gets that far)."""
        if self._ops is None:
            with torch.no_grad():
                _, self._ops = trace_ops(lambda: copy.deepcopy(self.fresh_model)(*clone_values(self.trials[0].inputs)))
        return self._ops

    @property
    def known_ops(self) -> list[str]:
        """The reference's operators if they were traced already in this process, else none."""
        return self._ops or []

    @property
    def compute_ops(self) -> list[str]:
        return sorted(compute_ops(self.ops))

    @functools.cached_property
    def insensitive(self) -> bool:
        """True when every trial's reference output is within tolerance of the first's: a constant passes."""
        first = self.trials[0].outputs
        return len(self.trials) > 1 and all(
            within_tolerance(t.outputs, first, self.tolerances) for t in self.trials[1:]
        )


_cache: dict[tuple[Any, ...], ReferenceData] = {}


def reference_data(problem: Problem, device: Device, settings: HarnessSettings,
                   backend: Backend | None = None) -> ReferenceData:
    """The reference data for ``problem`` on ``device``, computed on first use in this process; ``backend``'s
    default tolerances apply where the settings give none. A worker holds one problem's data at a time: taking
    another problem drops the previous one's (its device memory too)."""
    key = (problem.digest, str(device.torch_device), repr(settings), backend.name if backend else "",
           backend.default_tolerance if backend else ())
    if key not in _cache:
        for other in [k for k in _cache if k[0] != problem.digest]:
            del _cache[other]
        _cache[key] = _compute(problem, device, settings, backend)
    return _cache[key]


def seeded_inputs(module: ModuleType, seed: int, device: torch.device) -> list[Any]:
    torch.manual_seed(seed)
    return [to_device(value, device) for value in module.get_inputs()]


def to_device(value: Any, device: torch.device) -> Any:
    """``value`` with every tensor inside it on ``device``."""
    return map_tensors(value, lambda t: t.to(device))


def clone_values(values: list[Any]) -> list[Any]:
    """Fresh copies of every tensor and container (the rest is immutable): the reference and the candidate never
    share one."""
    return [map_tensors(v, torch.Tensor.clone) for v in values]


def build_model(cls: type, init_inputs: list[Any], seed: int, device: torch.device) -> Any:
    """``cls(*init_inputs)`` under ``seed``, moved to ``device`` when it is a module."""
    torch.manual_seed(seed)
    model = cls(*clone_values(init_inputs))
    return model.to(device) if isinstance(model, torch.nn.Module) else model


def _compute(problem: Problem, on: Device, settings: HarnessSettings, backend: Backend | None) -> ReferenceData:
    device = on.torch_device
    module = import_problem_module(problem.path)
    torch.manual_seed(settings.seed)
    init_inputs = list(module.get_init_inputs())
    model = build_model(module.Model, init_inputs, settings.seed, device)
    parameters, buffers = _named_state(model)
    fresh_model = copy.deepcopy(model)
    trials, seconds, structure = [], [], ()
    with torch.no_grad():
        for t in range(settings.trials):
            seed = settings.seed + t
            inputs = seeded_inputs(module, seed, device)
            own = clone_values(inputs)
            start = time.perf_counter()
            result = model(*own)
            on.synchronize()
            seconds.append(time.perf_counter() - start)
            leaves, structure = flatten_output(result)
            trials.append(Trial(seed, inputs, [o.detach().clone() for o in leaves], own))
        float64_outputs, float64_note = _float64_reference(fresh_model, trials[0].inputs)
    tolerances, notes = _tolerances(trials[0].outputs, settings, backend)
    data = ReferenceData(problem, module, device, settings.seed, init_inputs, parameters, buffers, trials, structure,
                         tolerances, notes, fresh_model, float64_outputs, float64_note,
                         forward_s=statistics.median(seconds))
    data.sensitivity = max((max_difference(t.outputs, trials[0].outputs) for t in trials[1:]), default=0.0)
    _prepare_timing(data, model, settings)
    on.synchronize()
    return data


def _tolerances(outputs: list[torch.Tensor], settings: HarnessSettings, backend: Backend | None
                ) -> tuple[list[tuple[float, float]], list[str]]:
    """``(atol, rtol)`` per output leaf, and a note per dtype saying which tolerance is in effect and why."""
    pairs, notes = [], {}
    for output in outputs:
        dtype = str(output.dtype).removeprefix("torch.")
        tolerance = tolerance_in_effect(dtype, settings, backend.default_tolerance if backend else (),
                                        backend.name if backend else "")
        pairs.append((tolerance.atol, tolerance.rtol))
        notes[dtype] = f"tolerance for {dtype} outputs: {tolerance.describe()}"
    return pairs, list(notes.values())


def _named_state(model: Any) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    if not isinstance(model, torch.nn.Module):
        return {}, {}
    parameters = {name: p.detach().clone() for name, p in model.named_parameters()}
    buffers = {name: b.detach().clone() for name, b in model.named_buffers()}
    return parameters, buffers


def _float64_reference(model: torch.nn.Module, inputs: list[Any]) -> tuple[list[torch.Tensor] | None, str]:
    """The reference computed in float64 on the first trial's inputs, or why it could not be."""
    try:
        model64 = copy.deepcopy(model).to(torch.float64) if isinstance(model, torch.nn.Module) else None
        if model64 is None:
            return None, "the reference is not an nn.Module"
        args = [map_tensors(v, _as_float64) for v in inputs]
        outputs = [o.detach().clone() for o in flatten_output(model64(*args))[0]]
        return outputs, ""
    except Exception as exc:  # a model that does not run in float64 has no precision estimate
        return None, f"the reference does not run in float64 ({type(exc).__name__}: {exc})"


def _as_float64(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to(torch.float64) if tensor.is_floating_point() else tensor.clone()


def _prepare_timing(data: ReferenceData, model: Any, settings: HarnessSettings) -> None:
    """Distinct seeded input sets for warm-up and timed runs, within ``input_pool_mb``, and the reference's
    outputs for the timed runs whose outputs are checked again."""
    runs = settings.warmup + settings.repetitions
    first = data.trials[0].inputs
    set_bytes = tensor_bytes(first) or 1
    size = max(2, min(runs, settings.input_pool_mb * 1024 * 1024 // set_bytes))
    data.pool_seeds = [settings.seed + TIMING_SEED_OFFSET + i for i in range(size)]
    data.pool = [seeded_inputs(data.module, s, data.device) for s in data.pool_seeds]
    with torch.no_grad():
        for run in checked_timed_runs(settings):
            inputs = clone_values(data.pool[pool_index(run, settings, size)])
            data.checked_runs[run] = [o.detach().clone() for o in flatten_output(model(*inputs))[0]]

