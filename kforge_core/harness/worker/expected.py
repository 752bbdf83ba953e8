"""The reference's answers. Computed only in the referee: a worker that never imports candidate code.

Per problem: ``Model`` built under the run's seed, how its outputs nest, the tolerance per output, how much its
output changes between trials (a constant passes an insensitive problem), its median forward time on the device,
its outputs at the problem's shape variants (``variant_expected.py``) and, on first use, the operators it runs. Expected outputs are computed one call at a time; they are kept in host
memory while they fit :data:`KEPT_BYTES`, else computed again when asked for. The float64 reference is computed
when a candidate's first trial is judged and freed after it.

Device memory: the referee holds the model once. The model is built in host memory, and its untouched copy is made
there before the model moves to the device (nothing is copied back from the device); float64 runs and the operator
trace are made from that copy straight onto the device, one tensor at a time; where the model's
weights are large (:data:`PARKED_FROM_BYTES`), the model itself waits in host memory while the float64 reference
runs. So the referee holds the weights once, and twice their size in float64 for that one call, not three and four
times. For a problem large for its device whose answers all fit the host budget (the trials', the variants' and
those of every timing input set), the answers are computed ahead and the model waits in host memory between calls:
while the candidate and the baselines are timed, the referee holds none of the weights (docs/verification.md, "The
memory rule").
"""

from __future__ import annotations

import contextlib
import copy
import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

import torch

from ...devices.cpu import host_memory_free
from ...records import Backend, Problem
from ...settings import HarnessSettings
from ...timing.timed_runs import pool_seeds
from ...tolerances import tolerance_in_effect
from ...values import flatten_output, map_tensors, tensor_bytes
from ..op_trace import compute_ops, trace_ops
from ..problem_size import large_for_device
from .compare import max_difference, within_tolerance
from .host_copies import host_copy
from .reference import ProblemData, build_model, clone_values, model_on, reference_data, seeded_inputs
from .variant_expected import VariantAnswers, variant_answers

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice

KEPT_BYTES = 1 << 30  # expected outputs kept in host memory per problem; beyond, they are computed again
KEPT_SHARE_OF_FREE = 0.25  # and never more than this share of the host memory this process may still take
PARKED_FROM_BYTES = 256 << 20  # weights this large wait in host memory while the float64 reference runs


@dataclass
class Expected:
    """The reference side of judging, for one problem on this process's device."""

    data: ProblemData
    model: Any  # Model, built under the seed, never handed to anyone
    fresh_model: Any  # a copy before any forward, its weights in host memory (float64 runs and the trace start from it)
    structure: tuple[Any, ...]
    tolerances: list[tuple[float, float]]  # per output leaf
    tolerance_notes: list[str]
    forward_s: float
    sensitivity: float  # largest change of the reference output between trials
    insensitive: bool  # every trial's output within tolerance of the first's: a constant passes
    kept: dict[int, list[torch.Tensor]] = field(default_factory=dict)  # seed -> outputs, in host memory
    variants: VariantAnswers = field(default_factory=VariantAnswers)  # at the problem's shape variants
    parked: bool = False  # the model waits in host memory between calls (every answer asked for is kept)
    _ops: list[str] | None = None

    def outputs(self, seed: int) -> list[torch.Tensor]:
        """The reference's output leaves for the inputs of ``seed``, on the device."""
        if seed in self.kept:
            return [o.to(self.data.device) for o in self.kept[seed]]
        return self.call(seed)[0]

    def call(self, seed: int) -> tuple[list[torch.Tensor], list[Any]]:
        """Run the reference on fresh inputs of ``seed``: its output leaves, and what it left in its inputs. A
        parked model comes to the device for the call and goes back after it."""
        inputs = seeded_inputs(self.data.module, seed, self.data.device)
        with self._on_device(), torch.no_grad():
            leaves = [o.detach() for o in flatten_output(self.model(*inputs))[0]]
        return leaves, inputs

    @contextlib.contextmanager
    def _on_device(self) -> Iterator[None]:
        if not self.parked:
            yield
            return
        self.model.to(self.data.device)
        try:
            yield
        finally:
            self.model.to("cpu")

    def float64_outputs(self, seed: int, hand_back: Callable[[], None] = lambda: None) \
            -> tuple[list[torch.Tensor] | None, str]:
        """The reference computed in float64 on the inputs of ``seed``, or why it could not be; ``hand_back``
        returns the device's idle cache once large weights are parked in host memory (their blocks, half the size
        of the float64 ones, would serve none of them), once the float32 inputs are replaced by their float64
        copies, and again once the float64 call is over, before the weights come back."""
        if not isinstance(self.fresh_model, torch.nn.Module):
            return None, "the reference is not an nn.Module"
        try:
            with contextlib.nullcontext() if self.parked else _parked(self.model, self.data.device, hand_back):
                exact = self._float64_call(seed, hand_back)
                # the float64 model and inputs are gone (their frame ended): their blocks go back before the
                # float32 weights return to the device, which would otherwise come back beside them
                hand_back()
            return exact, ""
        except Exception as exc:  # a model that does not run in float64 has no precision estimate
            return None, f"the reference does not run in float64 ({type(exc).__name__}: {exc})"

    def _float64_call(self, seed: int, hand_back: Callable[[], None] = lambda: None) -> list[torch.Tensor]:
        """The float64 model, made from the untouched host copy straight onto the device, called on the inputs
        of ``seed`` in float64: its output leaves. The model and the inputs go when this returns. Each float32
        input goes as its float64 copy takes its place (no name holds it after: a loop variable did, the last
        input, a third of a 3 GiB GEMM's footprint, through the call), and their blocks, half the size of any
        float64 one, are handed back (``hand_back``) before the call."""
        model64 = model_copy(self.fresh_model, self.data.device, torch.float64)
        args = seeded_inputs(self.data.module, seed, self.data.device)
        for index in range(len(args)):  # one input in both precisions at a time
            args[index] = map_tensors(args[index], _as_float64)
        hand_back()
        with torch.no_grad():
            return [o.detach() for o in flatten_output(model64(*args))[0]]

    @property
    def ops(self) -> list[str]:
        """Every operator the reference's forward runs, traced on first use."""
        if self._ops is None:
            inputs = clone_values(self.data.trials[0].inputs)
            with torch.no_grad():
                _, self._ops = trace_ops(lambda: model_copy(self.fresh_model, self.data.device)(*inputs))
        return self._ops

    @property
    def compute_ops(self) -> list[str]:
        return sorted(compute_ops(self.ops))


_cache: dict[tuple[Any, ...], Expected] = {}


def expected_for(problem: Problem, device: HarnessDevice, settings: HarnessSettings,
                 backend: Backend | None = None) -> Expected:
    """``problem``'s expected outputs on ``device``, computed on first use in this process (one problem at a
    time: another problem's are dropped first)."""
    key = (problem.digest, str(device.torch_device), repr(settings), backend.name if backend else "",
           backend.default_tolerance if backend else ())
    if key not in _cache:
        _cache.clear()
        data = reference_data(problem, device, settings, backend, timing=False)
        _cache[key] = _compute(data, device, settings, backend)
    return _cache[key]


def _compute(data: ProblemData, on: HarnessDevice, settings: HarnessSettings, backend: Backend | None) -> Expected:
    """The reference over every trial, one at a time: its time, structure, tolerances and sensitivity."""
    # built on the host as data.model() builds it, its untouched copy made there before the model moves to the device
    # (not copied back from the device: 5 s for 2_ShallowWideMLP's 8 GiB); the model that answers is the one built
    model = build_model(data.module.Model, data.init_inputs, data.seed, torch.device("cpu"))
    fresh_model = host_model_copy(model)
    model = model_on(model, data.device)
    kept: dict[int, list[torch.Tensor]] = {}
    seconds, first, structure, sensitivity, insensitive, kept_bytes = [], None, (), 0.0, True, 0
    free = host_memory_free()
    budget = min(KEPT_BYTES, int(free * KEPT_SHARE_OF_FREE)) if free else KEPT_BYTES
    tolerances: list[tuple[float, float]] = []
    notes: list[str] = []
    with torch.no_grad():
        for trial in data.trials:
            inputs = trial.inputs
            on.synchronize()
            start = time.perf_counter()
            result = model(*inputs)
            on.synchronize()
            seconds.append(time.perf_counter() - start)
            leaves, structure = flatten_output(result)
            leaves = [o.detach() for o in leaves]
            del result, inputs
            if first is None:
                tolerances, notes = _tolerances(leaves, settings, backend)
                first = [host_copy(o) for o in leaves]
            else:
                sensitivity = max(sensitivity, max_difference(leaves, first))
                insensitive = insensitive and within_tolerance(leaves, first, tolerances)
            size = sum(o.numel() * o.element_size() for o in leaves)
            if kept_bytes + size <= budget:
                kept[trial.seed] = [host_copy(o) for o in leaves]
                kept_bytes += size
            del leaves
    on.synchronize()
    variants = variant_answers(data.variants, model, structure, on, budget - kept_bytes)
    parked = _parked_between_calls(data, model, on, settings, kept, variants, budget)
    return Expected(data, model, fresh_model, structure, tolerances, notes, statistics.median(seconds), sensitivity,
                    insensitive and len(data.trials) > 1, kept, variants, parked)


def _parked_between_calls(data: ProblemData, model: Any, on: HarnessDevice, settings: HarnessSettings,
                          kept: dict[int, list[torch.Tensor]], variants: VariantAnswers, budget: int) -> bool:
    """For a problem large for its device (``problem_size``) whose weights are :data:`PARKED_FROM_BYTES` or more:
    the answers of every timing input set computed now and kept with the trials' in host memory, and the model
    moved there to wait between calls, so that the referee holds none of the weights while the candidate and the
    baselines are timed (``2_ShallowWideMLP``'s 8.6 GB stayed on the device beside both timing workers). Only where
    every answer a candidate's evaluation asks for is then kept within ``budget``: the trials', each variant's and
    the timing sets'. True when the model was moved."""
    if on.host_cpu or not isinstance(model, torch.nn.Module) or len(kept) < len(data.trials) \
            or len(variants.kept) < len(variants.trials) - len(variants.dropped) \
            or _weight_bytes(model) < PARKED_FROM_BYTES \
            or not large_for_device(data.problem, on.memory().total):
        return False
    room = budget - tensor_bytes(list(kept.values())) - tensor_bytes(list(variants.kept.values()))
    timing: dict[int, list[torch.Tensor]] = {}
    with torch.no_grad():
        for seed in pool_seeds(settings):
            if seed in kept:
                continue
            leaves = [o.detach() for o in flatten_output(model(*seeded_inputs(data.module, seed, data.device)))[0]]
            room -= tensor_bytes(leaves)
            if room < 0:  # not all of them fit: the model stays, and answers what is not kept as before
                return False
            timing[seed] = [host_copy(o) for o in leaves]
            del leaves
    kept.update(timing)
    model.to("cpu")
    on.synchronize()
    return True


def _weight_bytes(model: torch.nn.Module) -> int:
    return tensor_bytes(list(_tensors(model)))


def host_model_copy(model: Any) -> Any:
    """A deep copy of ``model`` whose parameters and buffers lie in host memory (:func:`model_copy`)."""
    return model_copy(model, torch.device("cpu"))


def model_copy(model: Any, device: torch.device, dtype: torch.dtype | None = None) -> Any:
    """A deep copy of ``model`` whose parameters and buffers are made on ``device`` one tensor at a time, the
    floating ones in ``dtype`` where given (as ``Module.to`` converts them): no whole copy is made on the way (in the
    memory the weights come from, or in float32 beside the float64 one). Anything else it holds is copied as it is.
    The copy is then moved as a whole (``Module.to``, which moves nothing more), so that a module redoes what its own
    ``_apply`` does after a move (a recurrent layer flattens its weights for cuDNN)."""
    if not isinstance(model, torch.nn.Module):
        return copy.deepcopy(model)

    def made(tensor: torch.Tensor) -> torch.Tensor:
        converts = dtype is not None and (tensor.is_floating_point() or tensor.is_complex())
        return tensor.detach().to(device, dtype if converts else None, copy=True)

    memo: dict[int, Any] = {}
    for parameter in model.parameters():
        memo[id(parameter)] = torch.nn.Parameter(made(parameter), requires_grad=parameter.requires_grad)
    for buffer in model.buffers():
        memo[id(buffer)] = made(buffer)
    copied = copy.deepcopy(model, memo)
    return copied.to(device, dtype) if dtype is not None else copied.to(device)


@contextlib.contextmanager
def _parked(model: Any, device: torch.device, hand_back: Callable[[], None] = lambda: None) -> Iterator[None]:
    """``model``'s weights in host memory for the block, where they are large (:data:`PARKED_FROM_BYTES`), and back
    on ``device`` after it: the same parameters, the same values (on the host CPU, where they already lie, both
    moves are nothing). ``hand_back`` is called once they are parked."""
    weights = _weight_bytes(model) if isinstance(model, torch.nn.Module) else 0
    if weights < PARKED_FROM_BYTES:
        yield
        return
    model.to("cpu")
    hand_back()
    try:
        yield
    finally:
        model.to(device)


def _tensors(model: torch.nn.Module) -> Iterator[torch.Tensor]:
    yield from model.parameters()
    yield from model.buffers()


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


def _as_float64(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to(torch.float64) if tensor.is_floating_point() else tensor.clone()
