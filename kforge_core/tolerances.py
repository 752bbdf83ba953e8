"""Which ``(atol, rtol)`` an output of a given dtype is judged with, and why.

Layers, first match wins, each component (atol, rtol) on its own:

1. explicit flags: ``--atol`` / ``--rtol`` (``harness.atol`` / ``harness.rtol``), for every dtype;
2. the user's settings: ``[harness.tolerances]``, per dtype;
3. the backend's defaults: ``Backend.default_tolerance``, per dtype;
4. the harness's defaults: :data:`DEFAULT_TOLERANCES`, per dtype;
5. otherwise exact (integers, bools): ``(0, 0)``.

A new source of tolerances (a named precision contract, say) is one more entry in :func:`_layers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

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

    def describe(self) -> str:
        origin = self.atol_from if self.atol_from == self.rtol_from else f"{self.atol_from}; rtol {self.rtol_from}"
        return f"atol={self.atol:g}, rtol={self.rtol:g} ({origin})"


# one layer: its name for people, and what it says for a dtype: (atol or None, rtol or None), or None
_Layer = tuple[str, Callable[[str], "tuple[float | None, float | None] | None"]]


def _layers(settings: HarnessSettings, backend_name: str,
            backend_defaults: Iterable[tuple[str, float, float]]) -> list[_Layer]:
    flags = (settings.atol, settings.rtol)
    backend = {name: (atol, rtol) for name, atol, rtol in backend_defaults}
    return [
        ("--atol/--rtol", lambda dtype: flags if flags != (None, None) else None),
        ("[harness.tolerances]", settings.tolerances.get),
        (f"the {backend_name or 'backend'} backend's default", backend.get),
        ("the harness's default", DEFAULT_TOLERANCES.get),
    ]


def tolerance_in_effect(dtype: str, settings: HarnessSettings, backend_name: str = "",
                        backend_defaults: Iterable[tuple[str, float, float]] = ()) -> Tolerance:
    """The tolerance for outputs of ``dtype`` ("float32") under ``settings`` on a backend with these defaults."""
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
