"""The precision a candidate computes at, measured against the reference computed in float64.

``bits = -log2(||out - ref64|| / ||ref64||)``: how many leading bits of the output agree with the float64 answer,
over the whole tensor. A float32 computation usually agrees to 20-24 bits, one done in TF32 or float16 to about
10-12, one in bfloat16 to about 8. The candidate is flagged ``precision_downgrade`` when it agrees to fewer bits
than :func:`floor_bits` allows: under the ``fp32`` contract, :data:`MARGIN_BITS` fewer than both the reference
itself and its dtype's mantissa would (an error 64 times the reference's own, the signature of work done in a
narrower type than the problem's); under a contract that allows a narrower type, at most that, and
:data:`CONTRACT_MARGIN_BITS` fewer than the narrower type's mantissa.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ...precision_contract import MANTISSA_BITS, PrecisionContract
from ...records import Flag
from ...settings import HarnessSettings
from ...values import output_labels
from .. import flags as F
from .compare import flat_chunks

CHECKED_DTYPES = ("float32", "float16", "bfloat16")  # float64 outputs are compared with float64 itself
MARGIN_BITS = 6.0
# Under a narrower contract the narrow type's rounding dominates the error, so agreement is predictable: measured on
# GEMMs (K from 256 to 8192), TF32 and float16 inputs agree to 11.4-11.8 bits, bfloat16 to 8.4-8.8, fp8 (e4m3) to
# 3.4-4.8. Two bits under the mantissa keeps each type above its floor and the next narrower one below it.
CONTRACT_MARGIN_BITS = 2.0
_EXACT_BITS = 60.0


@dataclass(frozen=True)
class PrecisionReport:
    notes: tuple[str, ...]
    flags: tuple[Flag, ...]
    bits: float | None = None  # the fewest bits any output agrees to; None when not estimated


def floor_bits(reference_bits: float, dtype: str, contract: PrecisionContract) -> float:
    """The fewest bits of agreement with float64 an output of ``dtype`` may have under ``contract``, given the
    ``reference_bits`` its reference in ``dtype`` reaches. A contract only ever lowers today's fp32 floor."""
    own = min(reference_bits, MANTISSA_BITS[dtype]) - MARGIN_BITS
    if not contract.narrows(dtype):
        return own
    return min(own, contract.mantissa_bits - CONTRACT_MARGIN_BITS)


CHUNK_ELEMENTS = 1 << 24  # compared at a time: 128 MiB in float64, whatever the output's size


def agreement_bits(output: torch.Tensor, exact: torch.Tensor, chunk: int = CHUNK_ELEMENTS) -> float:
    """Leading bits of ``output`` that agree with ``exact`` in the relative L2 sense (60 when identical).

    Computed ``chunk`` elements at a time, each chunk's norms kept where ``exact`` is and combined at the end
    without overflow (the norm of the chunks' norms): an output of gigabytes never has a float64 copy (one made
    temporaries several times the output's size at once, and the referee ran out of device memory where the
    problem itself fits), and nothing waits for the device until the last chunk is queued (a wait per chunk, and a
    masked copy of each, took seconds over a multi-GB output)."""
    errors, scales = [], []
    for _, piece, truth in flat_chunks(output, exact, size=chunk):
        piece = piece.to(truth.device, torch.float64, non_blocking=piece.is_pinned())  # ``output`` may be on the host
        truth = truth.to(torch.float64)
        finite = torch.isfinite(piece) & torch.isfinite(truth)
        errors.append(torch.linalg.vector_norm(torch.where(finite, piece - truth, 0.0)))
        scales.append(torch.linalg.vector_norm(torch.where(finite, truth, 0.0)))
        del piece, truth, finite
    if not errors:
        return _EXACT_BITS
    error = float(torch.linalg.vector_norm(torch.stack(errors)).item())
    scale = float(torch.linalg.vector_norm(torch.stack(scales)).item())
    if error == 0:
        return _EXACT_BITS
    bits = -math.log2(error) if scale == 0 else -math.log2(error / scale)
    return min(max(bits, 0.0), _EXACT_BITS) + 0.0  # + 0.0: never print "-0.0"


def precision_report(outputs: list[torch.Tensor], expected: list[torch.Tensor],
                     float64_outputs: list[torch.Tensor] | None, float64_note: str, structure: tuple[Any, ...],
                     settings: HarnessSettings) -> PrecisionReport:
    """Notes on the precision of one trial's outputs (``expected``: the reference's own for the same inputs,
    ``float64_outputs``: the reference in float64, or None and why not), and a flag when it is below what the
    precision contract allows."""
    if float64_outputs is None:
        return PrecisionReport((f"precision not estimated: {float64_note}",), ())
    contract = settings.contract
    notes, flags, reached = [], [], []
    labels = output_labels(structure)
    for label, out, ref32, ref64 in zip(labels, outputs, expected, float64_outputs):
        dtype = str(ref32.dtype).removeprefix("torch.")
        if dtype not in CHECKED_DTYPES or out.shape != ref32.shape:
            continue
        theirs, ours = agreement_bits(out, ref64), agreement_bits(ref32, ref64)
        reached.append(theirs)
        label = label if len(outputs) > 1 else "the output"
        floor = floor_bits(ours, dtype, contract)
        notes.append(f"precision: {label} agrees with a float64 reference to {theirs:.1f} bits "
                     f"(the {dtype} reference: {ours:.1f} bits; the {contract.name} contract's floor: {floor:.1f})")
        if theirs < floor:
            flags.append(F.raise_flag(F.PRECISION_DOWNGRADE, (
                f"{label} agrees with float64 to {theirs:.1f} bits, the {dtype} reference to {ours:.1f}: it is "
                f"computed below the {contract.name} contract ({contract.computes_in}; at least {floor:.1f} bits "
                "here; float16/TF32 agree to about 11 bits, bfloat16 to 8)"), settings))
    return PrecisionReport(tuple(notes), tuple(flags), min(reached) if reached else None)
