"""The problem's side of an evaluation that any process may hold: problem code is not secret, its answers are.

Per worker and problem, once: the problem's module, ``Model``'s init inputs (its fresh parameters, which the
candidate's parameter fallbacks copy, are built only when a fallback asks: :meth:`ProblemData.fresh_state`), the
seeds of the correctness trials and of the input sets the timed runs go through (one distinct set per run).
Inputs are generated from their seed when a call needs them (on the device, see :func:`seeded_inputs`), one set at
a time; of the timing sets only the first few stay resident, within a share of the memory the device has free
(:class:`SeededPool`).

No reference output is computed here. The expected outputs live in the trusted process that never imports
candidate code (``expected.py``); a worker that serves candidates ships each call's outputs there to be judged
(``shipping.py``), so nothing in a candidate's process holds an answer to copy or to poison.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import torch

from ...problem import import_problem_module
from ...records import Backend, Problem, ShapeVariant, ValueSpec
from ...shapes.inputs import variant_maker
from ...settings import HarnessSettings
from ...values import map_tensors, tensor_bytes
from .random_state import GeneratorStates, draws_on
from ...timing.timed_runs import pool_seeds

WARMUP_SEED_OFFSET = 10_000
VARIANT_SEED_OFFSET = 30_000  # the shape variants' inputs, past the trials' and the timing sets' seeds
# The timing sets kept resident never take more than this share of the memory the device has free (the candidate's
# own inputs, outputs and workspace need the rest), nor more than one input set or RESIDENT_FLOOR_BYTES, whichever is
# larger: a problem's memory stays in proportion to one call, and small sets are not made again for every run.
POOL_SHARE_OF_FREE = 0.25
RESIDENT_FLOOR_BYTES = 64 << 20

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice


@dataclass(frozen=True)
class Trial:
    """One correctness trial: its seed; its inputs are made afresh each time they are asked for. A trial at one of
    the problem's shape variants (``variant``) makes that variant's inputs."""

    seed: int
    module: ModuleType
    device: torch.device
    variant: ShapeVariant | None = None

    @property
    def inputs(self) -> list[Any]:
        return seeded_inputs(self.module, self.seed, self.device, self.variant)


@dataclass
class ProblemData:
    """What a worker knows of the problem: how to make its inputs and its model, never its answers."""

    problem: Problem
    module: ModuleType
    device: torch.device
    seed: int
    init_inputs: list[Any]
    trials: list[Trial]
    output_bytes: list[int]  # per output leaf, from the problem's description (what poisoning claims)
    pool: SeededPool | list[list[Any]] = field(default_factory=list)  # distinct input sets for the timing runs
    pool_seeds: list[int] = field(default_factory=list)
    variants: list[Trial] = field(default_factory=list)  # one call at each of the problem's shape variants

    def model(self) -> Any:
        """A new ``Model``, built from the init inputs under the run's seed on the device."""
        return build_model(self.module.Model, self.init_inputs, self.seed, self.device)

    def fresh_state(self) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """``Model``'s parameters and buffers before any forward, as its seeded construction makes them: built on
        the device each time this is asked and kept nowhere (a worker holding them would hold the weights again
        beside every candidate's own, for the rare candidate that needs them)."""
        model = self.model()
        if not isinstance(model, torch.nn.Module):
            return {}, {}
        return ({name: p.detach() for name, p in model.named_parameters()},
                {name: b.detach() for name, b in model.named_buffers()})

    @property
    def known_ops(self) -> list[str]:
        """The reference's operators known in this process: none (the reference never runs here)."""
        return []


ReferenceData = ProblemData  # the name plugins and older code use for the problem's side

_cache: dict[tuple[Any, ...], ProblemData] = {}


def reference_data(problem: Problem, device: HarnessDevice, settings: HarnessSettings,
                   backend: Backend | None = None, *, timing: bool = True) -> ProblemData:
    """The problem's data for ``problem`` on ``device``, made on first use in this process. A worker holds one
    problem's data at a time: taking another problem drops the previous one's (its device memory too). Without
    ``timing`` (the referee, which times nothing) no timing input set is made: for a large problem the one set
    kept resident is as large as a call's inputs."""
    key = (problem.digest, str(device.torch_device), repr(settings))
    if key not in _cache:
        forget_problems()
        device.release_memory()
        _cache[key] = _prepare(problem, device, settings)
    data = _cache[key]
    if timing and not data.pool_seeds:
        _prepare_timing(data, device, settings)
        device.synchronize()
    return data


def forget_problems() -> None:
    """Drop every problem's data held in this process."""
    _cache.clear()


def seeded_inputs(module: ModuleType, seed: int, device: torch.device,
                  variant: ShapeVariant | None = None) -> list[Any]:
    """The problem's ``get_inputs()`` under ``seed`` (its shape ``variant``'s inputs, when given), made on
    ``device`` (its random draws run there, not on the host: the same seed gives the same values in every process
    on the same kind of device). A generator a candidate's failed graph capture left unusable is repaired first
    (``random_state``)."""
    draws_on(device)
    torch.manual_seed(seed)
    with torch.device(device):
        values = module.get_inputs() if variant is None else variant_maker(module, variant)()
    return [to_device(value, device) for value in values]


def to_device(value: Any, device: torch.device) -> Any:
    """``value`` with every tensor inside it on ``device``."""
    return map_tensors(value, lambda t: t.to(device))


def clone_values(values: list[Any]) -> list[Any]:
    """Fresh copies of every tensor and container (the rest is immutable): no two calls share one."""
    return [map_tensors(v, torch.Tensor.clone) for v in values]


def build_model(cls: type, init_inputs: list[Any], seed: int, device: torch.device) -> Any:
    """``cls(*init_inputs)`` under ``seed``, moved to ``device`` when it is a module."""
    torch.manual_seed(seed)
    return model_on(cls(*clone_values(init_inputs)), device)


def model_on(model: Any, device: torch.device) -> Any:
    """``model`` moved to ``device`` when it is a module (``Module.to``); anything else as it is."""
    return model.to(device) if isinstance(model, torch.nn.Module) else model


def _prepare(problem: Problem, on: HarnessDevice, settings: HarnessSettings) -> ProblemData:
    device = on.torch_device
    module = import_problem_module(problem.path)
    torch.manual_seed(settings.seed)  # the init inputs drawn under the run's seed
    init_inputs = list(module.get_init_inputs())
    trials = [Trial(settings.seed + t, module, device) for t in range(settings.trials)]
    data = ProblemData(problem, module, device, settings.seed, init_inputs, trials, _output_bytes(problem),
                       variants=variant_trials(problem, module, device, settings))
    on.synchronize()
    return data


def variant_trials(problem: Problem, module: ModuleType, device: torch.device,
                   settings: HarnessSettings) -> list[Trial]:
    """One trial at each of the problem's shape variants, each with a seed of its own (none with
    ``harness.shapes = off``)."""
    if settings.shapes == "off":
        return []
    return [Trial(variant_seed(index, settings), module, device, variant)
            for index, variant in enumerate(problem.shapes.variants)]


def variant_seed(index: int, settings: HarnessSettings) -> int:
    """The seed of the inputs of the problem's shape variant ``index``."""
    return settings.seed + VARIANT_SEED_OFFSET + index


def output_bytes(outputs: tuple[ValueSpec, ...]) -> list[int]:
    """The bytes of each output leaf ``outputs`` describe."""
    sizes = []
    for output in outputs:
        for spec in output.tensors():
            dtype = getattr(torch, spec.dtype, torch.float32)
            sizes.append(math.prod(spec.shape) * dtype.itemsize)
    return sizes


def _output_bytes(problem: Problem) -> list[int]:
    return output_bytes(problem.outputs)


class SeededPool:
    """The timing runs' input sets, one distinct set per run: the first ``resident`` are made once and kept, the
    others are made from their seed each time a run asks (on the device, outside the timed region). Each kept set
    keeps the random generators' state as it was right after the set was made, and a run's clone of it puts that
    state back (``random_state.GeneratorStates``): a call that draws random numbers draws what it would have drawn
    on the set made afresh, which is what the referee's call on the same inputs drew."""

    def __init__(self, module: ModuleType, seeds: list[int], device: torch.device, resident: int,
                 first: tuple[list[Any], GeneratorStates]) -> None:
        self.module, self.seeds, self.device = module, seeds, device
        made = [first, *(_made_now(module, s, device) for s in seeds[1:resident])][:resident]
        self.kept = [inputs for inputs, _ in made]
        self._states = [states for _, states in made]

    def __len__(self) -> int:
        return len(self.seeds)

    def __getitem__(self, index: int) -> list[Any]:
        if index < len(self.kept):
            return self.kept[index]
        return seeded_inputs(self.module, self.seeds[index], self.device)

    def fresh(self, index: int) -> list[Any]:
        """A run's own copy of set ``index``, which it may change: a clone of a kept set (the generators put back
        as they were when it was made), else the set made now (made and then cloned, it took a third set's memory
        in the allocator's cache: 4 GiB more at 32768^2)."""
        if index < len(self.kept):
            inputs = clone_values(self.kept[index])
            self._states[index].restore()
            return inputs
        return seeded_inputs(self.module, self.seeds[index], self.device)


def _made_now(module: ModuleType, seed: int, device: torch.device) -> tuple[list[Any], GeneratorStates]:
    """The inputs of ``seed``, and the random generators' state right after they were made."""
    inputs = seeded_inputs(module, seed, device)
    return inputs, GeneratorStates.now(device)


def fresh_inputs(pool: SeededPool | list[list[Any]], index: int) -> list[Any]:
    """A run's own copy of timing set ``index`` (see :meth:`SeededPool.fresh`)."""
    return pool.fresh(index) if isinstance(pool, SeededPool) else clone_values(pool[index])


def resident_sets(settings: HarnessSettings, set_bytes: int, free_bytes: int) -> int:
    """How many timing input sets stay resident: within ``input_pool_mb``, within :data:`POOL_SHARE_OF_FREE` of
    the device's free memory (0: unknown) and within one set's size or :data:`RESIDENT_FLOOR_BYTES`; at most one
    per run. Where only one would fit, none is kept: one set kept spares one run in 23 a making of its inputs, and
    holds a call's inputs for the whole evaluation (a large problem's worker then held three sets at a call)."""
    runs = settings.warmup + settings.repetitions
    budget = min(settings.input_pool_mb << 20, max(set_bytes, RESIDENT_FLOOR_BYTES))
    if free_bytes > 0:
        budget = min(budget, int(free_bytes * POOL_SHARE_OF_FREE))
    fitting = min(runs, budget // max(set_bytes, 1))
    return fitting if fitting >= 2 else 0


def _prepare_timing(data: ProblemData, on: HarnessDevice, settings: HarnessSettings) -> None:
    """The seeds of the timing runs' distinct input sets, and the resident ones made."""
    data.pool_seeds = pool_seeds(settings)
    first = _made_now(data.module, data.pool_seeds[0], data.device)
    resident = resident_sets(settings, tensor_bytes(first[0]), on.memory().free)
    data.pool = SeededPool(data.module, data.pool_seeds, data.device, resident, first)
