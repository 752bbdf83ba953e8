"""The swapped model held to the untouched model's own faithfulness, for a model that computes in float16 or
bfloat16: both are measured against a float32 run of the untouched model (same weights, same inputs).

A fixed atol/rtol on a deep model's outputs cannot tell a kernel that rounds differently from one that is wrong:
every layer rounds in the model's dtype, and over many layers two correct computations drift apart by a few ulps
of the logits. Against the same model computed in float32, a correct kernel leaves the swapped model about as far
from that answer as the untouched model is; a wrong one leaves it much farther.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

from .compare import Comparison, leaves

# float32 models keep the tolerance check alone: their reference would be float64, which not every device runs
# (MPS has none) and which doubles the model's memory again.
REFERENCE_DTYPE = {"float16": "float32", "bfloat16": "float32"}

FIDELITY_FACTOR = 2.0
"""How much farther from the float32 run than the untouched model the swapped model may be, in relative RMS error
and in max abs error, output by output. Two computations that round in the same reduced precision land at about
the same distance from the float32 answer (their errors differ in sign, not in size), so a kernel that only rounds
differently (another order of summation, one rounding more or less) moves that distance by well under 2x; a kernel
that computes something else moves it by more than the whole model's rounding does."""


@dataclass(frozen=True)
class Distance:
    """How far one output is from the float32 run: ``||x - ref|| / ||ref||`` and ``max |x - ref|`` over the values
    the float32 run has finite (infinite when ``x`` is not finite where the float32 run is)."""

    relative_rms: float
    max_abs: float

    @property
    def finite(self) -> bool:
        return math.isfinite(self.relative_rms) and math.isfinite(self.max_abs)

    def within(self, allowed: Distance) -> bool:
        """At most :data:`FIDELITY_FACTOR` times ``allowed`` in both measures; never within an infinite distance
        (an untouched model that overflows where float32 does not leaves nothing to hold the kernels to)."""
        return allowed.finite and (self.relative_rms <= FIDELITY_FACTOR * allowed.relative_rms
                                   and self.max_abs <= FIDELITY_FACTOR * allowed.max_abs)

    def ratio(self, other: Distance) -> float:
        """How many times farther than ``other`` (the larger of the two measures' ratios)."""
        return max(_ratio(self.relative_rms, other.relative_rms), _ratio(self.max_abs, other.max_abs))

    def to_json(self) -> dict[str, float | None]:
        return {"relative_rms": _finite_or_none(self.relative_rms), "max_abs": _finite_or_none(self.max_abs)}


@dataclass(frozen=True)
class Reference:
    """The untouched model's outputs computed in ``dtype``, or None and ``why_not``."""

    dtype: str
    outputs: list[Any] | None
    why_not: str = ""


def reference_run(model: Any, inputs: tuple[Any, ...], dtype: str,
                  kwargs: dict[str, Any] | None = None) -> Reference | None:
    """Run a float32 copy of the untouched ``model`` (a whole model, or one layer) on ``inputs`` and ``kwargs``
    (floating tensors cast, inside tuples, lists and dicts too); None for a ``dtype`` that needs no reference. The
    copy is dropped before returning: it holds the weights in float32, twice a bfloat16 model's, and is needed for
    this one forward only."""
    import torch

    target = REFERENCE_DTYPE.get(dtype)
    if target is None:
        return None
    torch_dtype = getattr(torch, target)
    # a kernel package may have lowered float32 matmuls to TF32 when it was imported; the reference must not be
    matmul_precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    try:
        wide = copy.deepcopy(model).to(torch_dtype)
        with torch.no_grad():
            outputs = [leaf.detach() for leaf in leaves(wide(*_widened(inputs, torch_dtype),
                                                             **_widened(kwargs or {}, torch_dtype)))]
    except Exception as exc:  # out of memory, or a model that cannot be copied or cast: the tolerances alone judge
        first_line = (str(exc).strip().splitlines() or [""])[0]
        return Reference(target, None, f"{type(exc).__name__}: {first_line[:200]}")
    finally:
        torch.set_float32_matmul_precision(matmul_precision)
    return Reference(target, outputs)  # the copy goes with this frame


def _widened(value: Any, dtype: Any) -> Any:
    """``value`` with its floating tensors cast to ``dtype``, through tuples, lists and dicts."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (tuple, list)):
        return type(value)(_widened(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _widened(v, dtype) for k, v in value.items()}
    return value


def distance(output: Any, reference: Any) -> Distance:
    import torch

    out, ref = output.detach().double(), reference.detach().double()
    finite = torch.isfinite(ref)
    if not bool(torch.isfinite(out[finite]).all()):
        return Distance(math.inf, math.inf)
    error, ref = (out - ref)[finite], ref[finite]
    if error.numel() == 0:
        return Distance(0.0, 0.0)
    error_norm, scale = float(torch.linalg.vector_norm(error)), float(torch.linalg.vector_norm(ref))
    relative = error_norm / scale if scale else (0.0 if error_norm == 0 else math.inf)
    return Distance(relative, float(error.abs().max()))


def judge(check: Comparison, actual: list[Any], expected: list[Any], reference: Reference | None) -> dict[str, Any]:
    """The ``outputs`` part of the report: within the contract when the tolerance ``check`` passed, or else when
    every floating output of the swapped model (``actual``) is at most :data:`FIDELITY_FACTOR` times as far from
    the ``reference`` run as the untouched model's (``expected``)."""
    outputs: dict[str, Any] = {"within_contract": check.matches, "message": check.message,
                               "max_abs_error": check.max_abs_error, "rule": "tolerances", "reference": None,
                               "untouched_error": [], "swapped_error": [], "fidelity_factor": FIDELITY_FACTOR}
    if reference is None:
        return outputs
    if reference.outputs is None:
        outputs["message"] += f"; no {reference.dtype} reference to weigh it against ({reference.why_not})"
        return outputs
    pairs = _floating_pairs(actual, expected, reference.outputs)
    if pairs is None:  # outputs of another structure: the tolerance check has said why
        return outputs
    outputs["reference"] = f"{reference.dtype} run of the untouched model"
    outputs["untouched_error"] = [{"output": i, **untouched.to_json()} for i, untouched, _ in pairs]
    outputs["swapped_error"] = [{"output": i, **swapped.to_json()} for i, _, swapped in pairs]
    if check.matches:
        return outputs
    outputs["rule"] = f"fidelity to the {reference.dtype} run"
    far = [(i, untouched, swapped) for i, untouched, swapped in pairs if not swapped.within(untouched)]
    outputs["within_contract"] = not far
    if far:
        i, untouched, swapped = far[0]
        why = (f"output {i} is {swapped.ratio(untouched):.3g}x as far from the {reference.dtype} run as the "
               f"untouched model's, more than the {FIDELITY_FACTOR:g}x allowed")
        if not untouched.finite:
            why = f"output {i} of the untouched model is not finite where the {reference.dtype} run is"
        outputs["message"] = f"{why}; the tolerances: {check.message}"
    else:
        outputs["message"] = (f"as close to the {reference.dtype} run as the untouched model (within "
                              f"{FIDELITY_FACTOR:g}x); the tolerances alone: {check.message}")
    return outputs


def _floating_pairs(actual: list[Any], expected: list[Any],
                    reference: list[Any]) -> list[tuple[int, Distance, Distance]] | None:
    """(index, untouched distance, swapped distance) per floating output; None when the three runs' outputs do
    not line up (count, shapes) or a non-floating output of the swapped model differs."""
    import torch

    if not len(actual) == len(expected) == len(reference):
        return None
    pairs = []
    for i, (a, e, r) in enumerate(zip(actual, expected, reference)):
        if not a.shape == e.shape == r.shape:
            return None
        if not e.is_floating_point():
            if not torch.equal(a, e):
                return None
            continue
        pairs.append((i, distance(e, r), distance(a, r)))
    return pairs


def _ratio(value: float, base: float) -> float:
    if value == base:
        return 1.0
    return value / base if base else math.inf


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None
