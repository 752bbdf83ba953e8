"""The variants a problem declares: an optional ``get_input_variants()`` beside ``get_inputs()``.

It returns a list of input lists (each what ``get_inputs()`` would return at another shape), or a dict naming each;
an entry may also be a function returning its list, so that only the variant in use is made. An optional
``INPUT_VARIANT_WEIGHTS`` dict gives each variant's share of the passes a model serves (``get_inputs`` names the
problem's own shape), for a problem extracted from a model.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

GETTER = "get_input_variants"
WEIGHTS = "INPUT_VARIANT_WEIGHTS"
OWN = "get_inputs"  # the problem's own shape, in INPUT_VARIANT_WEIGHTS


class DeclaredVariantsError(ValueError):
    """``get_input_variants()`` or its weights are not what they should be; the message says what and where."""


def declares_variants(module: ModuleType) -> bool:
    return callable(getattr(module, GETTER, None))


def declared_entries(module: ModuleType) -> dict[str, Callable[[], list[Any]]]:
    """Each declared variant's name and a function making its inputs (under the torch seed and device in force)."""
    try:
        found = getattr(module, GETTER)()
    except Exception as exc:
        raise DeclaredVariantsError(f"{GETTER}() raised {type(exc).__name__}: {exc}") from None
    if isinstance(found, dict):
        items = [(str(name), entry) for name, entry in found.items()]
    elif isinstance(found, (list, tuple)):
        items = [(f"declared {index}", entry) for index, entry in enumerate(found)]
    else:
        raise DeclaredVariantsError(f"{GETTER}() returned {type(found).__name__}, expected a list of input lists "
                                    "or a dict of them")
    entries = {}
    for name, entry in items:
        if not (callable(entry) or isinstance(entry, (list, tuple))):
            raise DeclaredVariantsError(f"{GETTER}() entry {name!r} is a {type(entry).__name__}, expected a list "
                                        "of inputs (or a function returning one)")
        entries[name] = _maker(name, entry)
    return entries


def declared_inputs(module: ModuleType, name: str) -> list[Any]:
    """The inputs of the declared variant ``name``, made now."""
    entries = declared_entries(module)
    if name not in entries:
        raise DeclaredVariantsError(f"{GETTER}() has no variant {name!r} (it has {', '.join(entries) or 'none'})")
    return entries[name]()


def declared_weights(module: ModuleType, names: list[str]) -> tuple[float, dict[str, float]]:
    """The problem's own shape's weight and each variant's (0 where none is stated)."""
    weights = getattr(module, WEIGHTS, None)
    if weights is None:
        return 0.0, {}
    if not isinstance(weights, dict) or not all(isinstance(w, (int, float)) and w >= 0 for w in weights.values()):
        raise DeclaredVariantsError(f"{WEIGHTS} must be a dict of variant names to weights >= 0")
    unknown = sorted(set(weights) - {OWN, *names})
    if unknown:
        raise DeclaredVariantsError(f"{WEIGHTS} names {', '.join(map(repr, unknown))}, which {GETTER}() does not "
                                    f"(its variants: {', '.join(names)}; {OWN!r} is the problem's own shape)")
    return float(weights.get(OWN, 0.0)), {name: float(w) for name, w in weights.items() if name != OWN}


def _maker(name: str, entry: Any) -> Callable[[], list[Any]]:
    def make() -> list[Any]:
        values = entry() if callable(entry) else entry
        if not isinstance(values, (list, tuple)):
            raise DeclaredVariantsError(f"{GETTER}() entry {name!r} made a {type(values).__name__}, expected a list")
        return list(values)

    return make
