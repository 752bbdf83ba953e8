"""The precision a candidate computes at, measured against the reference computed in float64.

``bits = -log2(||out - ref64|| / ||ref64||)``: how many leading bits of the output agree with the float64 answer,
over the whole tensor. A float32 computation usually agrees to 20-24 bits, one done in TF32 or float16 to about
10-12, one in bfloat16 to about 8. The candidate is flagged ``precision_downgrade`` when it agrees to
:data:`MARGIN_BITS` fewer bits than both the reference itself and its dtype's mantissa would: an error 64 times
the reference's own, the signature of work done in a narrower type than the problem's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from ...records import Flag
from ...settings import HarnessSettings
from .. import flags as F

if TYPE_CHECKING:
    from .reference import ReferenceData

MANTISSA_BITS = {torch.float32: 24, torch.float16: 11, torch.bfloat16: 8}
MARGIN_BITS = 6.0
_EXACT_BITS = 60.0


@dataclass(frozen=True)
class PrecisionReport:
    notes: tuple[str, ...]
    flags: tuple[Flag, ...]


def agreement_bits(output: torch.Tensor, exact: torch.Tensor) -> float:
    """Leading bits of ``output`` that agree with ``exact`` in the relative L2 sense (60 when identical)."""
    out, ref = output.detach().to(torch.float64), exact.detach().to(torch.float64)
    finite = torch.isfinite(out) & torch.isfinite(ref)
    error = float(torch.linalg.vector_norm((out - ref)[finite]).item())
    scale = float(torch.linalg.vector_norm(ref[finite]).item())
    if error == 0:
        return _EXACT_BITS
    bits = -math.log2(error) if scale == 0 else -math.log2(error / scale)
    return min(max(bits, 0.0), _EXACT_BITS) + 0.0  # + 0.0: never print "-0.0"


def precision_report(outputs: list[torch.Tensor], reference: ReferenceData, settings: HarnessSettings
                     ) -> PrecisionReport:
    """Notes on the precision of the first trial's outputs, and a flag when it is below the reference's."""
    if reference.float64_outputs is None:
        return PrecisionReport((f"precision not estimated: {reference.float64_note}",), ())
    notes, flags = [], []
    for i, (out, ref32, ref64) in enumerate(zip(outputs, reference.trials[0].outputs, reference.float64_outputs)):
        nominal = MANTISSA_BITS.get(ref32.dtype)
        if nominal is None or out.shape != ref32.shape:
            continue
        theirs, ours = agreement_bits(out, ref64), agreement_bits(ref32, ref64)
        label = f"output {i}" if len(outputs) > 1 else "the output"
        dtype = str(ref32.dtype).removeprefix("torch.")
        notes.append(f"precision: {label} agrees with a float64 reference to {theirs:.1f} bits "
                     f"(the {dtype} reference: {ours:.1f} bits)")
        if theirs < min(ours, nominal) - MARGIN_BITS:
            flags.append(F.raise_flag(F.PRECISION_DOWNGRADE, (
                f"{label} agrees with float64 to {theirs:.1f} bits, the {dtype} reference to {ours:.1f}: it is "
                f"computed at lower precision than {dtype} (float16/TF32 agree to about 11 bits, bfloat16 to 8)"),
                settings))
    return PrecisionReport(tuple(notes), tuple(flags))
