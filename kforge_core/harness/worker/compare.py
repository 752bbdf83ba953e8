"""Comparing a candidate's outputs with the reference's: type, count, device, shape, dtype, NaN/Inf, tolerance.

Errors are computed in float32 for float32 and narrower outputs, in float64 for float64 and integer ones, a chunk of
:data:`CHUNK_ELEMENTS` at a time (the temporaries stay small whatever an output's size). ``max_rel_error`` is ``max |c - r| / max(|r|, atol)``: relative where the
reference is large, absolute-like where it is near zero, so one tiny reference value does not make it infinite.
The pass rule is ``torch.allclose``'s: ``|c - r| <= atol + rtol * |r|`` everywhere, NaN only where the reference
has NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ...records import Failure
from ...values import describe_structure, output_labels


@dataclass(frozen=True)
class Comparison:
    """One trial's outcome: passed, or the failure class and what was seen."""

    passed: bool
    failure: Failure | None
    max_abs_error: float
    max_rel_error: float
    message: str = ""
    outside_share: float = 0.0  # the share of the compared elements outside tolerance (1.0: no elements compared)


def check_structure(outputs: Sequence[Any], reference: Sequence[torch.Tensor], *,
                    structure: tuple[Any, ...] | None = None,
                    reference_structure: tuple[Any, ...] | None = None, what: str = "") -> Comparison | None:
    """A failed Comparison when the outputs (the leaves of a result, nested as ``structure`` says: see
    :func:`kforge_core.values.flatten_output`; flat when not given) are not plain tensors nested like the
    reference's; None when they are.

    Runs before any tensor operation touches the outputs: a tensor subclass must not get to run its own code
    inside the comparison.
    """
    structure = structure if structure is not None else (None,) * len(outputs)
    reference_structure = reference_structure if reference_structure is not None else (None,) * len(reference)
    for label, out in zip(output_labels(structure), outputs):
        if not isinstance(out, torch.Tensor):
            return _failed(Failure.OUTPUT_TYPE, f"{label} is a {type(out).__name__}, expected a torch.Tensor")
        if type(out) not in (torch.Tensor, torch.nn.Parameter):
            return _failed(Failure.OUTPUT_TYPE, f"{label} is a {type(out).__qualname__}, a tensor subclass")
    flat = all(node is None for node in (*structure, *reference_structure))
    if flat and len(structure) != len(reference_structure):
        return _failed(Failure.OUTPUT_TYPE, f"forward returned {len(structure)} outputs, the reference "
                                            f"{len(reference_structure)}")
    if structure != reference_structure:
        return _failed(Failure.OUTPUT_TYPE, f"forward returned {describe_structure(structure)}, the reference "
                                            f"{describe_structure(reference_structure)}")
    for label, out, ref in zip(output_labels(structure), outputs, reference):
        if out.device.type != ref.device.type:
            return _failed(Failure.OUTPUT_TYPE, f"{label} is on {out.device}, the reference's on {ref.device}")
        if tuple(out.shape) != tuple(ref.shape):
            return _failed(Failure.SHAPE, f"{what}{label} has shape {list(out.shape)}, expected {list(ref.shape)}")
        if out.dtype != ref.dtype:
            dtype, expected = str(out.dtype).removeprefix("torch."), str(ref.dtype).removeprefix("torch.")
            return _failed(Failure.DTYPE, f"{label} has dtype {dtype}, expected {expected}")
    return None


def plain_tensors(outputs: Sequence[Any], structure: tuple[Any, ...]) -> Comparison | None:
    """A failed Comparison when an output leaf is not a plain tensor (checked in the candidate's process before
    any tensor operation touches the outputs: a subclass gets no chance to run its own code); None when all are."""
    for label, out in zip(output_labels(structure), outputs):
        if not isinstance(out, torch.Tensor):
            return _failed(Failure.OUTPUT_TYPE, f"{label} is a {type(out).__name__}, expected a torch.Tensor")
        if type(out) not in (torch.Tensor, torch.nn.Parameter):
            return _failed(Failure.OUTPUT_TYPE, f"{label} is a {type(out).__qualname__}, a tensor subclass")
    return None


def _failed(failure: Failure, message: str) -> Comparison:
    return Comparison(False, failure, math.inf, math.inf, message, outside_share=1.0)


def compare_outputs(
    outputs: Sequence[torch.Tensor], reference: Sequence[torch.Tensor], tolerances: Sequence[tuple[float, float]],
    structure: tuple[Any, ...] = (),
) -> Comparison:
    """Compare structurally checked outputs (leaves) with the reference's, one (atol, rtol) per leaf; the
    ``structure`` names them in messages."""
    worst_abs = worst_rel = 0.0
    problems: list[str] = []
    failure: Failure | None = None
    outside = compared = 0.0
    labels = output_labels(structure) if structure else [f"output {i}" for i in range(len(outputs))]
    for label, out, ref, (atol, rtol) in zip(labels, outputs, reference, tolerances):
        result = _compare_one(out, ref.to(out.device), atol, rtol)
        worst_abs, worst_rel = max(worst_abs, result.max_abs_error), max(worst_rel, result.max_rel_error)
        outside, compared = outside + result.outside_share * out.numel(), compared + out.numel()
        if not result.passed:
            prefix = f"{label}: " if len(outputs) > 1 else ""
            problems.append(prefix + result.message)
            if failure is None or result.failure is Failure.NAN_INF:
                failure = result.failure
    if failure is None:
        return Comparison(True, None, worst_abs, worst_rel)
    return Comparison(False, failure, worst_abs, worst_rel, "; ".join(problems),
                      outside_share=outside / compared if compared else 1.0)


# Elements compared at a time: the comparison's float32 temporaries stay near 100 MiB, whatever the output's size.
CHUNK_ELEMENTS = 1 << 22


@dataclass
class _Tally:
    """What the chunks of one output leaf showed so far."""

    max_abs: float = 0.0
    max_rel: float = 0.0
    count: int = 0  # elements outside tolerance
    nans: int = 0  # NaN where the reference has none
    infs: int = 0  # Inf where the reference has no such Inf
    worst: float = -1.0  # the largest error among the elements outside tolerance, and where (flat), with both values
    worst_at: int = 0
    worst_values: tuple[Any, Any] = (0.0, 0.0)

    def add(self, start: int, c: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> None:
        diff = (c - r).abs()
        scale = r.abs()
        if bool(torch.isfinite(diff).all()):  # the common case: no NaN or Inf on either side
            bad = diff > atol + rtol * scale
        else:
            ref_nan, out_nan = torch.isnan(r), torch.isnan(c)
            unexpected_nan = out_nan & ~ref_nan
            unexpected_inf = torch.isinf(c) & ~(torch.isinf(r) & (c == r))
            diff = torch.where(ref_nan & out_nan, torch.zeros_like(diff), diff)
            diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
            scale = scale.nan_to_num(0.0)
            bad = (diff > atol + rtol * scale) | unexpected_nan | unexpected_inf
            self.nans += int(unexpected_nan.sum().item())
            self.infs += int(unexpected_inf.sum().item())
        self.max_abs = max(self.max_abs, float(diff.max().item()))
        self.max_rel = max(self.max_rel, float((diff / scale.clamp(min=max(atol, 1e-30))).max().item()))
        count = int(bad.sum().item())
        if count:
            self.count += count
            error, index = _worst(diff, bad)
            if error > self.worst:  # the first of equal errors, as argmax over the whole
                self.worst, self.worst_at = error, start + index
                self.worst_values = (c[index].item(), r[index].item())


def _worst(diff: torch.Tensor, bad: torch.Tensor) -> tuple[float, int]:
    """The largest of ``diff`` where ``bad``, and its (flat) index: the first of equal ones."""
    scored = torch.where(bad, diff, torch.full_like(diff, -1.0))
    index = int(scored.argmax().item())
    return float(scored[index].item()), index


def _compare_one(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> Comparison:
    if not (out.is_floating_point() or out.is_complex()):
        return _compare_exact(out, ref)
    if not out.is_cpu:
        looked = _first_look(out, ref, atol, rtol)
        if looked is not None:
            return Comparison(True, None, *looked)
    tally = _Tally()
    for start, c, r in flat_chunks(out, ref):
        tally.add(start, _working(c), _working(r), atol, rtol)
    if tally.count == 0:
        return Comparison(True, None, tally.max_abs, tally.max_rel)
    where = _unravel(tally.worst_at, out.shape)
    detail = (f"{tally.count:,} of {out.numel():,} elements outside atol={atol:g}, rtol={rtol:g}; "
              f"max abs error {tally.max_abs:.4g} at {where} (candidate {_shown(tally.worst_values[0])}, "
              f"reference {_shown(tally.worst_values[1])})")
    share = tally.count / out.numel()
    if tally.nans or tally.infs:
        return Comparison(False, Failure.NAN_INF, tally.max_abs, tally.max_rel,
                          f"{tally.nans:,} NaN and {tally.infs:,} Inf values where the reference is finite; " + detail,
                          share)
    return Comparison(False, Failure.MISMATCH, tally.max_abs, tally.max_rel, detail, share)


def _first_look(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> tuple[float, float] | None:
    """On a device, the common case without a wait per chunk: every chunk's largest errors, its elements outside
    tolerance and whether it holds NaN or Inf stay on the device, read back once at the end (the four waits a
    chunk of :class:`_Tally` were a large part of judging a multi-GiB output on a busy GPU). The largest absolute and
    relative errors when every element is finite and within tolerance; None otherwise, and the chunks are
    compared again one at a time, for the figures and the message a failure needs."""
    seen = []
    for _, c, r in flat_chunks(out, ref):
        c, r = _working(c), _working(r)
        diff = (c - r).abs()
        scale = r.abs()
        outside = (diff > atol + rtol * scale).sum() + (~torch.isfinite(diff)).sum()
        relative = diff / scale.clamp(min=max(atol, 1e-30))
        seen.append(torch.stack([diff.max().double(), relative.max().double(), outside.double()]))
    if not seen:
        return 0.0, 0.0
    figures = torch.stack(seen)
    max_abs, max_rel, outside = torch.cat([figures[:, :2].max(dim=0).values, figures[:, 2].sum().reshape(1)]).tolist()
    return (max_abs, max_rel) if outside == 0 else None


def flat_chunks(*tensors: torch.Tensor, size: int = 0):
    """``(start, piece, piece, ...)``: tensors of one size, flattened, ``size`` elements at a time (by default
    :data:`CHUNK_ELEMENTS`, read when called)."""
    size = size or CHUNK_ELEMENTS
    flat = [t.detach().reshape(-1) for t in tensors]
    for start in range(0, flat[0].numel(), size):
        yield (start, *(f[start:start + size] for f in flat))


def _working(t: torch.Tensor) -> torch.Tensor:
    """float32 suffices to judge errors against tolerances of float32 and narrower types; float64 stays;
    integers are compared exactly in float64."""
    if t.is_complex():
        return t.detach().to(torch.complex128)
    return t.detach().to(torch.float32 if t.is_floating_point() and t.dtype != torch.float64 else torch.float64)


def _compare_exact(out: torch.Tensor, ref: torch.Tensor) -> Comparison:
    count, max_abs, worst, worst_at = 0, 0.0, -1.0, 0
    for start, o, r in flat_chunks(out, ref):
        diff = (o.to(torch.float64) - r.to(torch.float64)).abs()
        max_abs = max(max_abs, float(diff.max().item()))
        differs = int((diff > 0).sum().item())
        if differs:
            count += differs
            error, index = _worst(diff, diff > 0)
            if error > worst:
                worst, worst_at = error, start + index
    if count == 0:
        return Comparison(True, None, max_abs, 0.0)
    return Comparison(False, Failure.MISMATCH, max_abs, math.inf,
                      f"{count:,} of {out.numel():,} elements differ (exact dtype); max abs error {max_abs:.4g} "
                      f"at {_unravel(worst_at, out.shape)}", count / out.numel())


def _unravel(flat: int, shape: torch.Size) -> list[int]:
    return [int(i) for i in torch.unravel_index(torch.tensor(flat), shape)] if len(shape) else []


def _shown(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def max_difference(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor]) -> float:
    """The largest absolute elementwise difference over matching outputs (inf when shapes differ, NaN counts
    as infinitely different)."""
    if any(x.shape != y.shape for x, y in zip(a, b)):
        return math.inf
    maxima: dict[torch.device, list[torch.Tensor]] = {}  # per chunk, where it is: read once at the end
    for x, y in zip(a, b):
        for _, px, py in flat_chunks(x, y):  # ``y`` may be on the host: it comes over a chunk at a time
            d = (_working(px) - _working(py.to(px.device, non_blocking=py.is_pinned()))).abs().nan_to_num(math.inf)
            maxima.setdefault(d.device, []).append(d.max().double())
    return max((float(torch.stack(found).max().item()) for found in maxima.values()), default=0.0)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when ``a`` and ``b`` hold the same bytes: same shape, dtype and bit pattern (so ``-0.0`` is not ``0.0``
    and a NaN equals only the same NaN), where a change in place or after return must show however small."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    x, y = a.detach().contiguous().reshape(-1), b.detach().contiguous().reshape(-1)
    return bool(torch.equal(x.view(torch.uint8), y.view(torch.uint8)))


def within_tolerance(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor],
                     tolerances: Sequence[tuple[float, float]]) -> bool:
    """True when ``a`` is within tolerance of ``b`` everywhere (``b`` plays the reference)."""
    for x, y, (atol, rtol) in zip(a, b, tolerances):
        if x.shape != y.shape:
            return False
        for _, px, py in flat_chunks(x, y):
            wx, wy = _working(px), _working(py.to(px.device))
            if not bool(((wx - wy).abs() <= atol + rtol * wy.abs()).all().item()):
                return False
    return True
