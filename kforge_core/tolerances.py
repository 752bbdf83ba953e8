"""Which ``(atol, rtol)`` an output is held to: one rule, in one place.

For an output of a given dtype, the first of these that names that dtype wins:

1. the user's settings: ``[harness] tolerances`` in a config file, the environment, the command line;
2. the precision contract, for outputs it lets be computed in a narrower type (a float32 output under ``bf16``);
3. the backend's defaults (``Backend.default_tolerance``): they describe its float32 arithmetic, which a contract
   that allows narrower types already goes beyond;
4. the harness's defaults, :data:`DEFAULT_TOLERANCES`;
5. exact, ``(0, 0)``: integers and booleans.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from .precision_contract import PrecisionContract

# dtype name -> (atol, rtol)
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
}


def resolve_tolerance(dtype: str, *, user: Mapping[str, Sequence[float]], contract: PrecisionContract,
                      backend: Sequence[tuple[str, float, float]] = ()) -> tuple[float, float]:
    """``(atol, rtol)`` for an output of ``dtype`` ("float32"), by the order in this module's docstring."""
    if dtype in user:
        atol, rtol = user[dtype]
        return float(atol), float(rtol)
    by_contract = contract.tolerance_for(dtype)
    if by_contract is not None:
        return by_contract
    for name, atol, rtol in backend:
        if name == dtype:
            return atol, rtol
    return DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))


def describe_tolerances(tolerances: Sequence[tuple[str, float, float]]) -> str:
    """``"float32 outputs within atol=0.02, rtol=0.02"`` for ``(dtype, atol, rtol)`` entries, joined by "; "."""
    return "; ".join(f"{dtype} outputs within atol={atol:g}, rtol={rtol:g}" for dtype, atol, rtol in tolerances)
