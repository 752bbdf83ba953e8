"""Precision contracts: what a candidate may compute in, and the tolerances its outputs are then held to.

A run, an eval or a bench names one contract (``--precision``, ``[harness] precision``); ``fp32`` is the default.
The contracts form a chain, each admitting every narrower-or-equal choice above it in :data:`CONTRACTS`:

* ``fp32``: float32 (the problem's own types). TF32, float16 and bfloat16 arithmetic are precision downgrades.
* ``tf32``: also TF32 matmuls and convolutions (10-bit mantissa, float32 range).
* ``fp16``: also float16.
* ``bf16``: also bfloat16 (8-bit mantissa).

An output whose dtype is wider than the contract's narrowest type (a float32 output under ``bf16``) is held to the
contract's tolerance and to the contract's floor of bits of agreement with a float64 reference (see
:func:`kforge_core.harness.precision.floor_bits`). Anything below the contract stays a precision downgrade.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

# mantissa bits, the implicit leading one included
MANTISSA_BITS = {"float64": 53, "float32": 24, "tf32": 11, "float16": 11, "bfloat16": 8}

# what a compute type needs, lowest first: a contract admits every type up to its own
_RANKS = {"float32": 0, "tf32": 1, "float16": 2, "bfloat16": 3}


@dataclass(frozen=True)
class PrecisionContract:
    """A named contract.

    :param name: what users type (``--precision bf16``).
    :param narrowest: the narrowest type the candidate may compute in ("float32", "tf32", "float16", "bfloat16").
    :param computes_in: the types it may compute in, for people and prompts.
    :param tolerance: ``(atol, rtol)`` for outputs wider than ``narrowest``; None for ``fp32`` (the dtype's own).
    """

    name: str
    narrowest: str
    computes_in: str
    tolerance: tuple[float, float] | None

    def __post_init__(self) -> None:
        if self.narrowest not in _RANKS:
            raise ValueError(f"PrecisionContract: unknown type {self.narrowest!r}")

    @property
    def mantissa_bits(self) -> int:
        return MANTISSA_BITS[self.narrowest]

    @property
    def mixed(self) -> bool:
        """True for every contract that allows narrower arithmetic than float32."""
        return self.narrowest != "float32"

    def permits(self, compute_type: str | None) -> bool:
        """Whether computing in ``compute_type`` ("tf32", "bfloat16", ...) is within this contract; an unknown
        type (None) never is."""
        return compute_type in _RANKS and _RANKS[compute_type] <= _RANKS[self.narrowest]

    def narrows(self, dtype: str) -> bool:
        """Whether this contract lets an output of ``dtype`` ("float32") be computed below its own precision."""
        return dtype in MANTISSA_BITS and MANTISSA_BITS[dtype] > self.mantissa_bits

    def tolerance_for(self, dtype: str) -> tuple[float, float] | None:
        """The contract's ``(atol, rtol)`` for an output of ``dtype``, or None where it says nothing."""
        return self.tolerance if self.tolerance is not None and self.narrows(dtype) else None

    def caption(self, bits: float | None = None) -> str:
        """``"bf16 contract"``, or ``"bf16 contract, 8.7 bits"`` with the precision reached: for titles."""
        reached = f", {bits:.1f} bits" if bits is not None else ""
        return f"{self.name} contract{reached}"


CONTRACTS: dict[str, PrecisionContract] = {c.name: c for c in (
    PrecisionContract("fp32", "float32", "float32", None),
    PrecisionContract("tf32", "tf32", "float32, and TF32 in matmuls and convolutions", (1e-2, 1e-2)),
    PrecisionContract("fp16", "float16", "float32, TF32 and float16", (1e-2, 1e-2)),
    PrecisionContract("bf16", "bfloat16", "float32, TF32, float16 and bfloat16", (2e-2, 2e-2)),
)}
DEFAULT = "fp32"
NAMES = tuple(CONTRACTS)


def contract_named(name: str) -> PrecisionContract:
    """The contract called ``name``; a ValueError that lists the contracts otherwise."""
    try:
        return CONTRACTS[name]
    except KeyError:
        raise ValueError(f"unknown precision contract {name!r}; use one of {', '.join(NAMES)}") from None


def mixed_contracts_note(names: Iterable[str]) -> str:
    """A sentence for listings and summaries whose figures come from more than one contract ("" when they share
    one): their speedups are not comparable with each other."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    if len(counts) < 2:
        return ""
    parts = ", ".join(f"{name}: {count}" for name, count in sorted(counts.items(), key=lambda kv: NAMES.index(kv[0])
                                                                   if kv[0] in NAMES else len(NAMES)))
    return (f"these figures were measured under different precision contracts ({parts}); compare speedups only "
            "within one contract")
