"""Which ``(atol, rtol)`` an output is held to, and why: one rule, in one place.

For an output of a given dtype, each of atol and rtol comes from the first of these that sets it:

1. explicit flags: ``--atol`` / ``--rtol`` (``harness.atol`` / ``harness.rtol``), for every dtype;
2. the user's settings: ``[harness] tolerances`` in a config file, the environment, the command line;
3. the precision contract, for outputs it lets be computed in a narrower type (a float32 output under ``bf16``);
4. the backend's defaults (``Backend.default_tolerance``): they describe its float32 arithmetic, which a contract
   that allows narrower types already goes beyond;
5. the harness's defaults, :data:`DEFAULT_TOLERANCES`;
6. exact, ``(0, 0)``: integers and booleans.

A new source of tolerances is one more entry in :func:`_layers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

if TYPE_CHECKING:
    from .settings import HarnessSettings

# dtype name -> (atol, rtol)
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
}


@dataclass(frozen=True)
class Tolerance:
    """The tolerance in effect for one dtype, and where each of its two numbers came from."""

    atol: float
    rtol: float
    atol_from: str
    rtol_from: str

    @property
    def pair(self) -> tuple[float, float]:
        return self.atol, self.rtol

    def describe(self) -> str:
        origin = self.atol_from if self.atol_from == self.rtol_from else f"{self.atol_from}; rtol {self.rtol_from}"
        return f"atol={self.atol:g}, rtol={self.rtol:g} ({origin})"


# one layer: its name for people, and what it says for a dtype: (atol or None, rtol or None), or None
_Layer = tuple[str, Callable[[str], "Sequence[float | None] | None"]]


def _layers(settings: HarnessSettings, backend_name: str,
            backend_defaults: Iterable[tuple[str, float, float]]) -> list[_Layer]:
    flags = (settings.atol, settings.rtol)
    backend = {name: (atol, rtol) for name, atol, rtol in backend_defaults}
    contract = settings.contract
    return [
        ("--atol/--rtol", lambda dtype: flags if flags != (None, None) else None),
        ("[harness.tolerances]", settings.tolerances.get),
        (f"the {contract.name} precision contract", contract.tolerance_for),
        (f"the {backend_name or 'backend'} backend's default", backend.get),
        ("the harness's default", DEFAULT_TOLERANCES.get),
    ]


def tolerance_in_effect(dtype: str, settings: HarnessSettings, backend_defaults: Iterable[tuple[str, float, float]]
                        = (), backend_name: str = "") -> Tolerance:
    """The tolerance for outputs of ``dtype`` ("float32") under ``settings`` on a backend with these defaults, by
    the order in this module's docstring."""
    atol: tuple[float, str] | None = None
    rtol: tuple[float, str] | None = None
    for name, lookup in _layers(settings, backend_name, backend_defaults):
        pair = lookup(dtype)
        if pair is None:
            continue
        if atol is None and pair[0] is not None:
            atol = (float(pair[0]), name)
        if rtol is None and pair[1] is not None:
            rtol = (float(pair[1]), name)
    atol = atol or (0.0, "exact")
    rtol = rtol or (0.0, "exact")
    return Tolerance(atol[0], rtol[0], atol[1], rtol[1])


def output_tolerances(settings: HarnessSettings, dtypes: Iterable[str],
                      backend_defaults: Iterable[tuple[str, float, float]] = ()) -> tuple[tuple[str, float, float], ...]:
    """``(dtype, atol, rtol)`` for each distinct dtype of ``dtypes`` (a problem's outputs), in order: the table the
    verdict records and the prompts state."""
    backend_defaults = tuple(backend_defaults)
    return tuple((dtype, *tolerance_in_effect(dtype, settings, backend_defaults).pair)
                 for dtype in dict.fromkeys(dtypes))


def describe_tolerances(tolerances: Sequence[tuple[str, float, float]]) -> str:
    """``"float32 outputs within atol=0.02, rtol=0.02"`` for ``(dtype, atol, rtol)`` entries, joined by "; "."""
    return "; ".join(f"{dtype} outputs within atol={atol:g}, rtol={rtol:g}" for dtype, atol, rtol in tolerances)
